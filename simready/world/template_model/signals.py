"""Traffic signals (stop lines, fixed-time programs) and pedestrian signals over crosswalks."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from simready.world.template_model.base import Model, Name, NonNegReal, PositiveReal


class StopLine(Model):
    lane: Name
    s_m: NonNegReal


class SignalPhase(Model):
    state: Literal["green", "yellow", "red"]
    duration_s: PositiveReal


class Signal(Model):
    """Fixed-time signal. At time t the program is read at ``(t − offset_s) mod cycle``."""

    id: Name
    controls: tuple[Name, ...] = Field(min_length=1)
    stop_line: StopLine
    program: tuple[SignalPhase, ...] = Field(min_length=1)
    offset_s: NonNegReal = 0.0

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.program)

    def state_at(self, t_s: float) -> str:
        """Signal state at simulation time ``t_s`` (seconds)."""
        u = (t_s - self.offset_s) % self.cycle_s
        for phase in self.program:
            if u < phase.duration_s:
                return phase.state
            u -= phase.duration_s
        return self.program[-1].state


class PedestrianSignal(Model):
    """Fixed-time pedestrian light over ``crosswalks`` (crosswalk region ids): pedestrians step off on green.

    Read like :class:`Signal` (``(t − offset_s) mod cycle``); imported maps carry them (OpenDRIVE lights of the
    pedestrian type), and background pedestrians take their phase from them where they have one.
    """

    id: Name
    crosswalks: tuple[Name, ...] = Field(min_length=1)
    program: tuple[SignalPhase, ...] = Field(min_length=1)
    offset_s: NonNegReal = 0.0

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.program)

    def state_at(self, t_s: float) -> str:
        """Signal state at simulation time ``t_s`` (seconds)."""
        return Signal.state_at(self, t_s)  # type: ignore[arg-type]
