"""The measurement stage (SPEC §10, §11): one sample's sensor observations and perception truth, written together.

:mod:`.observe` renders every sensor of the rig over a trace
(:mod:`simready.sensors_hw`) and computes each camera frame's truth
(:mod:`simready.truth`) in the same pass, with its parts beside it
(:mod:`.options`, :mod:`.plan`, :mod:`.sensor_loop`, :mod:`.folder`,
:mod:`.writers`, :mod:`.video`, :mod:`.summary`); :mod:`.inputs` observes a
scenario sample from its loaded inputs or its files, :mod:`.batch` a sample
folder (base window and branches), :mod:`.cli` is ``simready sense``. It sits above both packages so
that truth may read the camera models without the sensors importing truth
back.
"""
