"""What a vet report adds beside the run summary; shared by every report writer."""

from __future__ import annotations

from dataclasses import dataclass

from quiztui.core.lint import LintReport
from quiztui.core.quiz import Unjudged


@dataclass(frozen=True)
class ReportExtras:
    """The items not judged, the offline lint, and when the run was made (``created_at``, epoch
    seconds, from the store; None: now, for a report written as the run ends)."""

    unjudged: tuple[Unjudged, ...] = ()
    lint: LintReport | None = None
    created_at: float | None = None

    def lint_codes(self, question_id: str) -> str:
        if self.lint is None:
            return ""
        return " ".join(f.code for f in self.lint.findings_for(question_id))


NO_EXTRAS = ReportExtras()
