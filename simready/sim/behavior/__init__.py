"""What actors do beyond tracking their paths: the scenario's interactions, traffic rules, background traffic, crashes.

:mod:`.interactions` (triggers, conditions and verbs, SPEC §6; a package by part), :mod:`.junctions` (right
of way at intersections), :mod:`.walkers` (background pedestrians at the kerb; a package by rule),
:mod:`.lane_changes` (MOBIL lane changes of background traffic), :mod:`.respawn` (the background density kept up) and :mod:`.impact` (what
the parties of a collision do afterwards). Built on :mod:`simready.sim.core`; the controllers and the
backends read them, the engine calls them each tick.
"""
