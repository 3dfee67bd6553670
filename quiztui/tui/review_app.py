"""``quiztui review QUIZ --tui``: the one-screen tool app with the Review screen as its home.

Themes, F1 help, the command palette and the quit confirmation work as in the vet app (they come
from :class:`~quiztui.tui.grade_app.GradeApp`). The vet app shows the same screen on ``v``.
"""

from __future__ import annotations

from quiztui.tui.grade_app import GradeApp


class ReviewApp(GradeApp):
    """Shows ``home`` (a :class:`~quiztui.tui.screens.review.ReviewScreen`) as its only screen."""

    TITLE = "quiztui review"


__all__ = ["ReviewApp"]
