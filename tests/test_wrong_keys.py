"""The expected number of wrong keys (issue 26 item 3): the Poisson-binomial sum of the questions'
P(key wrong), exact, with its equal-tailed interval, worded once for every face."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from quiztui.core.wrong_keys import (
    expected_wrong_keys,
    poisson_binomial,
    wrong_keys_of,
    wrong_keys_text,
)


def brute_force(ps: list[float]) -> list[float]:
    out = [0.0] * (len(ps) + 1)
    for outcome in itertools.product((0, 1), repeat=len(ps)):
        mass = math.prod(p if o else 1 - p for p, o in zip(ps, outcome, strict=True))
        out[sum(outcome)] += mass
    return out


def test_the_distribution_is_the_exact_poisson_binomial() -> None:
    rng = random.Random(3)
    for _ in range(20):
        ps = [rng.random() ** 3 for _ in range(rng.randint(1, 10))]
        got = poisson_binomial(ps)
        want = brute_force(ps)
        assert len(got) >= len(want) or sum(want[len(got) :]) < 1e-15
        for k, w in enumerate(want):
            assert (got[k] if k < len(got) else 0.0) == pytest.approx(w, abs=1e-12)


def test_equal_probabilities_give_the_binomial_and_its_interval() -> None:
    w = expected_wrong_keys([0.5] * 10)
    assert w.expected == pytest.approx(5.0)
    # Binomial(10, 0.5): P(S <= 1) = 0.0107 < 0.025 <= P(S <= 2) = 0.0547;
    # P(S <= 7) = 0.9453 < 0.975 <= P(S <= 8) = 0.9893.
    assert (w.low, w.high) == (2, 8)
    assert w.questions == 10


def test_a_sure_quiz_expects_no_wrong_key_and_a_sure_wrong_one_all() -> None:
    assert (expected_wrong_keys([0.0] * 50).low, expected_wrong_keys([0.0] * 50).high) == (0, 0)
    w = expected_wrong_keys([1.0] * 7)
    assert (w.expected, w.low, w.high) == (7.0, 7, 7)
    assert expected_wrong_keys([]).high == 0


def test_a_large_quiz_is_cut_only_where_no_mass_is() -> None:
    rng = random.Random(5)
    ps = [rng.random() * 0.05 for _ in range(25_000)]
    pmf = poisson_binomial(ps)
    assert len(pmf) < 2_000  # cut far below 25,001 cells
    assert sum(pmf) == pytest.approx(1.0, abs=1e-12)
    w = expected_wrong_keys(ps)
    sd = math.sqrt(sum(p * (1 - p) for p in ps))
    assert w.low < w.expected < w.high
    assert w.high - w.low == pytest.approx(2 * 1.96 * sd, abs=3)  # near-normal at this size


def test_bad_probabilities_are_refused() -> None:
    with pytest.raises(ValueError):
        expected_wrong_keys([0.2, float("nan")])
    with pytest.raises(ValueError):
        expected_wrong_keys([1.5])
    with pytest.raises(ValueError):
        expected_wrong_keys([0.1], level=1.0)


def test_the_wording() -> None:
    w = wrong_keys_of([0.99] * 117 + [0.4, 0.3, 0.5])  # confidences: 1.8 + 0.03 * 117 … wrong
    text = wrong_keys_text(w)
    assert text.startswith(f"expect {w.expected:.1f} wrong keys [{w.low}, {w.high}]")
    assert text.endswith("in 120 questions (95 % interval)")
    assert wrong_keys_text(expected_wrong_keys([1.0])) == (
        "expect 1.0 wrong key [1, 1] in 1 question (95 % interval)"
    )
    assert "expect 30 wrong keys" in wrong_keys_text(expected_wrong_keys([0.3] * 100))
