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
    """Commands of the vet screen and the app, discoverable with an empty query."""

    def _commands(self) -> Iterator[Command]:
        app: QuiztuiApp = self.app  # type: ignore[assignment]
        vet = app.vet_screen
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
            "View: question detail",
            "Open the highlighted question (enter)",
            vet.action_open_detail,
        )
        yield (
            "View: metrics",
            "Bayes and binomial tables, run histograms, reliability, judge profiles, usage (m)",
            vet.action_open_metrics,
        )
        yield (
            "View: calibrate the judge",
            "Measure the judge's TPR/TNR on a gold set and store its profile (c)",
            vet.action_open_calibrate,
        )
        yield (
            "View: grade an answer",
            "Grade a candidate answer against a reference, by LLM or offline (a)",
            app.open_grade,
        )
        yield (
            "View: run history",
            "Past runs with counts and cost; open one, compare two judges (h)",
            app.open_runs,
        )
        yield from review_desk_commands(vet)
        yield from app_commands(app, "Quit quiztui (asks while a run is active)")


def review_desk_commands(vet: Any) -> Iterator[Command]:
    """The review desk's decisions on the highlighted question, its filter, apply fixes."""
    for action, help_text in (
        ("accept", "The highlighted question's key is right (y)"),
        ("fix", "Another option of the highlighted question is right: choose it (o)"),
        ("rewrite", "The highlighted question needs new wording (t)"),
        ("drop", "Take the highlighted question out (d)"),
    ):
        yield (f"Review: {action}", help_text, partial(vet.action_decide, action))
    yield (
        "Review: filter needs review / decided",
        "Cycle the review filter: all, needs review, decided (n)",
        vet.action_cycle_review_filter,
    )
    yield (
        "Review: apply fixes",
        "Write the fixed keys into the quiz file, keeping a .bak (A)",
        vet.action_apply_fixes,
    )
