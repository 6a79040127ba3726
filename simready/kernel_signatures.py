"""The numba kernels a run calls from Python and the argument types it calls them with: the table
:mod:`simready.kernel_cache` compiles ahead of a run's forks (and :data:`TEST_KERNELS`, those only the tests
call, compiled at install). Data only; ``python -m simready.kernel_cache --missing`` prints what a run compiled
that the table lacks, and ``tests/test_kernel_cache.py`` fails when a
``cache=True`` kernel is neither listed, called by a listed one, nor in :data:`NOT_IN_RUN`.

An argument's type is written as a dtype code (numpy's: ``b1`` bool, ``i8``, ``u2``, ``f4``, ``f8`` …) for a
scalar, ``code[N]`` for an N-dimensional C-contiguous array, ``code[NA]`` for any layout, with a trailing ``r``
for a read-only array (numba compiles each of those separately).
"""

from __future__ import annotations

#: The kernels a run calls from Python, by group: module -> kernel -> signatures (argument types, space
#: separated, in the notation above). A group's modules are compiled by one process; the first
#: module's cache folder holds the group's lock.
KERNELS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "sim": {
        "simready.sim.core.tick_kernels": {
            "step_paths": (
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1] f8[1] f8[1]r i8[1] f8[2] f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] "
                 "f8[1] f8[1] f8 f8 f8 f8 f8 f8 f8 b1[1] f8[1] i8 f8[1] f8[1] f8[1] i8[1] f8[1] f8[1] f8[1] "
                 "f8[1] i8[2]"),
                ("f8[1] f8[1] f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1]r "
                 "f8[1]r f8[1] i8[1] f8[2] f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] f8[1] "
                 "f8[1] f8 f8 f8 f8 f8 f8 f8 b1[1] f8[1] i8 f8[1] f8[1] f8[1] i8[1] f8[1] f8[1] f8[1] f8[1] "
                 "i8[2]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1]r f8[1]r f8[1]r i8[1] f8[2] f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] "
                 "f8[1] f8[1] f8 f8 f8 f8 f8 f8 f8 b1[1] f8[1] i8 f8[1] f8[1] f8[1] i8[1] f8[1] f8[1] f8[1] "
                 "f8[1] i8[2]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1] f8[1] f8[1] i8[1] f8[2] f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] "
                 "f8[1] f8[1] f8 f8 f8 f8 f8 f8 f8 b1[1] f8[1] i8 f8[1] f8[1] f8[1] i8[1] f8[1] f8[1] f8[1] "
                 "f8[1] i8[2]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1] f8[1]r f8[1]r i8[1] f8[2] f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] "
                 "f8[1] f8[1] f8 f8 f8 f8 f8 f8 f8 b1[1] f8[1] i8 f8[1] f8[1] f8[1] i8[1] f8[1] f8[1] f8[1] "
                 "f8[1] i8[2]"),
            ),
            "run_ticks": (
                ("i8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1[1] f8[3] i8[1] f8[1] i8[1] f8[1] f8[2] f8[3] i8[1] "
                 "f8[1] i8[1] i8[2] f8[1] f8[1] f8[2] i8[1] i8[2] f8[2] i8[2] i1[2] f8[1] i8[1] i8[1] f8[2] "
                 "f8[2] f8[1] f8[1] f8[2]r i8[1] f8[2] f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] f8[1] f8[1] b1[1] "
                 "i8 b1[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] f8[2] f8[3] i8[1] b1[1] b1[1] b1[1] b1[1] f8[1] "
                 "b1[1] f8[2] f8[2] i8[1] f8[1] i8[1] f8[1] f8[1] i8[1] f8[2] b1[1] f8[2] f8[1] f8[1] f8[1] f8[1] "
                 "f8[1] i8[2] f8[1] f8[1] f8[2] b1[1] i8[2] f8[3] f8[2] i8[2] f8[2] f8[2] f8[1]"),
            ),
            "ticks_scratch": (
                "i8",
            ),
        },
        "simready.sim.core.kernels": {
            "place_on_paths": (
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1] f8[1] f8[1] f8[1] f8[2]",
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1] f8[1] f8[1]r f8[1] f8[2]",
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1] f8[1]r f8[1]r f8[1] f8[2]",
            ),
            "pack_bodies": (
                "f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1 f8[1] f8[1]",
                "f8[2] f8[1] f8[1] f8[1]r f8[1]r f8[1] f8[1] b1 f8[1] f8[1]",
            ),
            "walk_heights": (
                "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1] f8[1] b1[1] f8[1]",
                "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] b1[1]r f8[1]",
            ),
            "contact_pairs": (
                "f8[2] f8[1] b1[1] f8[2] f8[1]r f8[1]r i8[2]",
                "f8[2] f8[1] b1[1]r f8[2] f8[1]r f8[1]r i8[2]",
            ),
            "advance_place_lanes": (
                ("f8[1] f8[1] f8[1] b1[1] f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1] "
                 "f8[1] i8[1] f8[2] f8[1] f8[1] f8[1] f8[2] i8[1] f8[1]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1] f8[1] i8[1] f8[2] f8[1] f8[1] f8[1] f8[2] i8[1] f8[1]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1] f8[1]r i8[1] f8[2] f8[1] f8[1] f8[1] f8[2] i8[1] f8[1]"),
                ("f8[1]r f8[1]r f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 "
                 "f8[1]r f8[1]r i8[1] f8[2] f8[1] f8[1] f8[1] f8[2] i8[1] f8[1]"),
            ),
            "pack_step_walk": (
                ("f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1 b1[1] f8[2] f8[2] f8[1] f8[2] f8[1]r f8[1]r "
                 "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1] f8[1] f8[1] i8[2]"),
                ("f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r "
                 "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2]"),
                ("f8[2] f8[1] f8[1] f8[1]r f8[1]r f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r "
                 "f8[1]r i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2]"),
            ),
            "pack_step_walk_ok": (
                ("f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1 b1[1] f8[2] f8[2] f8[1] f8[2] f8[1]r f8[1]r "
                 "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1] f8[1] f8[1] i8[2] f8 f8 f8 f8 f8 f8 b1[1] f8[1]"),
                ("f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r "
                 "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2] f8 f8 f8 f8 f8 f8 b1[1] f8[1]"),
                ("f8[2] f8[1] f8[1] f8[1]r f8[1]r f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r "
                 "f8[1]r i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2] f8 f8 f8 f8 f8 f8 b1[1] "
                 "f8[1]"),
            ),
            "state_ok": (
                "f8[2]r f8[2]r f8[2]r f8[2]r b1[1]r f8 b1 f8 f8 f8 f8 f8",
            ),
            "lanes_at": (
                "f8[1] i8[1] i8[1] i8[1] f8[2] f8[1] i8[1] f8[1]",
                "f8[1] i8[1] i8[1] i8[1] f8[2] f8[1]r i8[1] f8[1]",
            ),
            "project_near": (
                "f8[1] i8[1] i8[1] f8[2] f8[2] i8[1] f8[1] f8[1] f8[1] i8 f8[1] f8[1]",
            ),
            "swept_pairs": (
                "f8[2] f8[2] f8[1] f8[1]r f8[1]r f8[2] f8[2] f8[1] f8[1] f8[1] f8 f8[1] f8[1]",
                "f8[2] f8[2] f8[1]r f8[1]r f8[1]r f8[2]r f8[2]r f8[1]r f8[1] f8[1] f8 f8[1] f8[1]",
            ),
        },
        "simready.sim.core.record_kernels": {
            "record_row": (
                ("i8 f8[2] f8[2] f8[2] f8[2] b1[1] i8[1] f8[1] f8[1] b1[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] "
                 "f8[2]"),
                ("i8 f8[2]r f8[2]r f8[2]r f8[2]r b1[1]r i8[1]r f8[1]r f8[1]r b1[1] f8[3] f8[3] f8[3] f8[3] "
                 "b1[2] i8[2] f8[2]"),
            ),
            "record_row_x5": (
                ("i8 f8[2]r f8[2]r f8[2]r f8[2]r b1[1]r i8[1]r f8[1]r f8[1]r b1[1] f8[1]r f8[1] f8[1] f8[1]r "
                 "f8[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] f8[2] f8[3]"),
            ),
            "record_row_x6": (
                ("i8 f8[2]r f8[2]r f8[2]r f8[2]r b1[1]r i8[1]r f8[1]r f8[1]r b1[1] f8[1]r f8[1] f8[1] f8[1] f8[1] "
                 "f8[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] f8[2] f8[3]"),
            ),
        },
        "simready.sim.core.planner_kernels": {
            "accelerations": (
                ("f8[2] f8[2] f8[1] f8[1] b1[1] i8[1] f8[1] f8[2] i8[1] i8[2] f8[2A] f8[1] f8[2] i8[2] i1[1] "
                 "f8 f8 f8 f8 f8 f8 f8 f8[1] f8[1]"),
                ("f8[2] f8[2] f8[1]r f8[1]r b1[1]r i8[1]r f8[1]r f8[2] i8[1] i8[2] f8[2A]r f8[1]r f8[2] i8[2] "
                 "i1[1]r f8 f8 f8 f8 f8 f8 f8 f8[1] f8[1]"),
            ),
            "lane_gaps": (
                "i8[1] f8[1] f8[1] b1[1] b1[1] f8[2] f8[1]r f8[2] i8[1] f8[2] b1[1] f8",
                "i8[1]r f8[1]r f8[1]r b1[1]r b1[1]r f8[2] f8[1]r f8[2] i8[1] f8[2] b1[1]r f8",
            ),
            "sight_lines": (
                "f8[2A] f8[1] f8[1]r f8[1]r b1[1] b1[1] f8[2] f8[2] i8[1] i8[1] f8 b1[1]",
                "f8[2A] f8[1] f8[1]r f8[1]r b1[1] b1[1]r f8[2] f8[2] i8[1] i8[1] f8 b1[1]",
                "f8[2A]r f8[1]r f8[1]r f8[1]r b1[1]r b1[1]r f8[2] f8[2] i8[1] i8[1] f8 b1[1]",
            ),
            "sight_rows": (
                "f8[3] f8[2] f8[1]r f8[1]r b1[2] b1[1]r f8[2] f8[2] i8[1] i8[1] f8 b1[2]",
            ),
            "corridor_pedestrians": (
                ("f8[2A] f8[2A] f8[1] f8[1] b1[1] b1[1] b1[1] b1[1] b1[1] f8[1]r f8[1]r f8[1] b1[1] f8[2] "
                 "f8[2] f8 f8 f8 f8 i8[2]"),
                ("f8[2A]r f8[2A]r f8[1] f8[1]r b1[1]r b1[1]r b1[1]r b1[1]r b1[1]r f8[1]r f8[1]r f8[1] b1[1]r "
                 "f8[2] f8[2] f8 f8 f8 f8 i8[2]"),
                ("f8[2A]r f8[2A]r f8[1]r f8[1]r b1[1]r b1[1]r b1[1]r b1[1]r b1[1]r f8[1]r f8[1]r f8[1] b1[1]r "
                 "f8[2] f8[2] f8 f8 f8 f8 i8[2]"),
            ),
        },
        "simready.sim.backends.dynamic.kernels": {
            "finish_rows": (
                ("f8[2] f8[2] f8[2] f8[3] i8[1] i8[1] f8[2]r f8[2]r f8[1]r f8[1]r f8[1]r f8[1] i8[1] i8[1] "
                 "f8[2] f8[2] i8 f8[2] f8[2] f8[2] f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] b1[1]r f8[2] f8[1]r "
                 "f8[1]r i8[2] f8 f8 f8 f8 f8 f8 b1[1] f8[1]"),
            ),
            "agent_drive_rows": (
                ("i8[1] b1[1] b1[1]r f8[1] f8[2]r f8[2]r f8[2]r f8[2]r f8[2]r f8[2]r f8[2]r f8[1] f8[1]r f8[1] "
                 "f8[1] f8[1] f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8[2]"),
            ),
            "body_frames": (
                "f8[2] f8[2] f8[2]",
            ),
            "body_rows": (
                "f8[2] f8[2] f8[2] f8[3] f8[2]",
            ),
            "ground_under": (
                "f8[2]r f8 f8 f8 f8[2]r i8[1] f8[1]",
            ),
            "check_flags": (
                "f8[1] f8[1] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8 f8 f8 f8 f8 f8",
                "f8[1] f8[1] f8[2] f8[1] f8[1] f8[2] f8 f8 f8 f8 f8 f8 f8 f8 f8",
            ),
            "place_rows": (
                ("f8[2] i8[1] i8[1] f8[2]r f8[2]r f8[1]r f8[1]r f8[1]r f8[1] i8[1] i8[1] f8[2] f8[2] i8 f8[2] f8[2] f8[2] "
                 "f8[2] f8[1] f8[1] f8[1] f8[1] f8[1]"),
            ),
        },
        "simready.sim.backends.dynamic.capi": {
            "tick_step": (
                ("i8 i8 f8 i8 i8[1] i8 i8 b1 f8 f8 f8[1] f8[1] f8[1] f8[1] f8[1] i8[1] i8[1] f8[2] f8[2] f8 "
                 "f8[1] f8 f8 i8[1] f8[2] f8[2] f8 f8 f8 i8[1] b1[1] b1[1] f8[1] f8[2] f8[2] f8[2] f8[2] f8[2] "
                 "f8[2] f8[2] f8[1] f8[1] f8[1] f8[1] f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8[2] b1[1] b1 f8[2] f8[2] "
                 "i8 f8[3] f8[3] f8[1]"),
                ("i8 i8 f8 i8 i8[1] i8 i8 b1 f8 f8 f8[1] f8[1]r f8[1]r f8[1]r f8[1] i8[1] i8[1] f8[2] f8[2] f8 "
                 "f8[1] f8 f8 i8[1] f8[2] f8[2]r f8 f8 f8 i8[1] b1[1] b1[1]r f8[1] f8[2]r f8[2]r f8[2]r f8[2]r "
                 "f8[2]r f8[2]r f8[2]r f8[1] f8[1]r f8[1] f8[1] f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8[2] b1[1] b1 "
                 "f8[2] f8[2] i8 f8[3] f8[3] f8[1]"),
                ("i8 i8 f8 i8 i8[1] i8 i8 b1 f8 f8 f8[1] f8[1]r f8[1] f8[1]r f8[1] i8[1] i8[1] f8[2] f8[2] f8 "
                 "f8[1] f8 f8 i8[1] f8[2] f8[2]r f8 f8 f8 i8[1] b1[1] b1[1]r f8[1] f8[2]r f8[2]r f8[2]r f8[2]r "
                 "f8[2]r f8[2]r f8[2]r f8[1] f8[1]r f8[1] f8[1] f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8[2] b1[1] b1 "
                 "f8[2] f8[2] i8 f8[3] f8[3] f8[1]"),
            ),
            "contact_points": (
                "i8 i1[1] f8[2]",
            ),
            "tick_substeps": (
                "i8 i8 f8 i8 i8[1] f8[2] i8 f8 f8 f8[1] f8 f8 i8[1] f8[2]",
            ),
            "base_quats": (
                "f8[2] f8[2] b1[1]",
            ),
            "ego_energy": (
                "i8 i8 f8 f8 f8 f8 f8 i8 i8[1]",
            ),
            "lever_arms": (
                "i8 f8[2] f8[3] f8[3]",
            ),
            "_pow_rows": (
                "i8 f8[1] f8 f8[1]",
            ),
        },
        "simready.sim.backends.dynamic.ticks": {
            "run_dynamic_ticks": (
                ("i8[1] f8[1] f8[1] f8[1] f8[1] f8[1] b1[1] f8[3] i8[1] f8[1] i8[1] f8[1] f8[2] f8[3] i8[1] "
                 "f8[1] i8[1] i8[2] f8[1] f8[1] f8[2] i8[1] i8[2] f8[2] i8[2] i1[2] f8[1] i8[1] i8[1] f8[2] "
                 "f8[2] f8[1] f8[1] f8[2]r i8[1] f8[2] f8[2] f8[1]r f8[1]r i8[1] i8[1] f8[1] f8[1] f8[1] b1[1] "
                 "i8 b1[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] f8[2] f8[3] i8[1] b1[1] b1[1] b1[1] b1[1] f8[1] "
                 "b1[1] f8[2] f8[2] i8[1] f8[1] i8[1] f8[1] f8[1] i8[1] f8[2] b1[1] f8[2] i8[1] f8[1] f8[1] "
                 "b1[1] i8[1] f8[1] i8[1] i8[1] b1[1] b1[1]r f8[1] f8[1] f8[2] f8[2] f8[2] b1[1] f8[3] i8[1] "
                 "i8[1] i1[1] f8[2] b1[1] f8[1] i8[1] f8[2] i8[1] i8[1] f8[3] f8[2] b1[1] i8[1] i8[1] f8[1] f8[2] "
                 "f8[2] f8[2] f8[3] f8[1]"),
            ),
        },
    },
    "raycast": {
        "simready.raycast.kernels": {
            "hit_points": (
                "i8[1] f8[2] f8[2] b1 f8[1]",
            ),
            "swept_box": (
                "f8[3] b1[1] f8[2] f8[2] f8[1] f8[1] f8[1] f8 f8 f8",
            ),
            "swept_boxes": (
                "i8[1] f8[3] b1[1] f8[2] f8[2] f8[1] f8[2] f8[2] f8[1] f8 f8",
            ),
            "mover_hits": (
                "i8[1] i4[1] f4[1] f4[1] f4[1] f4[2] f4[2] i8 i4[1] i4[1] f4[1] f4[1] f4[1] f4[1] b1[1] f8[1] f4[1]r",
                "i8[1] i4[1] f4[1] f4[1] f4[1] f4[2] f4[2] i8 i4[1] i4[1] f4[1] f4[1] f4[1] f4[1] b1[1] f8[1] f4[1]",
            ),
            "refine_static": (
                "i8[1] i8[1] f4[2] f4[2] b1 f8[1] f8[2] f8[2] f8[2] f8[2] f8[1] f8[2] b1[1] b1 b1 b1",
                "i8[1] i8[1] f4[2]r f4[2] b1 f8[1] f8[2] f8[2] f8[2] f8[2] f8[1] f8[2] b1[1] b1 b1 b1",
                "i8[1] i8[1] f8[2] f8[2] b1 f8[1] f8[2] f8[2] f8[2] f8[2] f8[1] f8[2] b1[1] b1 b1 b1",
                "i8[1] i8[1] f8[2]r f8[2] b1 f8[1] f8[2] f8[2] f8[2] f8[2] f8[1] f8[2] b1[1] b1 b1 b1",
            ),
            "body_tables": (
                "i4[1] i4[1] i8[1] u4[1] u2[1] f4[2] b1 b1[1]",
            ),
            "start_points": (
                "f4[2] f4[2] f4[1]",
            ),
            "hit_distances": (
                "i4[1] f4[1] f4[1] f4[1]",
                "i4[1] f4[1] f4[1]r f4[1]",
            ),
            "sensor_rays": (
                "f4[3]r f8[3] f8[1] f4[1] b1",
                "f4[3]r f8[3] f8[1] f4[1]r b1",
            ),
            "spin_rays_into": (
                "f8[1]r f8[1]r f8[1]r f8[1]r f8[3] f4[1] f4[2] f4[2]",
            ),
            "spin_cast_static": (
                ("i8 i8 i4[1] f4[1] u4[1] f8[1]r f8[1]r f8[1]r f8[1]r f8[3] f4 f4 i4[1] b1 f4[2] f4[2] i4[1] i4[1] "
                 "f4[1] f4[1] f4[1] f4[1]"),
            ),
            "intersect_rows": (
                "i8 i8 i4[1] f4[1] u4[1] f4[2] f4[2] f4[1] f4[2] i4[2]",
            ),
            "cast_static_rows": (
                "i8 i8 i4[1] f4[1] u4[1] f4[2] f4[2] f4[1] i4[1] b1 f4[1] b1 i4[1] i4[1] f4[1] f4[1] f4[1] b1[1] f8[1]",
                "i8 i8 i4[1] f4[1] u4[1] f4[2] f4[2] f4[1] i4[1] b1 f4[1]r b1 i4[1] i4[1] f4[1] f4[1] f4[1] b1[1] f8[1]",
            ),
            "static_hits": (
                "i4[1] i4[1] f4[2] f4[2] b1 f4[1] f4[1]r b1",
                "i4[1] i4[1] f4[2] f4[2] b1 f4[1] f4[1] b1",
            ),
            "tfar_distances": (
                "i4[1] f4[1] f4[1]",
            ),
            "rays_to_body": (
                "i8[1] f4[2] f4[2A]r b1 f8[3] i8[1]",
                "i8[1] f4[2] f4[2] b1 f8[3] i8[1]",
                "i8[1] f4[2]r f4[2] b1 f8[3] i8[1]",
                "i8[1] f8[2]r f8[2] b1 f8[3] i8[1]",
            ),
            "rotate_normals": (
                "f8[2] i8[1] f8[3] i8[1]",
            ),
            "unique_sorted": (
                "f8[1]",
            ),
            "slab_select": (
                "f4[2] f4[2A]r i8[1] b1 f8[1] f8[1] f4[1]",
                "f4[2] f4[2] i8[1] b1 f8[1] f8[1] f4[1]",
            ),
            "positions_in": (
                "i8[1] i8[1]",
            ),
            "direction_grid": (
                "f8[2] f8[2] f8[1] f8[1] i8",
            ),
            "static_box_shapes": (
                "f8[2] i8[1] i8[2] i8[1]",
            ),
            "direction_candidates": (
                "f4[2] f8[1] f8 f8[1] f8[1] f8 f8 f8 i8 i8[1] i4[1] f8[2] f8[2] f8 b1[1] f8[2] f8[2] f8 b1[1] i8[1] f4[2]",
            ),
        },
    },
    "truth": {
        "simready.truth.kernels.projection": {
            "settle_rows": (
                "f8[2] i8[1] f8[3] b1[2] f8[2] f8[2] b1[1] i8[1] f8[2] f8 f8 i8 b1 i8",
            ),
            "pixels_and_flags": (
                "f8[2] f8 f8 f8 f8 i8 i8 f8 f8",
            ),
        },
        "simready.truth.kernels.motion_field": {
            "image_velocity": (
                "i8[1] f8[2] f8[2] f8[2] i8[1] f8[2] f8 f8 f8",
            ),
        },
        "simready.truth.kernels.samples": {
            "surface_samples": (
                ("i8[1] i4[1] b1[1] i8[1] f4[2]r f4[2] b1 f8[1] b1[1] f4[1] f4[1] f8[2] f8[2] f8[2] f8[2]r f8[1]r "
                 "i4[1] i8 f8[1] u4[1] i4[2] f8 f8[2]"),
            ),
        },
        "simready.truth.kernels.flow": {
            "flow_of_samples": (
                ("f8[2] i8[1] b1[1] f8[3] b1[2] f8[2] f8[2] i8[1] i8[1] f8[1] f8 f8 f8 f8 f8 i8 i8 f8 f8 b1 i8 "
                 "i8[1] i4[1] i4[1] i4[1] f8[1] f8 f8 f8 f8[1] i4[1] i8[1] f8[2] f8[2] f8[2]"),
            ),
        },
        "simready.truth.kernels.tables": {
            "quantized32": (
                "f8[1] f8",
            ),
            "surface_columns": (
                "i8[1] i4[1] f8[2] f8[2] u4[1] i4[2] f8",
            ),
            "step_differences": (
                "f4[1]r f8 i4[1]",
            ),
        },
        "simready.truth.kernels.tracks": {
            "body_pixel_boxes": (
                "i8[1] i4[1] i8 i8 i8",
            ),
        },
    },
    "camera": {
        "simready.sensors_hw.camera_kernels": {
            "spans": (
                "i8[1] i8[1]",
            ),
            "projection_candidates": (
                "f8[2] f8[2] f8[2] f8[2] f8[1] f8[1] f8[1] f8 f8 f8 f8 f8 i8",
            ),
            "encode_srgb": (
                "f4[2] i4[1] i8 i8 f4[2] u1[1] f4",
            ),
            "z_depth": (
                "f4[2] f8[2] i8 f8[1]",
            ),
            "refine_z_depth": (
                "i8[1] i8[1] f4[2] f4[2] f8[1] f8[2] f8[1] b1[1] f8[2] i8",
            ),
            "sun_setup": (
                "f4[2] i8[1] i8[1] f4[2] f4[2] f4[2] f8[1] b1[1] f4[1] f4 f8[1] i8 f4[2] f4[1] f4[1] i8[1] f4[2] f8[1]",
            ),
            "radiance": (
                "f4[2] i4[1] f4[2] b1[1] f4[1] i8[1] b1[1] f4[1] f4[1] f4[1] f4[1] b1 f4 b1 f4[1]r",
            ),
            "headlight_irradiance": (
                "f4[2]r f4[2] f8[1] b1[1] f4[2] f4[1] i8[1] i8 f4[3] f4[2] f4 f4 f4 f4[1]",
            ),
            "png_scanlines": (
                "u1[2]",
            ),
            "id_scanlines": (
                "u4[2]",
            ),
            "semantic_scanlines": (
                "u2[2] i8 i8",
            ),
            "depth_raw": (
                "f4[1] f8",
            ),
            "undistort": (
                "f8[2] f8 f8 i8",
            ),
        },
    },
    "lidar": {
        "simready.sensors_hw.lidar_kernels": {
            "pcg64_draws": (
                "u8[1] f4[1] f4[1]",
            ),
            "returns": (
                ("i4[1] f4[1] f4[1] f4[1] f4[1] f4[1] f4 b1 b1[1] f4 f4 f8[1] f8[1] f8[1] u4[1] f4[1] u4[1] f8[1] i8[1] "
                 "u8[1]"),
                ("i4[1] f4[1] f4[1] f4[1] f4[1] f4[1] f4 b1 b1[1] f4 f4 f4[1] f8[1] f8[1] u4[1] f4[1] u4[1] f8[1] i8[1] "
                 "u8[1]"),
            ),
            "beam_points": (
                "i8[1] f8[1] f8[1]r f8[1]r f8[1]r f8[1]r",
            ),
            "azimuth_beams": (
                "f8[2] f8[2] f8[2] f8[1] f8[1] f8[1]r f8 i8 f8[1] f8[1]",
            ),
            "column_axes": (
                "f8[3]",
            ),
            "mount_poses": (
                "f8[3] f8[2]",
            ),
            "planar_mount_poses": (
                "f8[2] f8[1] f8[1] f8[1] f8[1] f8[2]",
            ),
            "fixed_point_parts": (
                "f8[1] f8 i8[1] b1[1] i8[1]",
                "f4[1] f8 i8[1] b1[1] i8[1]",
            ),
            "ascii_row_bytes": (
                "i8[2] i8[1]",
            ),
            "ascii_rows": (
                "i8[2] b1[2] i8[1] u1[1] i8",
            ),
            "ascii_table": (
                "u1[1]r i8 i8",
            ),
        },
        "simready.measurement.review_kernels": {
            "dots": (
                "u1[3] i8[1] i8[1] u1[2] i8",
            ),
            "ramp": (
                "f8[1] f8[2]r u1[2]",
            ),
            "height_dots": (
                "u1[3] f8[2] f8 f8 f8 f8 i8",
            ),
        },
    },
    "motion": {
        "simready.world.motion_kernels": {
            "planar_hermites": (
                "f8[1] f8[1]r f8[2]r b1[1]r f8 i8 i8 i8",
            ),
            "planar_quaternions": (
                "f8[1] f8[1] f8[1] f8[1]",
            ),
            "pose_matrices": (
                "f8[2] f8[2]",
            ),
            "planar_window_samples": (
                "f8[1] f8 f8 i8[1] f8[1] i8[1] f8[2] i8[1] b1[1] f8 i8 i8 i8",
            ),
            "planar_poses": (
                "f8[2] f8[1] f8[1] f8[1] f8[1]",
            ),
            "spatial_hermites": (
                "f8[1] f8[1]r f8[2]r b1[1]r f8 i8 i8 f8 b1",
            ),
            "spatial_rotations": (
                "i8[1] f8[2]r i8 f8[2] f8[1] f8[1] f8[1] f8[1] f8 f8[2] f8[1] f8[1]",
            ),
        },
    },
    "review": {
        "simready.review.camera_kernels": {
            "place_points": (
                "f8[2] i8[1] f8[2]",
            ),
            "body_points": (
                "f8[2] i8[1] f8[2] i8[1]",
            ),
            "moved_points": (
                "f8[2] i8[1] f8[2] f8[2]",
            ),
            "frame_points": (
                "f8[2] f8[2] i8 i8 f8 f8 f8 f8 f8 f8 f8 f8 f8 i8 i8 f8",
            ),
            "project_points": (
                "f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8 i8 i8 f8[2] f8[1]",
            ),
            "box_points": (
                "f8[2] i8 f8[2] f8[2] f8 i8[2] f8 f8",
            ),
            "cloud_cells": (
                "f8[2] f8 f8 f8 i8 i8 f8 f8 f8",
            ),
            "members": (
                "u4[1] i8[1]",
            ),
        },
        "simready.validity.lidar_kernels": {
            "instance_centroids": (
                "f8[2] i8[1] i8[1]",
            ),
        },
    },
}

#: The argument types only the test suite calls kernels with, on top of :data:`KERNELS` (same groups): the tests
#: pass read-only or non-contiguous arrays a run never does and call the kernels of :data:`NOT_IN_RUN` directly.
#: ``make install`` compiles them too (``python -m simready.kernel_cache --tests``), so that a fresh clone's
#: ``make test`` does not compile them inside its workers, each worker the ones it meets first. ``python -m
#: simready.kernel_cache --missing --tests`` after a test run lists what this table and :data:`KERNELS` lack.
TEST_KERNELS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "sim": {
        "simready.sim.core.kernels": {
            "place_on_paths": (
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1]r f8[1]r f8[1] f8[1] f8[2]",
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1]r f8[1]r f8[1]r f8[1]r f8[2]",
                "f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1]r f8[1] f8[1] f8[1] f8[2]",
            ),
            "pack_bodies": (
                "f8[2] f8[1] f8[1] f8[1] f8[1]r f8[1] f8[1] b1 f8[1] f8[1]",
                "f8[2] f8[1] f8[1] f8[1]r f8[1] f8[1]r f8[1]r b1 f8[1] f8[1]",
                "f8[2] f8[1] f8[1] f8[1]r f8[1] f8[1] f8[1] b1 f8[1] f8[1]",
            ),
            "walk_heights": (
                "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] b1[1] f8[1]",
                "i8[1] i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1]r b1[1] f8[1]",
            ),
            "advance_place_lanes": (
                ("f8[1] f8[1] f8[1] b1[1]r f8 f8[1] i8[1] i8[1] f8[2] f8[2] f8[1] f8[1] f8[2]r f8 f8 f8 f8[1]r f8[1]r "
                 "i8[1] f8[2] f8[1] f8[1] f8[1] f8[2] i8[1] f8[1]"),
            ),
            "pack_step_walk": (
                ("f8[2] f8[1] f8[1] f8[1] f8[1]r f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] "
                 "i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2]"),
                ("f8[2] f8[1] f8[1] f8[1]r f8[1] f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] "
                 "i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2]"),
            ),
            "pack_step_walk_ok": (
                ("f8[2] f8[1] f8[1] f8[1] f8[1]r f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] "
                 "i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2] f8 f8 f8 f8 f8 f8 b1[1] f8[1]"),
                ("f8[2] f8[1] f8[1] f8[1]r f8[1] f8[1] f8[1] b1 b1[1]r f8[2]r f8[2]r f8[1]r f8[2] f8[1]r f8[1]r i8[1] "
                 "i8[1] f8[1] f8[1] f8[1] f8 f8[1]r f8[1] f8[1] i8[2] f8 f8 f8 f8 f8 f8 b1[1] f8[1]"),
            ),
            "state_ok": (
                "f8[2] f8[2]r f8[2]r f8[2]r b1[1]r f8 b1 f8 f8 f8 f8 f8",
                "f8[2]r f8[2]r f8[2] f8[2]r b1[1]r f8 b1 f8 f8 f8 f8 f8",
                "f8[2]r f8[2] f8[2]r f8[2]r b1[1]r f8 b1 f8 f8 f8 f8 f8",
                "f8[2]r f8[2]r f8[2]r f8[2] b1[1]r f8 b1 f8 f8 f8 f8 f8",
            ),
            "swept_pairs": (
                "f8[2]r f8[2]r f8[1]r f8[1]r f8[1]r f8[2]r f8[2]r f8[1]r f8[1]r f8[1]r f8 f8[1] f8[1]",
                "f8[2] f8[2]r f8[1]r f8[1]r f8[1]r f8[2]r f8[2]r f8[1]r f8[1]r f8[1]r f8 f8[1] f8[1]",
            ),
        },
        "simready.sim.core.record_kernels": {
            "record_row": (
                ("i8 f8[2]r f8[2]r f8[2] f8[2]r b1[1]r i8[1]r f8[1]r f8[1]r b1[1] f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] "
                 "f8[2]"),
            ),
            "record_row_x5": (
                ("i8 f8[2]r f8[2]r f8[2] f8[2]r b1[1]r i8[1]r f8[1]r f8[1]r b1[1] f8[1]r f8[1] f8[1] f8[1]r f8[1] "
                 "f8[3] f8[3] f8[3] f8[3] b1[2] i8[2] f8[2] f8[3]"),
            ),
        },
        "simready.sim.core.planner_kernels": {
            "accelerations": (
                ("f8[2] f8[2] f8[1]r f8[1]r b1[1]r i8[1]r f8[1]r f8[2] i8[1] i8[2] f8[2]r f8[1]r f8[2] i8[2] i1[1]r f8 "
                 "f8 f8 f8 f8 f8 f8 f8[1] f8[1]"),
                ("f8[2] f8[2] f8[1] f8[1] b1[1] i8[1] f8[1] f8[2] i8[1] i8[2] f8[2] f8[1] f8[2] i8[2] i1[1] f8 f8 f8 "
                 "f8 f8 f8 f8 f8[1] f8[1]"),
            ),
            "lane_gaps": (
                "i8[1] f8[1] f8[1] b1[1] b1[1] f8[2] f8[1] f8[2] i8[1] f8[2] b1[1] f8",
            ),
            "sight_lines": (
                "f8[2] f8[1] f8[1] f8[1] b1[1] b1[1] f8[2] f8[2] i8[1] i8[1] f8 b1[1]",
            ),
            "corridor_pedestrians": (
                ("f8[2]r f8[2]r f8[1]r f8[1]r b1[1]r b1[1]r b1[1]r b1[1]r b1[1]r f8[1]r f8[1]r f8[1] b1[1]r f8[2] "
                 "f8[2] f8 f8 f8 f8 i8[2]"),
                ("f8[2A] f8[2A]r f8[1] f8[1] b1[1] b1[1]r b1[1]r b1[1]r b1[1]r f8[1]r f8[1]r f8[1] b1[1]r f8[2] f8[2] "
                 "f8 f8 f8 f8 i8[2]"),
                ("f8[2] f8[2] f8[1] f8[1] b1[1] b1[1] b1[1] b1[1] b1[1] f8[1] f8[1] f8[1] b1[1] f8[2] f8[2] f8 f8 f8 "
                 "f8 i8[2]"),
                ("f8[2A]r f8[2A] f8[1]r f8[1]r b1[1]r b1[1]r b1[1]r b1[1]r b1[1]r f8[1]r f8[1]r f8[1] b1[1]r f8[2] "
                 "f8[2] f8 f8 f8 f8 i8[2]"),
            ),
        },
        "simready.sim.backends.dynamic.kernels": {
            "agent_drive_rows": (
                ("i8[1] b1[1] b1[1] f8[1] f8[2] f8[2] f8[2] f8[2] f8[2] f8[2] f8[2] f8[1] f8[1] f8[1] f8[1] f8[1] "
                 "f8[2] f8[2] f8 f8 f8 f8 f8 f8 f8[2]"),
            ),
        },
    },
    "raycast": {
        "simready.raycast.kernels": {
            "hit_points": (
                "i8[1A] f4[2]r f4[2] b1 f8[1]",
                "i8[1A] f8[2]r f8[2] b1 f8[1]",
                "i8[1] f4[2]r f4[2] b1 f8[1]",
            ),
            "start_points": (
                "f4[2] f4[2] f4[1]r",
                "f4[2]r f4[2] f4[1]r",
            ),
            "sensor_rays": (
                "f4[3] f8[3] f8[1] f4[1] b1",
            ),
            "unique_sorted": (
                "f8[1A]",
            ),
            "slab_select": (
                "f4[2]r f4[2] i8[1] b1 f8[1] f8[1] f4[1]",
            ),
            "cast_static_rows": (
                "i8 i8 i4[1] f4[1] u4[1] f4[2]r f4[2] f4[1] i4[1] b1 f4[1] b1 i4[1] i4[1] f4[1] f4[1] f4[1] b1[1] f8[1]",
            ),
        },
    },
    "truth": {
        "simready.truth.kernels.tables": {
            "quantized32": (
                "f8[1A] f8",
            ),
            "flow_columns": (
                "f8[2] i8[1] i8[1] f8[2] f8[2] f8",
            ),
        },
        "simready.truth.kernels.visibility": {
            "buffer_visibility": (
                "f8[2] f8[1A] b1[1] i8[1] i4[1] i4[1] i4[1] f8[1] i8 i8 f8 f8",
            ),
        },
    },
    "camera": {
        "simready.sensors_hw.camera_kernels": {
            "tone_map": (
                "f4[2] f4 b1 f4[1]r",
                "f4[2] f4 b1 f4[1]",
            ),
            "encode_srgb": (
                "f4[2] i4[1]r i8 i8 f4[2]r u1[1] f4",
            ),
            "radiance": (
                "f4[2] i4[1] f4[2] b1[1] f4[1] i8[1] b1[1] f4[1] f4[1] f4[1] f4[1] b1 f4 b1 f4[1]",
            ),
        },
    },
    "lidar": {
        "simready.sensors_hw.lidar_kernels": {
            "azimuth_beams": (
                "f8[2] f8[2] f8[2] f8[1] f8[1] f8[1]r f8 i8 f8[1]r f8[1]r",
            ),
        },
    },
}

#: The ``cache=True`` kernels a ``make run`` of the default suite never compiled (on a fresh clone), by the function
#: that calls them: left to compile when first called (the types the tests call them with are in :data:`TEST_KERNELS`).
NOT_IN_RUN: dict[str, str] = {
    "simready.raycast.kernels.hit_points": "simready.raycast.hits.Hits.point_world_of",
    "simready.truth.kernels.visibility.buffer_visibility": "simready.truth.correspondence.visibility.buffer_visible",
    "simready.truth.kernels.tables.flow_columns": "simready.truth.flow.flow_table",
    "simready.sensors_hw.camera_kernels.tone_map": "simready.sensors_hw.camera.finish.finish_rgb",
}
