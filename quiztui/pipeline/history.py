"""Past vet runs read back from the store: open one as a ``RunSummary``, compare two; and the
other kinds as their screens' events (grade, k-fold fit, robustness, review).

A finished (or failed) run stored its summary, which :func:`summary_from_dict` reads back as it
was. A cancelled run, or one still running (or killed), stored no summary: its questions and
verdicts are in the store, so the summary is rebuilt from them, each question scored with the
run's own TPR/TNR and prior (kept in its params) by the same ``score_question`` the run uses.
Questions with options not yet judged stay *pending*; nothing is invented.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from quiztui.core.bayes import DEFAULT_PRIOR, JudgeAccuracy
from quiztui.core.compare import Comparison, QuizMismatch, RunSide, compare_runs
from quiztui.core.figures import is_partial, run_state_text
from quiztui.core.kscore import Badge
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuiztuiError, StoreError
from quiztui.pipeline.events import QuestionSummary, RunSummary
from quiztui.pipeline.scoring import score_question
from quiztui.pipeline.summary import summary_from_dict
from quiztui.store.runs import RunListing, RunRecord, Store, StoredVerdict

if TYPE_CHECKING:
    from quiztui.pipeline.robustness import RobustnessSettings
    from quiztui.store.grade_fits import GradeFitRecord
    from quiztui.store.reviews import ReviewRunRecord
    from quiztui.store.robustness import RobustnessRunRecord

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class LoadedRun:
    record: RunRecord
    summary: RunSummary
    note: str  # "" for a stored summary; why and how it was rebuilt otherwise
    seqs: dict[tuple[str, int], int]  # (question id, option index) → the assertion's seq

    @property
    def rebuilt(self) -> bool:
        return bool(self.note)


def _record(store: Store, run_id: int) -> RunRecord:
    try:
        return store.get_run(run_id)
    except StoreError:
        raise QuiztuiError(
            f"no run with id {run_id} in {store.path} (quiztui runs lists them)"
        ) from None


def load_run(store: Store, run_id: int) -> LoadedRun:
    """Run ``run_id`` as a summary; a ``QuiztuiError`` for an unknown id."""
    record = _record(store, run_id)
    seqs = {(qid, opt): seq for seq, qid, opt, _, _ in store.run_order(run_id)}
    if record.summary is not None:
        return LoadedRun(record, summary_from_dict(record.summary), "", seqs)
    why = "cancelled" if record.status == "cancelled" else f"{record.status}, never finished"
    summary = rebuild_summary(store, record)
    note = f"run {run_id} was {why}: rebuilt from the verdicts stored so far"
    return LoadedRun(record, summary, note, seqs)


def _pair(value: Any) -> tuple[float, float] | None:
    """A stored interval (a JSON list), None when the run stored none (uncalibrated, or older)."""
    return None if not value else (float(value[0]), float(value[1]))


def rebuild_summary(store: Store, record: RunRecord) -> RunSummary:
    """A summary from the stored questions and verdicts of a run that stored none."""
    params = record.params
    accuracy = JudgeAccuracy(
        tpr=float(params.get("tpr", JudgeAccuracy().tpr)),
        tnr=float(params.get("tnr", JudgeAccuracy().tnr)),
    )
    prior = float(params.get("prior", DEFAULT_PRIOR))
    verdicts = store.verdicts(record.id)
    by_option: dict[tuple[str, int], int] = {
        (qid, opt): seq for seq, qid, opt, _, _ in store.run_order(record.id)
    }
    questions: list[QuestionSummary] = []
    counts: dict[str, int] = {}
    judged = unjudged = 0
    for qid, text, options, key in store.run_questions(record.id):
        stored = [verdicts.get(by_option.get((qid, i), -1)) for i in range(len(options))]
        question = Question(id=qid, text=text, options=options, key=key)
        summary = _rebuilt_question(question, stored, accuracy, prior)
        counts[summary.badge.value] = counts.get(summary.badge.value, 0) + 1
        questions.append(summary)
        judged += sum(v is not None for v in summary.verdicts)
        unjudged += sum(1 for s in stored if s is not None and s.verdict is None)
    usage = store.usage(record.id)
    return RunSummary(
        run_id=record.id,
        status=record.status,
        quiz_title=record.quiz_title,
        quiz_path=record.quiz_path,
        judge_label=record.judge_label,
        simulated=record.simulated,
        calibration=str(params.get("calibration", "uncalibrated")),
        tpr_ci=_pair(params.get("tpr_ci")),
        tnr_ci=_pair(params.get("tnr_ci")),
        seed=record.seed,
        batch_size=record.batch_size,
        tpr=accuracy.tpr,
        tnr=accuracy.tnr,
        prior=prior,
        questions=tuple(questions),
        badge_counts=counts,
        requests=usage["requests"],
        retries=usage["retries"],
        tokens_in=usage["tokens_in"],
        tokens_out=usage["tokens_out"],
        judged=judged,
        unjudged=unjudged,
        not_run=len(by_option) - judged - unjudged,
    )


def _rebuilt_question(
    question: Question,
    stored: list[StoredVerdict | None],
    accuracy: JudgeAccuracy,
    prior: float,
) -> QuestionSummary:
    """One question scored from its options' stored verdicts (None: never judged, pending)."""
    said = tuple(None if s is None else s.verdict for s in stored)
    gave_up = sum(1 for s in stored if s is not None and s.verdict is None)
    pending = sum(1 for s in stored if s is None)
    sc = score_question(question, said, accuracy, prior=prior, unjudged=gave_up, pending=pending)
    return QuestionSummary(
        question_id=question.id,
        text=question.text,
        options=question.options,
        key=question.key,
        k=sc.k,
        badge=sc.badge,
        confidence=sc.confidence,
        suggested_option=sc.suggested_option,
        suggested_p=sc.suggested_p,
        verdicts=said,
        reasons=tuple(
            "" if s is None else (s.reason if s.verdict is not None else s.unjudged_reason or "")
            for s in stored
        ),
        p_true=tuple(None if s is None else s.p_true for s in stored),
        interval=sc.interval,
    )


def pending_questions(summary: RunSummary) -> int:
    return sum(1 for q in summary.questions if q.badge == Badge.PENDING)


def side(loaded: LoadedRun) -> RunSide:
    return RunSide(
        run_id=loaded.record.id,
        judge_label=loaded.record.judge_label,
        quiz_hash=loaded.record.quiz_hash,
        questions=loaded.summary.questions,
    )


@dataclass(frozen=True, slots=True)
class RunComparison:
    """Two loaded runs and their comparison (the TUI shows both sides' reasons too)."""

    a: LoadedRun
    b: LoadedRun
    comparison: Comparison


def compare_stored(store: Store, run_a: int, run_b: int) -> RunComparison:
    """Compare two stored runs; a ``QuiztuiError`` for unknown ids or different quiz versions."""
    if run_a == run_b:
        raise QuiztuiError(f"run {run_a} compared with itself: give two different run ids")
    a, b = load_run(store, run_a), load_run(store, run_b)
    try:
        return RunComparison(a, b, compare_runs(side(a), side(b)))
    except QuizMismatch as exc:
        raise QuiztuiError(
            f"{exc} (run {run_a}: '{a.record.quiz_title}', run {run_b}: '{b.record.quiz_title}')"
        ) from None


class StoreHistory:
    """The run history of one store file for the Runs screen: every call opens its own
    connection, so it is safe in a worker thread while a vet run writes to the same file (WAL)."""

    def __init__(self, path: Path | str, *, limit: int = 200) -> None:
        self.path = Path(path)
        self.limit = limit

    def _with_store(self, read: Callable[[Store], _T]) -> _T:
        with Store(self.path) as store:
            return read(store)

    def list_runs(self) -> list[RunListing]:
        """The newest ``limit`` runs of every kind (capped: a screen of history, not the whole
        file); store/history.py."""
        from quiztui.store.history import run_history

        return self._with_store(lambda s: run_history(s, self.limit))

    def open_grade(self, run_id: int) -> StoredGrade:
        return self._with_store(lambda s: load_grade(s, run_id))

    def open_robustness(self, run_id: int) -> StoredRobustness:
        return self._with_store(lambda s: load_robustness(s, run_id))

    def open_review(self, run_id: int) -> StoredReview:
        return self._with_store(lambda s: load_review(s, run_id))

    def open_kfold(self, fit_id: int) -> StoredKFold:
        return self._with_store(lambda s: load_kfold(s, fit_id))

    def open_run(self, run_id: int) -> LoadedRun:
        return self._with_store(lambda s: load_run(s, run_id))

    def compare(self, run_a: int, run_b: int) -> RunComparison:
        return self._with_store(lambda s: compare_stored(s, run_a, run_b))


@dataclass(frozen=True)
class StoredGrade:
    """A stored grade run as the Grade screen's events: its items, then the run replayed."""

    items: list[Any]  # GradeItem, in grading order
    events: list[Any]  # GradeStarted, ItemGraded…, GradeFinished (when it stored a summary)
    grader: str
    source: str | None


def load_grade(store: Store, run_id: int) -> StoredGrade:
    """A grade run from the store (``QuiztuiError`` when there is none with that id)."""
    from dataclasses import fields

    from quiztui.pipeline.grade import GradeFinished, GradeStarted, GradeSummary, ItemGraded

    run = store.grades.get_run(run_id)
    if run is None:
        raise QuiztuiError(f"no grade run {run_id} in {store.path}")
    graded = store.grades.outcomes(run_id)
    items = [item for _, item, _ in graded]
    events: list[Any] = [
        GradeStarted(run.id, run.grader, len(items), run.judge_label, run.simulated, run.source)
    ]
    events += [
        ItemGraded(seq, item, outcome, split) for seq, (split, item, outcome) in enumerate(graded)
    ]
    if run.summary is not None:
        names = {f.name for f in fields(GradeSummary)}
        summary = GradeSummary(**{k: v for k, v in run.summary.items() if k in names})
        events.append(GradeFinished(run.id, summary))
    return StoredGrade(items, events, run.grader, run.source)


@dataclass(frozen=True)
class StoredKFold:
    """A stored k-fold fit: its row, its fold table as the run's ``KFoldScored`` (None: the fit
    ended before it had one), and the Benchmark screen's events — each grade run's stored
    events, then the ``KFoldScored`` — when replayed."""

    record: GradeFitRecord
    scored: Any  # pipeline.grade_fit.KFoldScored | None
    events: list[Any]

    @property
    def state(self) -> str:
        """ "" for a finished fit; the house wording for a partial one (core/figures)."""
        r = self.record
        return run_state_text(r.status, r.not_run) if is_partial(r.status, r.not_run) else ""


def load_kfold(store: Store, fit_id: int, *, replay: bool = True) -> StoredKFold:
    """A k-fold fit from the store (``QuiztuiError`` when there is none with that id); with
    ``replay`` its grade runs' outcomes too, as the events the run sent (nothing is graded)."""
    from quiztui.formats.marked import Scale
    from quiztui.pipeline.grade_fit import KFoldScored
    from quiztui.store.grade_fits import GradeFitStore

    record = GradeFitStore(store.conn).get_fit(fit_id)
    if record is None:
        raise QuiztuiError(f"no kfold fit {fit_id} in {store.path} (quiztui runs lists them)")
    scored = None
    if record.result is not None:
        path = None if record.calibration_path is None else Path(record.calibration_path)
        scored = KFoldScored(record.result, Scale(*record.scale), path, record.id)
    events: list[Any] = []
    if replay:
        for run_id in record.grade_runs:
            try:
                events += load_grade(store, run_id).events
            except QuiztuiError:
                continue  # a grade run no longer stored: the fold table still stands
        if scored is not None:
            events.append(scored)
    return StoredKFold(record, scored, events)


@dataclass(frozen=True)
class StoredRobustness:
    """A stored robustness run as the Robustness screen's events, with the quiz it measured."""

    quiz: Any  # core.quiz.Quiz, read again from the run's quiz file
    events: list[Any]  # RobustnessStarted, QuestionMeasured…
    variants: int
    changed: bool  # the quiz file's content is no longer what was measured


def load_robustness(store: Store, run_id: int) -> StoredRobustness:
    """A robustness run from the store; its quiz file is read again (the store keeps the
    measured text, the screen shows the file's questions). ``QuiztuiError`` when the run or the
    file is gone."""
    from quiztui.formats import load_quiz

    run = next((r for r in store.robustness.runs() if r.id == run_id), None)
    if run is None:
        raise QuiztuiError(f"no robustness run {run_id} in {store.path}")
    if not run.quiz_path or not Path(run.quiz_path).is_file():
        raise QuiztuiError(f"robustness run {run_id}: its quiz file {run.quiz_path} is gone")
    quiz = load_quiz(Path(run.quiz_path), strict=False)
    events = robustness_replay(store, run)
    return StoredRobustness(quiz, events, run.variants, quiz.content_hash() != run.quiz_hash)


def robustness_replay(store: Store, run: RobustnessRunRecord) -> list[Any]:
    """A stored robustness run as the events its run sent: started, each answer and measured
    question, and the end with the quiz metrics recomputed from the stored results."""
    from quiztui.pipeline.robustness import (
        FormAnswered,
        QuestionMeasured,
        RobustnessFinished,
        RobustnessStarted,
        summarise,
    )

    results = store.robustness.results(run.id)
    events: list[Any] = [
        RobustnessStarted(
            run.id,
            len(results),
            run.variants,
            run.format,
            run.judge_label,
            run.simulated,
            run.quiz_path,
        )
    ]
    for position, result in enumerate(results):
        events += [FormAnswered(position, result.question_id, a) for a in result.answers]
        events.append(QuestionMeasured(position, result))
    told = run.summary or {}
    summary = summarise(
        results,
        run.variants,
        float(told.get("seconds") or 0.0),
        retries=int(told.get("retries") or 0),
        reasks=int(told.get("reasks") or 0),
    )
    events.append(RobustnessFinished(run.id, summary))
    return events


def newest_robustness(
    store: Store, quiz: Quiz, settings: RobustnessSettings, judge_label: str
) -> tuple[int, list[Any]] | None:
    """The newest finished robustness run of this quiz (same content) with these settings and
    this judge, as (its id, its events), so a screen can show it instead of paying again."""
    for run in store.robustness.runs(quiz.content_hash()):
        same = (run.format, run.variants, run.judge_label) == (
            settings.format,
            settings.variants,
            judge_label,
        )
        if run.status == "finished" and same:
            return run.id, robustness_replay(store, run)
    return None


@dataclass(frozen=True)
class StoredReview:
    """A stored review run as the Review screen's events, over the questions it reviewed."""

    quiz: Any  # core.quiz.Quiz: the run's quiz file, only the questions the run reviewed
    events: list[Any]  # ReviewStarted, QuestionReviewed…
    mode: str
    changed: bool  # some reviewed question is no longer in the file as it was


def load_review(store: Store, run_id: int) -> StoredReview:
    """A review run from the store over its quiz file, read again. ``QuiztuiError`` when the
    run or the file is gone."""
    from quiztui.formats import load_quiz

    run = store.reviews.get_run(run_id)
    if run is None:
        raise QuiztuiError(f"no review run {run_id} in {store.path}")
    if not run.quiz_path or not Path(run.quiz_path).is_file():
        raise QuiztuiError(f"review run {run_id}: its quiz file {run.quiz_path} is gone")
    quiz = load_quiz(Path(run.quiz_path), strict=False)
    subset, events, changed = review_replay(store, run, quiz)
    return StoredReview(subset, events, run.mode, changed)


def review_replay(store: Store, run: ReviewRunRecord, quiz: Quiz) -> tuple[Quiz, list[Any], bool]:
    """A stored review over ``quiz``'s questions as the events its run sent: the questions of
    ``quiz`` it reviewed, the events, and whether some reviewed question is no longer in
    ``quiz`` as it was."""
    from quiztui.pipeline.review import QuestionReviewed, ReviewFinished, ReviewStarted

    by_id = {q.id: q for q in quiz.questions}
    outcomes = store.reviews.outcomes(run.id)
    reviewed = [(pos, by_id.get(o.question_id), text, o, rw) for pos, text, o, rw in outcomes]
    shown = [(pos, q, o, rw) for pos, q, text, o, rw in reviewed if q is not None]
    changed = any(q is None or q.text != text for _, q, text, _, _ in reviewed)
    subset = quiz.model_copy(update={"questions": tuple(q for _, q, _, _ in shown)})
    events: list[Any] = [
        ReviewStarted(
            run.id,
            run.mode,
            len(shown),
            run.judge_label,
            run.judge2_label,
            run.simulated,
            run.quiz_path,
            run.max_iterations,
        )
    ]
    events += [QuestionReviewed(pos, q, o, rw) for pos, q, o, rw in shown]
    summary = _review_summary(run.summary)
    if summary is not None:
        events.append(ReviewFinished(run.id, summary))
    return subset, events, changed


def _review_summary(data: dict[str, Any] | None) -> Any:
    """A stored review summary read back (human agreement, a side figure of a CLI run, is left
    out); None when there is none or it was stored by another version."""
    from quiztui.pipeline.review import ReviewSummary

    if not data:
        return None
    try:
        return ReviewSummary(**{**data, "agreement": None, "humans_source": None})
    except TypeError:
        return None


def newest_review(
    store: Store, quiz: Quiz, mode: str, judge_label: str
) -> tuple[int, list[Any]] | None:
    """The newest finished review of this quiz (same content) in ``mode`` by this judge, as
    (its id, its events), so a screen can show it instead of paying again."""
    quiz_hash = quiz.content_hash()
    for run in store.reviews.list_runs(limit=500):
        same = (run.quiz_hash, run.mode, run.judge_label) == (quiz_hash, mode, judge_label)
        if run.status == "finished" and same:
            return run.id, review_replay(store, run, quiz)[1]
    return None


__all__ = [
    "LoadedRun",
    "RunComparison",
    "StoreHistory",
    "StoredGrade",
    "StoredKFold",
    "StoredRobustness",
    "StoredReview",
    "load_review",
    "load_robustness",
    "newest_review",
    "newest_robustness",
    "review_replay",
    "robustness_replay",
    "load_grade",
    "load_kfold",
    "compare_stored",
    "load_run",
    "pending_questions",
    "rebuild_summary",
]
