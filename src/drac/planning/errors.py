"""The errors of `drac.planning`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drac.errors import ModelCallError, PlanningError
from drac.models import TokenUsage

if TYPE_CHECKING:
    from drac.planning.service import PlanningCounts


class NoModelPlan(PlanningError):
    """The model was asked to plan and planned no section; carries the counts of the
    attempt (sections, tokens spent) so the failure is reported with them."""

    def __init__(self, message: str, counts: PlanningCounts) -> None:
        super().__init__(message)
        self.counts = counts


class ModelServerUnreachable(PlanningError, ModelCallError):
    """The planner's model server cannot be reached: planning stops instead of falling back
    section after section (on AWS, Step Functions retries it as a transient error)."""

    def __init__(self, message: str) -> None:
        ModelCallError.__init__(self, message, retry="transient")


class PlanningFailed(PlanningError):
    """The model gave no usable plan; carries the tokens already spent."""

    def __init__(
        self,
        reason: str,
        usage: TokenUsage,
        notes: list[str],
        failed_answer: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.usage = usage
        self.notes = notes
        self.failed_answer = failed_answer
