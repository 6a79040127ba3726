"""The world a rollout steps, and nothing that steps it (SPEC §7–§9).

:mod:`.constants` (every number that shapes a rollout), :mod:`.scene` (a manifest compiled against its
template and catalog; a package: model, build, validation, actors, signals, ground, provenance),
:mod:`.reference_paths` (the paths controllers track), :mod:`.state` (the authoritative state at one tick),
:mod:`.profiles` (transition shapes of the shaped verbs), :mod:`.kinematics` (bodies posed on their paths),
:mod:`.geometry` (footprints, separation, swept time-to-collision), :mod:`.sight` (what actors and triggers can
observe of a tick) and the compiled kernels (:mod:`.kernels`, :mod:`.planner_kernels`, :mod:`.record_kernels`,
:mod:`.numpy_loops`, and the quiet ticks' loop :mod:`.tick_kernels` over them). Every other room of
:mod:`simready.sim` builds on these; they import none of it.
"""
