"""The scenario ladder's stages that roll a sample out (SPEC §0.4, §20), run after its static checks.

:mod:`.settle` (stage 5: every body settled in ``dynamic-v1``, the rollout's checks) and :mod:`.traffic`
(a sample with background traffic: the whole street rolled out in ``kinematic-v1``). They stand on
:func:`simready.sim.run.run_simulation`, like any caller of the stage.
"""
