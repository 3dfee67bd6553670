"""MultiQ&A robustness metrics (R1): loop references, statsmodels' Fleiss κ, KR-20, guessing limits."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter

import numpy as np
import numpy.typing as npt
import pytest

from quiztui.core.robustness import (
    MISSING,
    count_table,
    fleiss_kappa_counts,
    guessing_limits,
    kr20,
    per_question,
    question_row,
    summarise,
)

PER_QUESTION_FLOATS = (
    "accuracy",
    "worst",
    "best",
    "plurality",
    "difficulty",
    "certainty",
    "m2",
    "agreement",
)

# --- data and plain-Python references -----------------------------------------------------------


def random_quiz(
    seed: int,
    n: int,
    raters: int,
    k: int | tuple[int, int],
    missing: float = 0.0,
    consistency: float = 0.5,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Answers with per-question agreement: each rater gives the question's favourite code with
    probability ``consistency``, else a uniform guess; ``k`` fixed or a (low, high) range."""
    rng = np.random.default_rng(seed)
    if isinstance(k, tuple):
        ks = rng.integers(k[0], k[1] + 1, n)
    else:
        ks = np.full(n, k)
    favourite = (rng.random(n) * ks).astype(np.int64)
    guesses = (rng.random((n, raters)) * ks[:, None]).astype(np.int64)
    answers = np.where(rng.random((n, raters)) < consistency, favourite[:, None], guesses)
    answers[rng.random((n, raters)) < missing] = MISSING
    correct = (rng.random(n) * ks).astype(np.int64)
    correct[rng.random(n) < 0.05] = -1  # no category is right
    return answers.astype(np.int64), correct, ks.astype(np.int64)


def reference_question(row: list[int], correct: int, k: int) -> dict[str, float]:
    """Seed §5 for one question, written out with loops and the math module."""
    given = [x for x in row if x != MISSING]
    a = len(given)
    nan = math.nan
    out: dict[str, float] = {
        "accuracy": nan if row[0] == MISSING else float(row[0] == correct),
        "answered": float(a),
    }
    if a == 0:
        out.update({name: nan for name in PER_QUESTION_FLOATS if name != "accuracy"})
        out["mode"] = MISSING
        return out
    scores = [1 if x == correct else 0 for x in given]
    out["worst"] = float(min(scores))
    out["best"] = float(max(scores))
    out["difficulty"] = sum(scores) / a
    counts = Counter(given)
    most = max(counts.values())
    tied = sorted(code for code, c in counts.items() if c == most)
    mode = row[0] if row[0] in tied else tied[0]
    out["mode"] = mode
    out["plurality"] = float(mode == correct)
    shares = [c / a for c in counts.values()]
    if k == 1:
        out["certainty"] = 1.0
        out["m2"] = 1.0
    else:
        out["certainty"] = 1.0 + sum(p * math.log(p) for p in shares) / math.log(k)
        out["m2"] = 1.0 - k / (k - 1) * (1.0 - sum(p * p for p in shares))
    if a < 2:
        out["agreement"] = nan
    else:
        out["agreement"] = (sum(c * c for c in counts.values()) - a) / (a * (a - 1))
    return out


def kr20_loop(m: list[list[int]]) -> float:
    """Textbook KR-20: items are the rows (questions), respondents the columns (raters)."""
    items = len(m)
    raters = len(m[0])
    pq = 0.0
    for row in m:
        p = sum(row) / raters
        pq += p * (1.0 - p)
    totals = [sum(m[j][i] for j in range(items)) for i in range(raters)]
    mean = sum(totals) / raters
    variance = sum((t - mean) ** 2 for t in totals) / raters  # population variance
    return items / (items - 1) * (1.0 - pq / variance)


def cronbach_ddof1(m: list[list[int]]) -> float:
    """Cronbach's α with sample (ddof = 1) variances of every item and of the totals."""
    items = len(m)
    item_var = sum(statistics.variance(row) for row in m)
    totals = [sum(col) for col in zip(*m, strict=True)]
    return items / (items - 1) * (1.0 - item_var / statistics.variance(totals))


def same(x: float, y: float, tol: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol


# --- per-question metrics -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "raters", "k", "missing"),
    [
        (1, 2, 2, 0.0),
        (2, 6, 4, 0.0),
        (3, 6, 5, 0.2),
        (4, 3, (1, 6), 0.3),
        (5, 4, 3, 0.5),  # many ties and many all-missing rows
        (6, 6, (1, 4), 0.1),
    ],
)
def test_per_question_matches_loop_reference(
    seed: int, raters: int, k: int | tuple[int, int], missing: float
) -> None:
    answers, correct, ks = random_quiz(seed, 600, raters, k, missing, consistency=0.3)
    q = per_question(answers, correct, ks)
    ties_broken_by_identity = 0
    for j in range(len(correct)):
        row = [int(x) for x in answers[j]]
        ref = reference_question(row, int(correct[j]), int(ks[j]))
        for name in PER_QUESTION_FLOATS:
            got = float(getattr(q, name)[j])
            assert same(got, ref[name], 1e-12), (j, name, row, got, ref[name])
        assert int(q.mode[j]) == ref["mode"], (j, row)
        assert int(q.answered[j]) == ref["answered"]
        assert bool(q.complete[j]) == (MISSING not in row)
        counts = Counter(x for x in row if x != MISSING)
        if counts and row[0] != MISSING and row[0] != min(counts, key=lambda c: (-counts[c], c)):
            ties_broken_by_identity += int(q.mode[j]) == row[0]
    if missing < 0.5:
        assert ties_broken_by_identity > 0  # the identity-first tie-break was exercised


def test_count_table_matches_loop() -> None:
    answers, _, ks = random_quiz(7, 300, 5, (1, 6), missing=0.2)
    table = count_table(answers, ks)
    assert table.shape == (300, int(ks.max()))
    expected = np.zeros_like(table)
    for j, row in enumerate(answers.tolist()):
        for x in row:
            if x != MISSING:
                expected[j, x] += 1
    assert np.array_equal(table, expected)


def test_question_row_matches_per_question_with_none_for_nan() -> None:
    row = question_row([2, 2, MISSING, 1], 2, 3)
    ref = reference_question([2, 2, MISSING, 1], 2, 3)
    assert set(row) == {*PER_QUESTION_FLOATS, "mode", "answered"}
    for name in PER_QUESTION_FLOATS:
        assert row[name] == pytest.approx(ref[name], abs=1e-12)
    assert row["mode"] == 2 and row["answered"] == 3
    assert all(type(v) in (float, int) for v in row.values())
    empty = question_row([MISSING, MISSING], 0, 2)
    assert empty["answered"] == 0 and empty["mode"] is None
    assert all(empty[name] is None for name in PER_QUESTION_FLOATS)
    one = question_row([MISSING, 1], 1, 2)
    assert one["accuracy"] is None and one["agreement"] is None and one["plurality"] == 1.0


# --- edge cases -----------------------------------------------------------------------------------


def test_all_agree_question_is_fully_certain() -> None:
    q = per_question([[3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0]], [3, 1], [4, 5])
    assert q.certainty.tolist() == [1.0, 1.0]
    assert q.m2.tolist() == [1.0, 1.0]
    assert q.agreement.tolist() == [1.0, 1.0]
    assert q.worst.tolist() == [1.0, 0.0] and q.best.tolist() == [1.0, 0.0]
    assert q.plurality.tolist() == [1.0, 0.0] and q.mode.tolist() == [3, 0]


def test_single_category_question() -> None:
    q = per_question([[0, 0, MISSING]], [0], [1])
    assert q.certainty[0] == 1.0 and q.m2[0] == 1.0 and q.agreement[0] == 1.0
    assert q.accuracy[0] == 1.0 and q.difficulty[0] == 1.0
    s = summarise([[0, 0], [0, 0]], [0, 0], [1, 1])
    assert math.isnan(s.fleiss_kappa)  # P_e = 1: every rating in one category
    assert math.isnan(s.cronbach_alpha)  # the raters' totals do not vary


def test_all_missing_row_is_nan_and_excluded() -> None:
    answers = [[MISSING, MISSING, MISSING], [1, 1, 0], [0, MISSING, 0]]
    q = per_question(answers, [1, 1, 0], [2, 2, 2])
    for name in PER_QUESTION_FLOATS:
        assert math.isnan(getattr(q, name)[0]), name
    assert q.mode[0] == MISSING and q.answered.tolist() == [0, 3, 2]
    assert q.complete.tolist() == [False, True, False]
    s = summarise(answers, [1, 1, 0], [2, 2, 2])
    assert (s.n, s.raters, s.answered_questions, s.complete_questions) == (3, 3, 2, 1)
    assert s.missing_answers == 4
    assert s.accuracy == 1.0 and s.worst == 0.5 and s.best == 1.0
    assert s.difficulty == pytest.approx((2 / 3 + 1) / 2)
    assert math.isnan(s.cronbach_alpha)  # one complete question


def test_negative_correct_scores_every_answer_wrong() -> None:
    q = per_question([[0, 1, 1], [MISSING, MISSING, MISSING]], [-1, -1], [3, 3])
    assert q.accuracy[0] == 0.0 and q.best[0] == 0.0 and q.plurality[0] == 0.0
    assert q.difficulty[0] == 0.0 and q.mode[0] == 1
    assert math.isnan(q.best[1])


def test_summary_averages_a_worst_best_plurality_over_one_question_set() -> None:
    # Question 0 has no identity answer but three right paraphrases (Ω_0 = 1); question 1 is wrong
    # throughout. Averaged over its own set, Ω would be 0.5 > A = 0: the ordering would break.
    answers = [[MISSING, 1, 1, 1], [0, 0, 0, 0]]
    s = summarise(answers, [1, 1], [2, 2])
    assert (s.accuracy, s.worst, s.best, s.plurality) == (0.0, 0.0, 0.0, 0.0)
    assert s.difficulty == 0.5  # µD keeps every answered question
    assert s.ordering_holds


def test_empty_quiz_is_nan() -> None:
    s = summarise(np.zeros((0, 6), dtype=np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert s.n == 0 and s.raters == 6 and s.complete_questions == 0
    assert math.isnan(s.accuracy) and math.isnan(s.fleiss_kappa) and not s.ordering_holds


@pytest.mark.parametrize(
    ("answers", "correct", "k", "message"),
    [
        ([0, 1, 2], [0], [3], "2-D"),
        ([[0, 1], [2, 4], [9, 0]], [0, 0, 0], [3, 4, 3], r"row 1, column 1\] = 4"),
        ([[0, 1], [2, 3]], [0, 0], [3, 3], r"row 1, column 1\] = 3"),
        ([[0, -2], [0, 0]], [0, 0], [3, 3], r"row 0, column 1\] = -2"),
        ([[0, 1]], [0, 0], [3], "correct must hold one code"),
        ([[0, 1]], [0], [3, 3], "k must hold one count"),
        ([[0, 0]], [0], [0], "at least one category"),
        ([[0, 1]], [3], [3], r"correct\[0\] = 3"),
        ([[0.0, 1.0]], [0], [3], "integers"),
        (np.zeros((2, 0), dtype=int), [0, 0], [2, 2], "at least one rater"),
    ],
)
def test_invalid_input_is_rejected(
    answers: object, correct: object, k: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        per_question(answers, correct, k)  # type: ignore[arg-type]


def test_helper_validation() -> None:
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_kappa_counts([[2, 0], [1, 2]])
    with pytest.raises(ValueError, match="0/1"):
        kr20([[0, 2], [1, 1]])
    with pytest.raises(ValueError):
        guessing_limits(0, 6)
    assert math.isnan(fleiss_kappa_counts(np.zeros((0, 3))))
    assert math.isnan(fleiss_kappa_counts([[1, 0], [0, 1]]))  # one rating per subject
    assert math.isnan(kr20([[0, 1, 1]]))  # one item
    assert math.isnan(kr20([[0, 1], [1, 0]]))  # every rater totals 1


# --- Fleiss' κ against statsmodels --------------------------------------------------------------


@pytest.mark.parametrize("raters", [2, 6])
@pytest.mark.parametrize("k", [2, 4, 5])
@pytest.mark.parametrize(
    ("seed", "n", "missing"), [(11, 200, 0.0), (12, 2000, 0.05), (13, 700, 0.2)]
)
def test_fleiss_kappa_equals_statsmodels(
    seed: int, n: int, missing: float, raters: int, k: int
) -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    answers, correct, ks = random_quiz(seed * 100 + raters * 10 + k, n, raters, k, missing)
    complete_rows = answers[(answers != MISSING).all(axis=1)]
    table, _ = inter_rater.aggregate_raters(complete_rows, n_cat=k)
    expected = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    s = summarise(answers, correct, ks)
    assert s.complete_questions == len(complete_rows)
    assert abs(s.fleiss_kappa - expected) <= 1e-9
    assert abs(fleiss_kappa_counts(table) - expected) <= 1e-9
    if missing == 0.0:
        assert s.complete_questions == n


def test_fleiss_kappa_with_mixed_k_equals_statsmodels_on_the_max_k_table() -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    answers, correct, ks = random_quiz(21, 1500, 6, (2, 5), missing=0.03)
    complete = (answers != MISSING).all(axis=1)
    table, _ = inter_rater.aggregate_raters(answers[complete], n_cat=int(ks.max()))
    expected = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    assert abs(summarise(answers, correct, ks).fleiss_kappa - expected) <= 1e-9
    assert np.array_equal(count_table(answers, ks)[complete], table)


# --- Cronbach's α / KR-20 -----------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "n", "raters"), [(31, 200, 6), (32, 1000, 6), (33, 500, 3)])
def test_kr20_equals_loop_and_ddof1_cronbach(seed: int, n: int, raters: int) -> None:
    answers, correct, ks = random_quiz(seed, n, raters, 4, missing=0.05, consistency=0.6)
    complete = (answers != MISSING).all(axis=1)
    m = (answers[complete] == correct[complete][:, None]).astype(int)
    expected = kr20_loop(m.tolist())
    assert abs(kr20(m) - expected) <= 1e-9
    assert abs(cronbach_ddof1(m.tolist()) - expected) <= 1e-9
    assert abs(summarise(answers, correct, ks).cronbach_alpha - expected) <= 1e-9
    assert abs(kr20(m.astype(bool)) - expected) <= 1e-9
    # The usual orientation (forms as items, questions as respondents) is KR-20 of the transpose.
    forms = kr20_loop(m.T.tolist())
    assert abs(summarise(answers, correct, ks).cronbach_alpha_forms - forms) <= 1e-9


# --- random guessing (seed §5.1) ------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 4, 5])
def test_random_guessing_limits_hold_in_simulation(k: int) -> None:
    """v = 5 paraphrases (r = 6) guessing uniformly among k options, 200,000 questions.

    The key is drawn uniformly and independently of the guesses, so P(mode = key) = 1/k exactly
    whatever the tie-break: the mode is a function of the guesses alone. For a *fixed* key the
    identity-first tie-break is not symmetric in the codes (its fallback is the smallest tied
    code); ``test_plurality_tie_break_under_uniform_guessing_is_exact_by_enumeration`` measures
    that. Tolerance: 5 binomial standard errors of each mean.
    """
    n, raters = 200_000, 6
    rng = np.random.default_rng(20240 + k)
    answers = rng.integers(0, k, (n, raters))
    correct = rng.integers(0, k, n)
    s = summarise(answers, correct, np.full(n, k))
    limits = guessing_limits(k, raters)

    def within(observed: float, p: float, trials: int) -> None:
        se = math.sqrt(p * (1 - p) / trials)
        assert abs(observed - p) <= 5 * se, (observed, p, se)

    within(s.accuracy, limits["accuracy"], n)
    within(s.plurality, limits["plurality"], n)
    within(s.difficulty, limits["difficulty"], n * raters)
    within(s.best, limits["best"], n)
    within(s.worst, limits["worst"], n)
    assert limits["best"] == pytest.approx(1 - (1 - 1 / k) ** 6)
    assert limits["worst"] == pytest.approx((1 / k) ** 6)
    assert s.ordering_holds


@pytest.mark.parametrize("k", [2, 4, 5])
def test_plurality_tie_break_under_uniform_guessing_is_exact_by_enumeration(k: int) -> None:
    """All k^6 equally likely guess patterns: P(mode = c) per code c, computed exactly.

    Averaged over a uniform key it is exactly 1/k. For k = 2 every tie (3–3) includes the
    identity's answer, so P(mode = c) = 1/2 for each c; for k ≥ 3 ties that miss the identity fall
    back to the smallest code, so a fixed key 0 has P > 1/k and the highest code P < 1/k.
    """
    raters = 6
    answers = np.array(list(itertools.product(range(k), repeat=raters)))
    total = len(answers)
    q = per_question(answers, np.zeros(total, dtype=np.int64), np.full(total, k))
    by_code = np.bincount(q.mode, minlength=k)
    assert by_code.sum() == total
    assert float(q.plurality.mean()) == by_code[0] / total
    assert by_code.mean() / total == pytest.approx(1 / k, abs=1e-15)
    if k == 2:
        assert by_code.tolist() == [total // 2, total // 2]
    else:
        assert by_code[0] > total / k > by_code[-1]
        assert (np.diff(by_code) < 0).all()


# --- the ordering Ω ≤ min(Ŷ, A) ≤ max(Ŷ, A) ≤ O ----------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_ordering_holds_with_missing_answers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters = int(rng.integers(1, 8))
    answers, correct, ks = random_quiz(
        1000 + seed,
        int(rng.integers(5, 400)),
        raters,
        (1, 5),
        missing=float(rng.uniform(0, 0.6)),
        consistency=float(rng.uniform(0, 1)),
    )
    s = summarise(answers, correct, ks)
    q = per_question(answers, correct, ks)
    present = ~np.isnan(q.accuracy)
    low = np.minimum(q.plurality, q.accuracy)[present]
    high = np.maximum(q.plurality, q.accuracy)[present]
    assert (q.worst[present] <= low).all() and (low <= high).all()
    assert (high <= q.best[present]).all()
    if present.any():
        assert s.ordering_holds
        assert s.worst <= min(s.plurality, s.accuracy) + 1e-12
        assert max(s.plurality, s.accuracy) <= s.best + 1e-12
    else:
        assert not s.ordering_holds
    assert 0.0 <= s.difficulty <= 1.0 or math.isnan(s.difficulty)
