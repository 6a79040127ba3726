"""What the gate reports: one :class:`CheckResult` per check and the sample's :class:`ValidityReport`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from simready.validity import policy

CheckName = Literal["physical", "temporal", "sensor", "identity", "distribution"]


class CheckResult(BaseModel):
    """One check's outcome. ``detail`` is plain JSON: a summary, the violations and the figures behind the score."""

    model_config = ConfigDict(frozen=True)
    check: CheckName
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    detail: dict[str, Any]


class ValidityReport(BaseModel):
    """The gate's verdict on one sample (SPEC §12)."""

    model_config = ConfigDict(frozen=True)
    sample_id: str
    policy_version: str
    checks: list[CheckResult]
    fidelity: float = Field(ge=0.0, le=1.0)
    realism: float = Field(ge=0.0, le=1.0)
    validity: float = Field(ge=0.0, le=1.0)
    accepted: bool
    low_fidelity: bool
    weight: float = Field(ge=0.0, le=1.0)
    capped: bool
    reasons: list[str]

    def check(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    def scores(self) -> dict[str, float]:
        return {c.check: c.score for c in self.checks}

    @property
    def rejection_code(self) -> str | None:
        """Short machine-readable reason for the rejection log and coverage (None when accepted):
        the first failed required check (``physical`` | ``temporal``), else ``low_validity``."""
        if self.accepted:
            return None
        failed = [c.check for c in self.checks if c.check in policy.REQUIRED_CHECKS and not c.passed]
        return failed[0] if failed else "low_validity"
