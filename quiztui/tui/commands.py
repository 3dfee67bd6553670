"""Command palette (ctrl+p): run, view, theme and help commands with ``Prefix: verb`` titles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from quiztui.tui.app import QuiztuiApp

Command = tuple[str, str, Callable[[], object]]


class CommandList(Provider):
    """A fixed list of commands, all discoverable with an empty query; subclasses list them."""

    def _commands(self) -> Iterator[Command]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)


def app_commands(app: Any, quit_help: str) -> Iterator[Command]:
    """Help, one command per theme, and quit: the tail of every app's palette."""
    yield ("Help: keys", "Show the keys of the focused widget and the app (F1)", app.action_help)
    for name in sorted(app.available_themes):
        yield (f"Theme: {name}", f"Switch to the {name} theme", partial(app.set_theme, name))
    yield ("App: quit", quit_help, app.action_quit)


class QuiztuiCommands(CommandList):
    """Every screen and action of the vet app, once each, discoverable with an empty query.

    A screen's command works from wherever the palette was opened: it goes back to the vet
    screen first (``QuiztuiApp.show``). Textual's own Theme, Quit and Keys commands are left out
    (``QuiztuiApp.get_system_commands``): these are here under their quiztui names.
    """

    def _commands(self) -> Iterator[Command]:
        app: QuiztuiApp = self.app  # type: ignore[assignment]
        vet = app.vet_screen
        yield ("View: vet (home)", "Back to the vet screen: questions and verdicts", app.go_home)
        yield ("Run: start", "Start a new vet run (r)", vet.action_start_run)
        yield ("Run: cancel", "Cancel the running vet; judged rows stay (x)", vet.action_cancel_run)
        from quiztui.tui.screens.vet import BADGE_FILTERS

        for badge in BADGE_FILTERS:
            yield (
                f"View: filter {badge}",
                "Show all questions" if badge == "all" else f"Show only {badge} questions",
                partial(vet.set_badge_filter, badge),
            )
        yield ("View: search questions", "Filter questions by text (/)", vet.action_search)
        yield (
            "View: all columns",
            "Show the columns a narrow terminal folds away; the table scrolls sideways (w)",
            vet.action_toggle_columns,
        )
        yield (
            "View: question detail",
            "Open the highlighted question (enter)",
            vet.action_open_detail,
        )
        yield ("Edit: question", "Edit the highlighted question and re-judge it (e)", vet_edit(app))
        yield (
            "Edit: save to the quiz file",
            "Write the edited questions into the quiz file, keeping a .bak (ctrl+s)",
            vet.action_save_quiz,
        )
        for name, title, help_text in SCREENS:
            yield (title, help_text, partial(app.show, name))
        for fmt in REPORT_FORMATS:
            yield (
                f"Export: report as {fmt}",
                f"Write the finished run's {fmt.upper()} report in the current directory",
                partial(app.export_report, fmt),
            )
        yield from review_desk_commands(vet)
        yield from app_commands(app, "Quit quiztui (asks while a run is active)")


# The screens the palette opens: app.show(name), title, help.
SCREENS: tuple[tuple[str, str, str], ...] = (
    (
        "metrics",
        "View: metrics",
        "Bayes and binomial tables, run histograms, reliability, judge profiles, usage (m)",
    ),
    (
        "calibrate",
        "View: calibrate the judge",
        "Measure the judge's TPR/TNR on a gold set and store its profile (c)",
    ),
    (
        "grade",
        "View: grade an answer",
        "Grade a candidate answer against a reference, by LLM or offline (a)",
    ),
    (
        "review",
        "View: quality ratings",
        "Rate each question's wording 1-5 with LLM judges; stored results first (v)",
    ),
    (
        "robustness",
        "View: paraphrase robustness",
        "Answer paraphrased forms of each question; stored results first (p)",
    ),
    ("runs", "View: run history", "Past runs with counts and cost; open one (h)"),
    ("compare", "View: compare two runs", "The two newest vet runs side by side: agreement, κ"),
)
REPORT_FORMATS = ("md", "json", "csv", "html")


def vet_edit(app: QuiztuiApp) -> Callable[[], object]:
    async def edit() -> None:
        await app.go_home()
        app.vet_screen.action_edit_question()

    return edit


def review_desk_commands(vet: Any) -> Iterator[Command]:
    """The review desk's decisions on the highlighted question, its filter, apply fixes (not the
    Quality ratings screen, ``v``)."""
    for action, help_text in (
        ("accept", "The highlighted question's key is right (y)"),
        ("fix", "Another option of the highlighted question is right: choose it (o)"),
        ("rewrite", "The highlighted question needs new wording (t)"),
        ("drop", "Take the highlighted question out (d)"),
    ):
        yield (f"Review desk: {action}", help_text, partial(vet.action_decide, action))
    yield (
        "Review desk: filter needs review / decided",
        "Cycle the review filter: all, needs review, decided (n)",
        vet.action_cycle_review_filter,
    )
    yield (
        "Review desk: apply fixes",
        "Write the fixed keys into the quiz file, keeping a .bak (A)",
        vet.action_apply_fixes,
    )
