"""A suite checked in full against what it names (issue 27): every intent is a program this template can hold,
and ``observation.set`` reaches a field of every template's rig. :func:`~simready.scenario.suite.load_suite`
checks the file alone (schema, bounds, templates exist, intents exist); this checks it against the templates,
the catalog and the rigs, in about a second, so that ``simready status`` and ``simready run`` refuse such a suite
in one line before any work instead of a stage failing at materialization.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from simready.catalog.catalog import ensure_catalog
from simready.common import paths
from simready.common.errors import SimreadyError
from simready.scenario.suite import Suite, SuiteError, check_intents, load_suite

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


def check_suite(path: str | Path | None = None, templates_dir: str | Path = paths.TEMPLATES_DIR,
                catalog: Catalog | None = None) -> Suite:
    """The suite at ``path`` (default: the one the DAG materializes), loaded and checked in full.

    Raises:
        SuiteError: one line naming the suite file and the field: an intent the template lacks what it needs for
            (``templates.<template>.<intent>``), an ``observation.set`` key that reaches no field of a template's
            rig or a value the field refuses (``observation.set``).
    """
    # Imported here: the programs and the rig models are what loading the suite alone never needs.
    from simready.scenario.generator import make_context
    from simready.sensors_hw.atmosphere import Atmosphere, apply_atmosphere_overrides, split_overrides
    from simready.sensors_hw.models import apply_overrides, parse_set_args
    from simready.sensors_hw.scene_build import rig_from_sensor_rig, template_rig_data
    from simready.world.template import load_template

    path = Path(path) if path else paths.SUITE_FILE
    suite = load_suite(path, templates_dir)
    check_intents(suite, path, templates_dir)  # the feasibility line of the first affordance a template lacks
    try:
        overrides = parse_set_args(suite.observation.set)
    except SimreadyError as exc:
        raise SuiteError(path, "observation.set", exc.one_line()) from None
    rig_over, atmo_over = split_overrides(overrides)
    try:
        apply_atmosphere_overrides(Atmosphere.from_environment(None), atmo_over)
    except SimreadyError as exc:
        raise SuiteError(path, "observation.set", exc.one_line()) from None
    catalog = catalog if catalog is not None else ensure_catalog()
    for template_id, intents in sorted(suite.templates.items()):
        template = load_template(Path(templates_dir) / f"{template_id}.yaml")
        try:
            apply_overrides(rig_from_sensor_rig(template_rig_data(template), source="template"), rig_over)
        except SimreadyError as exc:
            raise SuiteError(path, "observation.set", f"template {template_id}'s rig: {exc.one_line()}") from None
        for intent in sorted(intents):
            try:
                make_context(template, intent, catalog=catalog)
            except SimreadyError as exc:
                raise SuiteError(path, f"templates.{template_id}.{intent}", exc.reason) from None
    return suite
