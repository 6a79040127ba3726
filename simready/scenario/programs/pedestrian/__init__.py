"""``pedestrian_emerges_behind_van``: a pedestrian steps out from behind a parked van into the ego's path.

Causes, in dependency order (stream in brackets):

0. **ego route** [template, route] — the template's ``ego.route`` when it
   passes the chosen site and then the crossing, else one of the lane
   graph's routes that does (drawn after step 1); past a kerb site the ego
   holds a lateral offset that clears the van (``ego.offset_m``).
1. **parking site** [layout] — a parking affordance whose region is
   ``adjacent`` to a sidewalk that a crosswalk ``connects``, upstream of
   that crosswalk on the ego route (the relation comes first; there may be
   several); on a map without one, a kerb site by the kerbside rule
   (:func:`simready.world.affordances.parking_sites`) beside such a sidewalk.
2. **van** [actors, layout] — a delivery-van variant, then a slot of that
   site whose front bumper lies the cell's ``occlusion`` gap before the
   crossing (a near van hides the crossing deeply, a far one shallowly),
   then an along / across offset inside the slot that keeps the whole
   footprint inside the site's polygon (the wheels then sit on it too).
3. **pedestrian** [actors, behavior] — family (the cell's, or drawn), variant,
   walking speed for that family, reaction delay, stop tendency.
4. **occlusion relative to the ego route** [derived] — the last ego position
   from which the van still hides the kerb where the crossing starts (the
   route's overlap with the van's shadows cast from that kerb point): the ego
   must be that far short of the conflict when the pedestrian steps out.
5. **ego speed, TTC target** [behavior, timing] — inside the cell's bins and
   above the values step 4 requires (speed x (TTC + kerb-to-path walk) must
   cover that distance); a cell no value of which does is refused
   (``sampling.kerb_in_view``).
6. **spawn** [layout] — on the adjacent sidewalk near the crossing (within the
   walking distance the timing allows), inside the van's shadow cast from the
   ego camera at its expected positions at emergence and ``pre_window_s``
   before it. The walk route is the crossing path from the furthest node the
   pedestrian can walk to in a straight line.
7. **timing** [solve] — :func:`~simready.scenario.timing.solve_emergence_timing`
   places the pedestrian's start (a ``when(reaches)`` trigger on the ego's
   lane position at that time) so the ego's time to the conflict point when
   the pedestrian enters its path equals the TTC target; if no delay works
   it adjusts the ego speed inside the cell's speed bin.
8. **environment** [environment] — illumination and weather from the cell,
   the rest correlated (:mod:`simready.scenario.environment`).

The package: :mod:`.params` (the intent's named parameters), :mod:`.layouts` (step 1: the
template's sites, sidewalks, crossings and ego routes), :mod:`.walk` (the pedestrian's path and where it meets
the ego's), :mod:`.shadow` (steps 4 and 6: the van's shadow, the spawn area), :mod:`.program` (the draws and
the scene).

The ladder then measures what the program only planned: the visible
fraction before / after emergence (thresholds below), the TTC, the reveal
time, and the capture context.
"""

from __future__ import annotations

from simready.scenario.programs.pedestrian.params import PedestrianParams
from simready.scenario.programs.pedestrian.program import PedestrianEmergesBehindVan


__all__ = ["PedestrianEmergesBehindVan", "PedestrianParams"]
