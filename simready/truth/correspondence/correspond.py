"""Where the visible samples of a source frame are in a target frame of the same camera
(:func:`correspond`, :class:`Correspondence`): their points projected under the target's rolling shutter
(:mod:`.projection`) and decided visible or hidden there (:mod:`.visibility`).

Direction: the forward product is ``correspond(A → B)`` and its hidden flag is ``occluded``; the backward
product is computed separately as ``correspond(B → A)`` from B's own samples, and its hidden flag is named
``disoccluded`` (visible at B, hidden at A: revealed in between). Neither is ever obtained by negating the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from simready.raycast.geometry import SceneGeometry
from simready.truth.correspondence.bodies import static_bodies
from simready.truth.correspondence.projection import ShutterProjection, project_body_points
from simready.truth.correspondence.samples import Samples
from simready.truth.correspondence.view import FrameView
from simready.truth.correspondence.visibility import buffer_visible, recast_visible


@dataclass
class Correspondence:
    """Where the visible samples of a source frame are in a target frame.

    Attributes (M rows, one per source sample, as ``source``):
        source: the samples; target: the target frame's view; direction: ``forward`` | ``backward``.
        projection: the points at the target (rows, times, pixels, depth, flags).
        visible: seen at the target (the ``valid`` flag).
        static: the owning body is static.
        recast: how many points in view an exact re-cast decided.
    """

    source: Samples
    target: FrameView
    direction: str
    projection: ShutterProjection
    visible: NDArray[np.bool_]
    static: NDArray[np.bool_]
    #: How many points in view were decided by an exact re-cast (all of them without the target's buffers).
    recast: int = 0

    @property
    def valid(self) -> NDArray[np.bool_]:
        return self.visible

    @property
    def hidden(self) -> NDArray[np.bool_]:
        """In view at the target but behind another surface (``occluded`` forward, ``disoccluded`` backward)."""
        return self.projection.in_view & ~self.visible

    @property
    def hidden_name(self) -> str:
        return "occluded" if self.direction == "forward" else "disoccluded"


def correspond(scene: SceneGeometry, source: Samples, target: FrameView | Samples, direction: str, *,
               ignore: Iterable[str] = (), row_guess: NDArray[np.int64] | None = None) -> Correspondence:
    """Map a frame's visible samples into another frame of the same camera (:mod:`simready.truth.correspondence`).

    ``target`` is the target frame's view (visibility by an exact re-cast of every point in view) or
    its samples (visibility from its own buffers, re-casting only what they cannot decide:
    :func:`buffer_visible`). ``row_guess`` starts the rolling-shutter row iteration (default: the
    source rows; the motion field's prediction saves a pass); it does not change the result.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    view = target.view if isinstance(target, Samples) else target
    if source.view.camera != view.camera:
        raise ValueError("correspondence is between frames of the same camera")
    proj = project_body_points(scene, view, source.body, source.point_body, world_static=source.point_world,
                               row_guess=source.v if row_guess is None else row_guess)
    if isinstance(target, Samples):
        visible, recast = buffer_visible(scene, source, target, proj, ignore=ignore)
    else:
        visible = recast_visible(scene, view, proj, ignore=ignore)
        recast = int(np.count_nonzero(proj.in_view))
    return Correspondence(source, view, direction, proj, visible, static_bodies(scene)[source.body], recast)
