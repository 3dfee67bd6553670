"""Calibration: run a judge on a gold set, count its errors, store the judge profile.

A gold set is either a quiz whose keys are trusted (Open Trivia DB) or a labelled statement set
(TruthfulQA's ``finetune_truth.jsonl``). The judge sees the gold questions exactly as it would see
any quiz — same prompt, batch size and mode, assertions shuffled — so the profile measures the
set-up a vet run will use. Verdicts are compared per assertion with the gold label; unjudged
assertions are counted apart, never as errors.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path

from quiztui import resources
from quiztui.core.assertions import decompose
from quiztui.core.calibration import Confusion, IntervalMethod, JudgeProfile
from quiztui.core.quiz import Quiz
from quiztui.pipeline.events import RunFinished, VetEvent
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import Provider
from quiztui.store import Store

# The full Open Trivia DB dump, relative to the folder that holds an editable checkout.
SHARED_OPENTDB = Path("shared") / "data" / "opentdb" / "opentdb.json"


@dataclass(frozen=True)
class GoldSet:
    quiz: Quiz
    labels: dict[str, bool]  # assertion uid → truth
    name: str  # shown in the profile, e.g. "opentdb.json: 250 of 5250 questions, seed 0"

    def truth_by_text(self) -> dict[str, bool]:
        """Assertion text → truth (what the simulated judge and the fake server answer from)."""
        return {a.text: self.labels[a.uid] for a in decompose(self.quiz)}


def default_gold_path() -> Path:
    """The Open Trivia DB dump beside an editable checkout when present, else the packaged sample.

    The packaged sample is 50 Open Trivia DB questions (``quiztui/_data/gold``), so an installed
    wheel calibrates with no data beside it.
    """
    root = resources.checkout_root()
    if root is not None and (root.parent / SHARED_OPENTDB).is_file():
        return root.parent / SHARED_OPENTDB
    return resources.as_path(resources.default_gold())


def sample_quiz(quiz: Quiz, n: int | None, seed: int) -> Quiz:
    """``n`` questions drawn without replacement with ``seed`` (all of them when n is None)."""
    if n is None or n >= len(quiz.questions):
        return quiz
    picked = sorted(random.Random(seed).sample(range(len(quiz.questions)), n))
    questions = tuple(quiz.questions[i] for i in picked)
    kept = {q.id for q in questions}
    return quiz.model_copy(
        update={
            "questions": questions,
            "truth": {k: v for k, v in quiz.truth.items() if k in kept},
        }
    )


def load_gold(path: Path, n: int | None = None, seed: int = 0) -> GoldSet:
    """A gold set from a quiz file (keys trusted) or a labelled statement set; ``n`` questions."""
    from quiztui.formats import load_quiz
    from quiztui.formats.statements import load_statements, looks_like_statements

    if looks_like_statements(path):
        statements = load_statements(path)
        full, labels = statements.quiz, statements.labels
    else:
        full = load_quiz(path)
        labels = {}
        for a in decompose(full):
            true_index = full.truth.get(a.question_id)
            labels[a.uid] = a.keyed if true_index is None else a.option_index == true_index
    quiz = sample_quiz(full, n, seed)
    kept = {a.uid for a in decompose(quiz)}
    of = f"{len(quiz.questions)} of {len(full.questions)} questions, seed {seed}"
    return GoldSet(quiz, {u: v for u, v in labels.items() if u in kept}, f"{path.name}: {of}")


@dataclass(frozen=True, slots=True)
class ProfileMeasured:
    """The calibration run ended and its profile is stored."""

    profile: JudgeProfile


CalibrationEvent = VetEvent | ProfileMeasured


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / 1e6


@dataclass
class CalibrationRun:
    gold: GoldSet
    provider: Provider
    store: Store
    prompt: PromptTemplate
    settings: VetSettings = VetSettings()
    price: Price | None = None
    interval_method: IntervalMethod = "wilson"
    clock: Callable[[], float] = time.monotonic

    async def events(self) -> AsyncIterator[CalibrationEvent]:
        # A cached verdict would measure an earlier run, not this one.
        settings = replace(self.settings, use_cache=False)
        run = VetRun(
            self.gold.quiz, self.provider, self.store, self.prompt, settings, kind="calibrate"
        )
        started = self.clock()
        summary = None
        # Closing this stream closes the vet run's at once, so its end is recorded there and then.
        async with aclosing(run.events()) as events:
            async for event in events:
                if isinstance(event, RunFinished):
                    summary = event.summary
                yield event
        assert summary is not None
        yield ProfileMeasured(self._profile(run, summary, self.clock() - started))

    def _profile(self, run: VetRun, summary, wall_time: float) -> JudgeProfile:  # type: ignore[no-untyped-def]
        stored = self.store.verdicts(run.run_id)
        pairs = []
        for seq, qid, opt, _text, _keyed in self.store.run_order(run.run_id):
            got = stored.get(seq)
            pairs.append((self.gold.labels[f"{qid}#{opt}"], got.verdict if got else None))
        confusion = Confusion.from_pairs(pairs)
        p = self.provider
        profile = JudgeProfile(
            provider=p.name,
            model=p.model,
            prompt_hash=self.prompt.hash,
            batch_size=run.settings.batch_size,
            mode="question" if run.question_mode else "assertion",
            confusion=confusion,
            gold=self.gold.name,
            questions=len(self.gold.quiz.questions),
            simulated=p.simulated,
            requests=summary.requests,
            tokens_in=summary.tokens_in,
            tokens_out=summary.tokens_out,
            cost=self.price.cost(summary.tokens_in, summary.tokens_out) if self.price else None,
            latency=self.store.mean_batch_seconds(run.run_id),
            wall_time=wall_time,
            interval_method=self.interval_method,
            run_id=run.run_id,
            created_at=time.time(),
        )
        return replace(profile, id=self.store.profiles.save(profile))


__all__ = [
    "CalibrationRun",
    "GoldSet",
    "Price",
    "ProfileMeasured",
    "default_gold_path",
    "load_gold",
    "sample_quiz",
]


@dataclass(frozen=True, slots=True)
class CalibrationRequest:
    """What the Calibrate screen (or a script) asks for."""

    gold_path: Path | None = None  # None: default_gold_path()
    n: int | None = 250
    sample_seed: int = 0
    mode: str = "assertion"
    batch_size: int = 20
    compare_modes: bool = False  # the five set-ups of MODE_SETUPS, one after another
    interval_method: IntervalMethod = "wilson"


# The set-ups a modes comparison runs: assertion mode at four batch sizes, and per-question mode.
MODE_SETUPS: tuple[tuple[str, int], ...] = (
    ("assertion", 1),
    ("assertion", 10),
    ("assertion", 20),
    ("assertion", 50),
    ("question", 1),
)


@dataclass(frozen=True, slots=True)
class SetupStarted:
    """A modes comparison moved on to its next set-up (``index`` of ``count``)."""

    index: int
    count: int
    mode: str
    batch_size: int
    gold: str
    judge_label: str


__all__ += ["MODE_SETUPS", "CalibrationRequest", "SetupStarted"]
