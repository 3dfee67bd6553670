"""What the vet app is given to work with: its run factories and the settings they start from.

The CLI builds one :class:`AppServices` from the config and the store (``cli/vet.py``); tests and
the demo build a minimal one. A tool whose ``start`` is None is unavailable: its screen still
opens and says so. Only the vet run itself is required.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from quiztui.core.figures import UNCALIBRATED_RATES

if TYPE_CHECKING:
    from quiztui.assemble.grade import GradeCalibrations
    from quiztui.core.bank import Bank
    from quiztui.core.calibration import JudgeProfile
    from quiztui.core.estimate import Estimate
    from quiztui.core.lint import LintReport
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.events import VetEvent
    from quiztui.pipeline.robustness import RobustnessSettings
    from quiztui.tui.screens.calibrate import StartCalibration
    from quiztui.tui.screens.decide import DecisionBook
    from quiztui.tui.screens.grade import StartGrading
    from quiztui.tui.screens.review import StartReview
    from quiztui.tui.screens.robustness import StartRobustness
    from quiztui.tui.screens.runs import RunsSource


@dataclass(frozen=True)
class CalibrateService:
    """The Calibrate screen (``c``): ``start(request)`` gives a calibration's events; the form
    starts from the vet's own batch size and mode (the set-up whose profile the vet will use)."""

    start: StartCalibration | None = None
    batch_size: int = 20
    mode: str = "assertion"


@dataclass(frozen=True)
class GradeService:
    """The Grade screen (``a``): ``start(items, grader)`` gives a grade run's events;
    ``calibrations()`` (called when the screen is first opened) the calibration applied — the
    configured ``[grade] answers_calibration`` — and the picker's saved ones, as ``grade --tui``
    gets them (None: no calibrations)."""

    start: StartGrading | None = None
    grader: str = "rubric10"
    calibrations: Callable[[], GradeCalibrations] | None = None


@dataclass(frozen=True)
class RobustnessService:
    """The Robustness screen (``p``): ``start()`` gives a robustness run of this quiz."""

    start: StartRobustness | None = None
    settings: RobustnessSettings | None = None
    # The newest finished run of this quiz with these settings and judge, from the store: shown
    # when the screen opens for a paid judge, instead of paying for the same run again.
    stored: Callable[[], tuple[int, list[object]] | None] | None = None  # (run id, its events)


@dataclass(frozen=True)
class ReviewService:
    """The Review screen (``v``): ``start(quiz, mode)`` gives a review run's events."""

    start: StartReview | None = None
    mode: str = "feedback"
    low_score: int = 2
    # The newest finished review of this quiz by this judge in a mode, from the store: shown when
    # the screen opens for a paid judge, instead of paying for the same review again.
    stored: Callable[[str], tuple[int, list[object]] | None] | None = None  # (run id, events)


@dataclass(frozen=True)
class AppServices:
    """Everything the vet app runs or reads besides the quiz; None means unavailable."""

    # A fresh vet run of the quiz on each call (``r``), and the judge as the header names it.
    start_run: Callable[[], AsyncIterator[VetEvent]]
    judge_label: str
    simulated: bool
    # core/figures.judge_rates_text: the rates the next run scores with and their source
    calibration: str = UNCALIBRATED_RATES
    # Judge profiles, newest first as the store lists them (the metrics screen shows them).
    profiles: Sequence[JudgeProfile] = ()
    # question id → (fragile, why), from the newest robustness run of this quiz.
    fragility: Mapping[str, tuple[bool, str]] = field(default_factory=dict)
    # Editing: the file's items (to save edits in its own format), a one-question re-judge and
    # the offline lint with the configured rules.
    bank: Bank | None = None
    start_rejudge: Callable[[Quiz], AsyncIterator[VetEvent]] | None = None
    # A whole-quiz run of the quiz as edited (keys fixed by ``A``, questions edited): ``r``
    # after an edit judges what the table shows (None: ``start_run``, the quiz as opened).
    start_edited_run: Callable[[Quiz], AsyncIterator[VetEvent]] | None = None
    lint: Callable[[Quiz], LintReport] | None = None
    calibrate: CalibrateService = field(default_factory=CalibrateService)
    grade: GradeService = field(default_factory=GradeService)
    robustness: RobustnessService = field(default_factory=RobustnessService)
    review: ReviewService = field(default_factory=ReviewService)
    runs: RunsSource | None = None  # the run history (``h``)
    # prior = "auto": the last run's estimated prior as the header names it (None: fixed prior)
    prior: Callable[[], str | None] | None = None
    # What a run would cost, shown while a paid judge waits for r (None: not estimated); called
    # in a worker thread, it sends nothing.
    estimate: Callable[[], Estimate | None] | None = None
    # The review desk's decisions (accept / fix / rewrite / drop); None: nowhere to keep them.
    decisions: DecisionBook | None = None
    # A stored run's report, (run id, format) → (text, notes): what `quiztui report N` prints
    # (report/stored.stored_report); None: the export renders the screen's own summary.
    report: Callable[[int, str], tuple[str, tuple[str, ...]]] | None = None
    # The SIMULATED state said plainly (core/figures.simulated_note): where its verdicts come
    # from, what it cannot find, the one step to a real judge; "" for a real judge.
    simulated_note: str = ""


__all__ = [
    "AppServices",
    "CalibrateService",
    "GradeService",
    "ReviewService",
    "RobustnessService",
]
