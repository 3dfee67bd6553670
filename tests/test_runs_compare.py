"""core.compare: verdict agreement, Cohen's κ (hand-computed), badge agreement, disagreements;
and pipeline.history: stored runs read back and compared, a cancelled run rebuilt."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from pathlib import Path

import pytest
from runs_helpers import vet_twice
from tui_helpers import make_quiz

from quiztui.core.agreement import cohen_kappa
from quiztui.core.compare import QuizMismatch, RunSide, compare_runs
from quiztui.errors import QuiztuiError
from quiztui.pipeline.events import RunFinished, UsageUpdated
from quiztui.pipeline.history import compare_stored, load_run
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.store import Store

T, F = True, False


@dataclass(frozen=True)
class Q:
    question_id: str
    verdicts: tuple[bool | None, ...]
    badge: str = "good"
    suggested_option: int | None = None
    key: int = 0
    confidence: float = 0.9
    text: str = "?"
    options: tuple[str, ...] = ("a", "b", "c", "d")


def side(run_id: int, *questions: Q, quiz_hash: str = "h") -> RunSide:
    return RunSide(run_id, f"judge {run_id}", quiz_hash, questions)


def test_hand_computed_kappa_agreement_and_disagreements() -> None:
    """Three questions × 4 options. A vs B over the 11 pairs both judged (q2 D is unjudged by B):
    10 agree; A says TRUE 3 times, B 4 times. p_o = 10/11 = 110/121, p_e = (3·4 + 8·7)/121 =
    68/121, κ = (110 − 68)/(121 − 68) = 42/53."""
    a = side(
        1,
        Q("q1", (T, F, F, F), badge="good"),
        Q("q2", (F, T, F, F), badge="good"),
        Q("q3", (T, F, F, F), badge="good"),
    )
    b = side(
        2,
        Q("q1", (T, T, F, F), badge="questionable"),
        Q("q2", (F, T, F, None), badge="good"),
        Q("q3", (T, F, F, F), badge="good", suggested_option=2),
    )
    c = compare_runs(a, b)
    assert (c.questions, c.assertions, c.both_judged, c.agreed) == (3, 12, 11, 10)
    assert c.agreement == pytest.approx(10 / 11)
    assert c.kappa == pytest.approx(42 / 53)
    assert (c.tt, c.tf, c.ft, c.ff) == (3, 0, 1, 7)
    assert c.unjudged_pairs == 1
    assert c.badges_agreed == 2 and c.badge_agreement == pytest.approx(2 / 3)
    # q1: a verdict and the badge differ; q2: only an unjudged option (not a disagreement);
    # q3: only the suggested option differs.
    assert [d.question_id for d in c.disagreements] == ["q1", "q3"]
    q1, q3 = c.disagreements
    assert q1.differing_options == (1,) and q1.badge_differs and not q1.suggestion_differs
    assert q1.verdicts_a == (T, F, F, F) and q1.verdicts_b == (T, T, F, F)
    assert q3.differing_options == () and q3.suggestion_differs and not q3.badge_differs
    assert c.badge_counts_a == {"good": 3} and c.badge_counts_b == {"questionable": 1, "good": 2}


def test_kappa_zero_when_agreement_is_what_chance_gives() -> None:
    """A = T T F F, B = T F T F: p_o = 1/2, p_e = ½·½ + ½·½ = 1/2, so κ = 0."""
    c = compare_runs(side(1, Q("q1", (T, T, F, F))), side(2, Q("q1", (T, F, T, F))))
    assert c.agreement == 0.5 and c.kappa == 0.0
    assert c.disagreements[0].differing_options == (1, 2)


def test_identical_one_label_runs_have_full_agreement_and_undefined_kappa() -> None:
    q = Q("q1", (F, F, F, F))
    c = compare_runs(side(1, q), side(2, q))
    assert c.agreement == 1.0 and math.isnan(c.kappa) and c.disagreements == ()


def test_different_quiz_versions_are_refused_or_compared_on_shared_questions() -> None:
    a = side(1, Q("q1", (T, F, F, F)), Q("q2", (T, F, F, F)), quiz_hash="one")
    b = side(2, Q("q1", (T, F, F, F)), Q("q3", (T, F, F, F)), quiz_hash="two")
    with pytest.raises(QuizMismatch, match="different versions of the quiz"):
        compare_runs(a, b)
    c = compare_runs(a, b, allow_other_version=True)
    assert c.questions == 1 and c.only_in_a == ("q2",) and c.only_in_b == ("q3",)


def test_stored_runs_compare_as_core_does(tmp_path: Path) -> None:
    """Two real runs by judges of different TPR/TNR: compare_stored equals compare_runs on the
    summaries the runs returned, and κ equals agreement.cohen_kappa on the raw verdicts."""
    db = tmp_path / "runs.db"
    _, (sa, sb) = vet_twice(db)
    with Store(db) as store:
        result = compare_stored(store, sa.run_id, sb.run_id)
    c = result.comparison
    direct = compare_runs(
        RunSide(sa.run_id, sa.judge_label, "same", sa.questions),
        RunSide(sb.run_id, sb.judge_label, "same", sb.questions),
    )
    assert c.disagreements == direct.disagreements and c.kappa == direct.kappa
    flat_a = [v for q in sa.questions for v in q.verdicts]
    flat_b = [v for q in sb.questions for v in q.verdicts]
    assert c.kappa == pytest.approx(cohen_kappa(flat_a, flat_b))
    assert c.agreed == sum(x == y for x, y in zip(flat_a, flat_b, strict=True))
    assert 0 < len(c.disagreements) < len(sa.questions)  # the judges differ, not everywhere


def test_unknown_ids_same_id_and_other_quiz_are_clear_errors(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _, (sa, sb) = vet_twice(db)
    vet_twice(db, make_quiz(5, title="Other quiz"))
    with Store(db) as store:
        with pytest.raises(QuiztuiError, match="no run with id 99"):
            compare_stored(store, sa.run_id, 99)
        with pytest.raises(QuiztuiError, match="itself"):
            compare_stored(store, sa.run_id, sa.run_id)
        with pytest.raises(QuiztuiError, match="different versions.*Other quiz"):
            compare_stored(store, sa.run_id, 3)


def test_store_listings_count_what_the_runs_stored(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    quiz, (sa, sb) = vet_twice(db)
    with Store(db) as store:
        listings = store.run_listings()
        only_b = store.run_listings(1)
        none = store.run_listings(kind="calibrate")
        same = store.run_listings(quiz_hash=quiz.content_hash())
    assert [r.id for r in listings] == [sb.run_id, sa.run_id]  # newest first
    for listing, summary in zip(listings, (sb, sa), strict=True):
        assert listing.badge_counts == summary.badge_counts
        assert listing.questions == len(quiz.questions) and listing.assertions == 48
        assert listing.judged == summary.judged and listing.unjudged == summary.unjudged
        assert listing.has_summary and listing.cost is None and listing.simulated
    assert [r.id for r in only_b] == [sb.run_id] and none == [] and len(same) == 2


class GatedProvider(SimulatedProvider):
    """The simulated judge, answering its first request only: later ones wait for ever, so a
    run can be stopped after exactly one batch."""

    async def complete(self, request, **kwargs):  # type: ignore[no-untyped-def]
        if self.usage.requests >= 1:
            await asyncio.Event().wait()
        return await super().complete(request, **kwargs)


def test_a_cancelled_run_is_rebuilt_from_its_verdicts(tmp_path: Path) -> None:
    """A run stopped after its first batch stored no summary; opened, its judged verdicts are
    the stored ones, the rest pending, and questions with every option judged are scored."""
    db = tmp_path / "runs.db"
    quiz = make_quiz()
    provider = GatedProvider(truth_table(quiz), tpr=0.9, tnr=0.9, seed=3)

    async def stop_early() -> None:
        with Store(db) as store:
            run = VetRun(
                quiz,
                provider,
                store,
                load_prompt("judge_assertions"),
                VetSettings(seed=7, batch_size=8, concurrency=1),
            )
            events = run.events()
            async for event in events:
                assert not isinstance(event, RunFinished)
                if isinstance(event, UsageUpdated):
                    break
            await events.aclose()  # type: ignore[attr-defined]

    asyncio.run(stop_early())
    with Store(db) as store:
        [listing] = store.run_listings()
        loaded = load_run(store, listing.id)
        stored = store.verdicts(listing.id)
    assert listing.status == "cancelled" and not listing.has_summary
    assert "cancelled" in loaded.note and loaded.rebuilt
    s = loaded.summary
    judged = [v for q in s.questions for v in q.verdicts if v is not None]
    assert len(judged) == s.judged == len(stored) == listing.judged
    assert s.judged == 8 and s.not_run == 40  # one batch of 8 judged, then stopped
    for q in s.questions:
        complete = all(v is not None for v in q.verdicts)
        assert (q.badge != "pending") == complete
