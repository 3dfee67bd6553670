"""What a vet report adds beside the run summary; shared by every report writer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from quiztui.core.decisions import Decision
from quiztui.core.lint import LintReport
from quiztui.core.quiz import Unjudged


@dataclass(frozen=True)
class ReportExtras:
    """The items not judged, the offline lint, and when the run was made (``created_at``, epoch
    seconds, from the store; None: now, for a report written as the run ends); the review
    desk's decisions by question id (``assemble/review_desk.decisions_for``)."""

    unjudged: tuple[Unjudged, ...] = ()
    lint: LintReport | None = None
    created_at: float | None = None
    decisions: Mapping[str, Decision] = field(default_factory=dict)

    def review_cells(self, question_id: str, options: tuple[str, ...]) -> tuple[str, str, str]:
        """(decision, the option a fix chose, note) of a question; blank when undecided."""
        decision = self.decisions.get(question_id)
        if decision is None:
            return "", "", ""
        chosen = decision.option
        option = options[chosen] if chosen is not None and 0 <= chosen < len(options) else ""
        return decision.action, option, decision.note

    def lint_codes(self, question_id: str) -> str:
        if self.lint is None:
            return ""
        return " ".join(f.code for f in self.lint.findings_for(question_id))


NO_EXTRAS = ReportExtras()
