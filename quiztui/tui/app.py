"""quiztui's Textual app: themes, global keys, the command palette and the vet screen."""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from quiztui.core.calibration import JudgeProfile
from quiztui.core.quiz import Quiz
from quiztui.tui.commands import QuiztuiCommands
from quiztui.tui.help import HelpScreen, collect_sections
from quiztui.tui.messages import FragilityMeasured, JudgeProfileStored, RunStatusChanged
from quiztui.tui.screens.confirm import ConfirmQuitScreen, SaveQuitScreen
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.themes import DEFAULT_THEME, FALLBACK_THEME, THEMES_DIR, load_themes

if TYPE_CHECKING:
    from quiztui.tui.screens.calibrate import CalibrateScreen
    from quiztui.tui.screens.grade import GradeScreen
    from quiztui.tui.screens.review import ReviewScreen
    from quiztui.tui.screens.robustness import RobustnessScreen
    from quiztui.tui.services import AppServices

# Keys every quiztui app has (the vet app and ``quiztui grade --tui``).
APP_BINDINGS: tuple[BindingType, ...] = (
    Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    Binding("q", "quit", "Quit", id="app.quit_q"),
    # A priority key: it opens help inside dialogs too (a modal screen hides the app's others).
    Binding("f1", "help", "Help", id="app.help", priority=True),
    Binding("question_mark", "help", "Help", id="app.help_alt", show=False),
    Binding(
        "ctrl+p",
        "command_palette",
        "Commands",
        id="app.command_palette",
        show=False,  # the Footer shows the palette key on its right already
        priority=True,
        tooltip="Open the command palette",
    ),
)


class QuiztuiApp(App[None]):
    """Vets one quiz with what ``services`` wires in (``services.start_run()`` gives a fresh
    event stream for each run, ``r``); the keywords are presentation only."""

    CSS_PATH = "app.tcss"
    TITLE = "quiztui"
    COMMANDS = App.COMMANDS | {QuiztuiCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        *APP_BINDINGS,
        # Not `g`: the tables keep it for "first row". Only on the vet screen (check_action).
        Binding("a", "open_grade", "Grade an answer", id="app.grade", show=False),
        Binding("p", "open_robustness", "Paraphrase robustness", id="app.robustness", show=False),
        Binding("v", "open_review", "Quality ratings", id="app.ratings", show=False),
        Binding("h", "open_runs", "Run history", id="app.runs", show=False),
    ]

    def __init__(
        self,
        quiz: Quiz,
        services: AppServices,
        *,
        autorun: bool = True,
        theme_name: str | None = None,
        themes_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        flush_interval: float = 0.1,
        keymap: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.quiz = quiz
        # [keys] in the config: binding id → keys (Textual's keymap); help shows the keys in effect.
        self.requested_keymap = dict(keymap or {})
        if self.requested_keymap:
            self.set_keymap(self.requested_keymap)
        self.services = services
        # The vet run quit while it was running (its verdicts so far are kept): the CLI prints
        # the exact `quiztui vet --resume RUN_ID` once the terminal is back.
        self.interrupted_run: int | None = None
        # Judge profiles (calibrations), newest first as the store lists them; the metrics
        # screen shows them and the Calibrate screen adds the ones it measures.
        self.profiles: list[JudgeProfile] = list(services.profiles)
        self.clock = clock
        self.flush_interval = flush_interval
        # The tools' screens, each made on first use and kept (with its results) after.
        self.calibrate_screen: CalibrateScreen | None = None
        self.grade_screen: GradeScreen | None = None
        self.robustness_screen: RobustnessScreen | None = None
        self.review_screen: ReviewScreen | None = None
        self.requested_theme = theme_name
        self.vet_screen = VetScreen(
            quiz, services, autorun=autorun, clock=clock, flush_interval=flush_interval
        )
        loaded = load_themes(themes_dir if themes_dir is not None else THEMES_DIR)
        self.theme_problems = loaded.problems
        for theme in loaded.themes:
            self.register_theme(theme)
        self.theme = self._initial_theme()

    def _initial_theme(self) -> str:
        available = self.available_themes
        if self.requested_theme and self.requested_theme in available:
            return self.requested_theme
        return DEFAULT_THEME if DEFAULT_THEME in available else FALLBACK_THEME

    def get_default_screen(self) -> Screen[None]:
        return self.vet_screen

    def _exit_if_terminal_gone(self) -> None:
        """Textual's input thread spins on a terminal that has hung up (its reads return
        nothing, forever, at full CPU): seen when tmux closed a pane running `make run`. The
        app leaves instead, as a closed terminal means; a run's verdicts so far are stored."""
        if _terminal_gone():
            self.exit(return_code=129)

    FREEZE_GC_AFTER_START: ClassVar[bool] = True
    """Move start-up objects out of the collector's reach after the first frame (see below)."""

    def on_mount(self) -> None:
        stdin = sys.__stdin__
        if not self.is_headless and stdin is not None and os.isatty(stdin.fileno()):
            # a terminal that hangs up ends the app (see _exit_if_terminal_gone)
            self.set_interval(2.0, self._exit_if_terminal_gone, name="hangup-watch")
        if self.FREEZE_GC_AFTER_START:
            # Textual, the quiz and the widgets live as long as the app. Frozen, they are not
            # re-scanned by every full collection during a run: measured at 4,000 verdict rows,
            # gen-2 pauses drop from 50-60 ms to 10-20 ms. Undone when the app unmounts.
            self.call_after_refresh(gc.freeze)
        if self.requested_theme and self.requested_theme not in self.available_themes:
            self.notify(
                f"unknown theme {self.requested_theme!r}; using {self.theme}",
                severity="warning",
                markup=False,
            )
        for problem in self.theme_problems:
            self.notify(f"theme skipped: {problem}", severity="warning", markup=False)
        if self.requested_keymap:
            unknown = sorted(set(self.requested_keymap) - known_binding_ids())
            if unknown:
                self.notify(
                    f"[keys]: no action has the id {', '.join(map(repr, unknown))}"
                    " (F1 lists each key's id)",
                    severity="warning",
                    markup=False,
                    timeout=10,
                )

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's palette commands, less those quiztui lists under its own names (theme,
        quit and keys are ``Theme: …``, ``App: quit`` and ``Help: keys``)."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Theme", "Quit", "Keys"):
                yield command

    def on_unmount(self) -> None:
        if self.FREEZE_GC_AFTER_START:
            gc.unfreeze()

    def set_theme(self, name: str) -> None:
        self.theme = name

    def on_run_status_changed(self, message: RunStatusChanged) -> None:
        self.sub_title = message.status

    def on_judge_profile_stored(self, message: JudgeProfileStored) -> None:
        self.profiles.insert(0, message.profile)

    def open_calibrate(self) -> None:
        """Show the Calibrate screen, made on first use and kept (with its results) after."""
        from quiztui.tui.screens.calibrate import CalibrateScreen  # lazy: not needed at start

        if isinstance(self.screen, CalibrateScreen):
            return
        if self.calibrate_screen is None:
            calibrate = self.services.calibrate
            self.calibrate_screen = CalibrateScreen(
                calibrate.start,
                default_batch_size=calibrate.batch_size,
                default_mode=calibrate.mode,
                clock=self.clock,
                flush_interval=self.flush_interval,
            )
            self.install_screen(self.calibrate_screen, name="calibrate")
        self.push_screen("calibrate")

    def open_grade(self) -> None:
        """Show the Grade screen with its one-answer form; made on first use and kept after."""
        # lazy: not needed at start
        from quiztui.tui.screens.grade import GradeScreen, calibration_options

        if isinstance(self.screen, GradeScreen):
            return
        if self.grade_screen is None:
            grade = self.services.grade
            # The configured calibration and the saved ones, read now (not at start-up).
            calibrations = grade.calibrations() if grade.calibrations is not None else None
            self.grade_screen = GradeScreen(
                [],
                grade.start,
                grader=calibrations.grader(grade.grader) if calibrations else grade.grader,
                autorun=False,
                open_form=True,
                flush_interval=self.flush_interval,
                **calibration_options(calibrations),
            )
            self.install_screen(self.grade_screen, name="grade")
        self.push_screen("grade")

    def action_open_grade(self) -> None:
        self.open_grade()

    def open_robustness(self) -> None:
        """Show the Robustness screen for this quiz; made (and run) on first use, kept after."""
        from quiztui.tui.screens.robustness import RobustnessScreen

        if isinstance(self.screen, RobustnessScreen):
            return
        if self.robustness_screen is None:
            robustness = self.services.robustness
            paid = not self.services.simulated  # a paid judge: stored results first, r asks
            self.robustness_screen = RobustnessScreen(
                self.quiz,
                robustness.start,
                settings=robustness.settings,
                stored=robustness.stored if paid else None,
                autorun=not paid,
                flush_interval=self.flush_interval,
            )
            if paid:
                n = len(self.quiz.questions)
                variants = robustness.settings.variants if robustness.settings else 5
                self.robustness_screen.cost_note = (
                    f"Robustness of {n} questions with {self._model()}: about"
                    f" {n * (variants + 2):,} paid requests ({variants} rewrites of each question"
                    " and an answer to every form)."
                )
            self.install_screen(self.robustness_screen, name="robustness")
        self.push_screen("robustness")

    def action_open_robustness(self) -> None:
        self.open_robustness()

    def open_review(self) -> None:
        """Show the Quality ratings screen (MIRROR) for this quiz; made (and run) on first use."""
        from quiztui.tui.screens.review import ReviewScreen

        if isinstance(self.screen, ReviewScreen):
            return
        if self.review_screen is None:
            review = self.services.review
            paid = not self.services.simulated  # a paid judge: nothing is sent before r
            self.review_screen = ReviewScreen(
                self.quiz,
                review.start,
                mode=review.mode,
                low_score=review.low_score,
                stored=review.stored if paid else None,
                autorun=not paid,
                flush_interval=self.flush_interval,
            )
            if paid:
                self.review_screen.cost_note = (
                    f"Quality ratings of {len(self.quiz.questions)} questions with {self._model()}: one"
                    f" paid request per question and iteration ({review.mode} mode)."
                )
            self.install_screen(self.review_screen, name="review")
        self.push_screen("review")

    def action_open_review(self) -> None:
        self.open_review()

    def open_runs(self) -> None:
        """Show the Runs screen (the store's history), read afresh each time it is opened."""
        from quiztui.tui.screens.runs import RunsScreen

        if not isinstance(self.screen, VetScreen):
            return
        self.push_screen(
            RunsScreen(self.services.runs, calibrations=self.services.grade.calibrations)
        )

    def action_open_runs(self) -> None:
        self.open_runs()

    def _model(self) -> str:
        from quiztui.tui.widgets.header import model_name

        return model_name(self.services.judge_label)

    def _unsaved_question(self, unsaved: int) -> str:
        source = self.vet_screen.quiz.source_path
        name = Path(source).name if source else "the quiz file"
        question = f"{unsaved} edited question(s) not written to {name}."
        if self.vet_screen.running:
            question = "A run is in progress. " + question
        return question + " Save them before quitting?"

    def _save_quit(self, answer: str | None) -> None:
        if answer == "discard":
            self._exit_noting_the_run()
        elif answer == "save":
            self.vet_screen.action_save_quiz()
            if not self.vet_screen.unsaved:  # written: quit; a failed save says why and stays
                self._exit_noting_the_run()

    async def go_home(self) -> None:
        """Back to the vet screen, closing what is open above it."""
        while self.screen is not self.vet_screen and len(self.screen_stack) > 1:
            await self.pop_screen()

    async def show(self, name: str) -> None:
        """Open a tool's screen from anywhere (the command palette): home first, then it."""
        await self.go_home()
        if name == "metrics":
            self.vet_screen.action_open_metrics()
        elif name == "calibrate":
            self.open_calibrate()
        elif name == "grade":
            self.open_grade()
        elif name == "review":
            self.open_review()
        elif name == "robustness":
            self.open_robustness()
        elif name == "runs":
            self.open_runs()
        elif name == "compare":
            from quiztui.tui.screens.runs import RunsScreen

            self.push_screen(
                RunsScreen(
                    self.services.runs,
                    compare_newest=True,
                    calibrations=self.services.grade.calibrations,
                )
            )
        else:
            raise ValueError(f"no screen named {name!r}")

    def export_report(self, fmt: str) -> None:
        """Write the finished vet run's report (md, json, csv, html) in the current directory."""
        from quiztui.errors import QuiztuiError
        from quiztui.report.extras import ReportExtras
        from quiztui.report.writers import render_report, spreadsheet_safe

        vet = self.vet_screen
        summary = vet.state.summary
        if summary is None:
            self.notify("No finished run to export yet (r starts one)", timeout=5)
            return
        notes: tuple[str, ...] = ()
        if self.services.report is not None:  # the report `quiztui report N` writes
            try:
                text, notes = self.services.report(summary.run_id, fmt)
            except QuiztuiError as exc:
                self.notify(str(exc), title="Not exported", severity="error", markup=False)
                return
        else:
            text = render_report(summary, fmt, ReportExtras(vet.quiz.unjudged, vet.lint_report))
        if fmt == "csv":
            text = spreadsheet_safe(text)
        # In the current directory, as `-o NAME` writes: never beside the quiz, which may be a
        # tracked sample or a folder of someone else's.
        stem = Path(vet.quiz.source_path).stem if vet.quiz.source_path else "quiz"
        path = Path.cwd() / f"{stem}.run{summary.run_id}.{fmt}"
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"{path}: {exc.strerror or exc}", title="Not exported", severity="error")
            return
        shown = "\n".join((f"Report written to {path}", *notes))
        self.notify(shown, title="Exported", markup=False, timeout=8)

    def on_fragility_measured(self, message: FragilityMeasured) -> None:
        self.vet_screen.set_fragility(message.flags)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open_grade", "open_robustness", "open_review", "open_runs"):
            return isinstance(self.screen, VetScreen)
        return True

    @property
    def measuring_robustness(self) -> bool:
        return self.robustness_screen is not None and self.robustness_screen.running

    @property
    def reviewing(self) -> bool:
        return self.review_screen is not None and self.review_screen.running

    @property
    def grading(self) -> bool:
        return self.grade_screen is not None and self.grade_screen.running

    @property
    def calibrating(self) -> bool:
        return self.calibrate_screen is not None and self.calibrate_screen.running

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):  # F1 again closes it
            self.screen.dismiss(None)
            return
        self.push_screen(HelpScreen(collect_sections(self.screen)))

    async def action_quit(self) -> None:
        busy = (
            self.vet_screen.running
            or self.calibrating
            or self.grading
            or self.measuring_robustness
            or self.reviewing
        )
        unsaved = self.vet_screen.unsaved
        if isinstance(self.screen, SaveQuitScreen):
            return  # it is asking already
        if (not busy and not unsaved) or isinstance(self.screen, ConfirmQuitScreen):
            self._exit_noting_the_run()
            return
        if unsaved:  # the edits come first: save, discard or stay (a run is cancelled by quit)
            self.push_screen(SaveQuitScreen(self._unsaved_question(unsaved)), self._save_quit)
            return

        def answered(quit_app: bool | None) -> None:
            if quit_app:
                self._exit_noting_the_run()

        started = self.vet_screen.state.started
        question = (
            "A run is in progress. Quit anyway? Its verdicts so far are kept:"
            f" quiztui vet --resume {started.run_id} continues it."
            if self.vet_screen.running and started is not None
            else "A run is in progress. Quit anyway?"
            if self.vet_screen.running
            else "A calibration is running. Quit anyway?"
            if self.calibrating
            else "Grading is running. Quit anyway?"
            if self.grading
            else "A robustness run is in progress. Quit anyway?"
            if self.measuring_robustness
            else "A quality ratings run is in progress. Quit anyway?"
            if self.reviewing
            else f"{unsaved} edited question(s) not written to the file (ctrl+s). Quit anyway?"
        )
        self.push_screen(ConfirmQuitScreen(question), callback=answered)

    def _exit_noting_the_run(self) -> None:
        started = self.vet_screen.state.started
        if self.vet_screen.running and started is not None:
            self.interrupted_run = started.run_id
        self.exit()


def known_binding_ids() -> set[str]:
    """Every binding id of the vet app's screens and dialogs (what ``[keys]`` can remap)."""
    import importlib

    from quiztui.tui.help import HelpScreen as Help
    from quiztui.tui.widgets.tables import NavTable

    screens = (
        "benchmark calibrate compare confirm decide detail edit grade grade_detail metrics review"
        " robustness runs"
    ).split()
    classes: list[type] = [QuiztuiApp, VetScreen, NavTable, Help]
    for name in screens:
        module = importlib.import_module(f"quiztui.tui.screens.{name}")
        classes += [
            c for c in vars(module).values() if isinstance(c, type) and "BINDINGS" in vars(c)
        ]
    ids: set[str] = set()
    for cls in classes:
        for binding in vars(cls).get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


def _terminal_gone() -> bool:
    """True when the controlling terminal has hung up: its attributes can no longer be read
    (a terminal that is there always answers tcgetattr)."""
    import termios

    stream = sys.__stdin__
    if stream is None:
        return False
    try:
        termios.tcgetattr(stream.fileno())
    except (OSError, ValueError, termios.error):
        return True
    return False
