"""``EAGER``: the automation condition of every asset below the world stage, defined once.

The sensors and the schedule that act on it are in ``orchestration.py``.
"""

import dagster as dg

from simready.assets.inputs import INPUTS


def _eager_on_data_version() -> dg.AutomationCondition:
    """``AutomationCondition.eager()``, but a parent counts as updated only when its *data version* changed.

    Why: the stock condition fires on any new parent materialization. A rig-only
    template edit rematerializes ``world_templates`` with the same data version
    (the world did not change) — with the stock condition the manifests,
    trajectories and branches would all be recomputed, byte for byte, for
    nothing. Here they stay put and only what reads the changed version (the
    rig → observations) is requested, which is also what ``simready status``
    reports as stale.

    The input files (``inputs.py``) are left out of both the update and the missing test:
    ``source_files_sensor`` requests what a changed template or contract feeds, and an input never observed
    (a fresh instance) blocks nothing.
    """
    AC = dg.AutomationCondition
    inputs = dg.AssetSelection.assets(*INPUTS)
    changed = AC.any_deps_match(
        (AC.data_version_changed() & ~AC.executed_with_root_target()).with_label("data_version_changed_without_root")
        | AC.will_be_requested()
    ).ignore(inputs).with_label("any_deps_data_version_changed")
    return (
        AC.in_latest_time_window()
        & (AC.newly_missing() | changed).since_last_handled()
        & ~AC.any_deps_missing().ignore(inputs)
        & ~AC.any_deps_in_progress()
        & ~AC.in_progress()
    ).with_label("eager_on_data_version")


EAGER = _eager_on_data_version()
