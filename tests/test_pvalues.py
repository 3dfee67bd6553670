"""The lint statistics' p-values in plain Python (``core/pvalues.py``) against scipy.stats."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from quiztui.core.lint_bank import uniformity_test
from quiztui.core.pvalues import binomial_pvalue, chi2_sf, gammaincc

RELATIVE = 1e-9
# Below this scipy's own binomial cdf underflows to 0 (binom.cdf(38, 2000, 1/3) is 0.0, the sum
# of its terms 9.2e-284), so the comparison stops there.
FLOOR = 1e-200


def _close(ours: float, theirs: float) -> bool:
    return math.isclose(ours, theirs, rel_tol=RELATIVE) or (ours < FLOOR and theirs < FLOOR)


def _binomial_cases() -> list[tuple[int, int, float]]:
    rng = random.Random(20)
    cases = [(0, 1, 0.5), (1, 1, 0.5), (5, 10, 0.5), (3, 10, 0.5), (7, 10, 0.5), (2, 9, 0.25)]
    cases += [(n // 4, n, 0.25) for n in (4, 8, 40, 400)]  # k == p·n: p = 1
    for _ in range(400):
        n = rng.choice([1, 2, 3, 7, 12, 30, 64, 150, 600, 3000])
        p = rng.choice([0.5, 0.25, 1 / 3, 0.2, 1 / 6, rng.random()])
        cases.append((rng.randint(0, n), n, p))
    return cases


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_binomial_pvalue_equals_scipy_binomtest(alternative: str) -> None:
    from scipy.stats import binomtest  # here, not at collection: a second in every worker

    mismatches = []
    for k, n, p in _binomial_cases():
        ours = binomial_pvalue(k, n, p, alternative)  # type: ignore[arg-type]
        theirs = float(binomtest(k, n, p, alternative=alternative).pvalue)
        if not _close(ours, theirs):
            mismatches.append((k, n, p, ours, theirs))
    assert not mismatches, mismatches[:5]


def test_binomial_two_sided_counts_outcomes_as_likely_as_the_observed() -> None:
    # p = 0.5 is symmetric: k and n − k are equally likely, so the two tails are equal.
    assert binomial_pvalue(2, 10, 0.5) == pytest.approx(
        2 * sum(math.comb(10, i) for i in range(3)) / 1024
    )
    assert binomial_pvalue(5, 10, 0.5) == 1.0
    assert binomial_pvalue(0, 5, 0.0) == 1.0 and binomial_pvalue(3, 5, 0.0) == 0.0
    with pytest.raises(ValueError):
        binomial_pvalue(4, 3, 0.5)
    with pytest.raises(ValueError):
        binomial_pvalue(1, 3, 1.5)


def test_chi2_sf_equals_scipy() -> None:
    from scipy.stats import chi2

    rng = random.Random(9)
    cases = [(0.0, 1), (1e-12, 3), (0.5, 1), (3.84, 1), (7.81, 3), (200.0, 5), (1500.0, 25)]
    for _ in range(1500):
        df = rng.randint(1, 40)
        x = rng.choice([rng.random(), rng.random() * 3 * df, rng.random() * 400])
        cases.append((x, df))
    mismatches = [
        (x, df, chi2_sf(x, df), float(chi2.sf(x, df)))
        for x, df in cases
        if not _close(chi2_sf(x, df), float(chi2.sf(x, df)))
    ]
    assert not mismatches, mismatches[:5]
    assert gammaincc(1.0, 2.0) == pytest.approx(math.exp(-2.0), rel=1e-14)  # Q(1, x) = e^(−x)
    with pytest.raises(ValueError):
        gammaincc(0.0, 1.0)


def test_uniformity_test_equals_scipy_chisquare_where_it_uses_the_approximation() -> None:
    from scipy.stats import chisquare

    rng = random.Random(3)
    for _ in range(300):
        k = rng.randint(2, 8)
        counts = [rng.randint(5, 60) for _ in range(k)]  # every expected count at least 5
        statistic, pvalue = uniformity_test(counts)
        expected = chisquare(counts)
        assert statistic == pytest.approx(float(expected.statistic), rel=1e-12)
        assert _close(pvalue, float(expected.pvalue)), (counts, pvalue, expected.pvalue)


def test_linting_a_quiz_imports_no_scipy(tmp_path: Path) -> None:
    # Every key is the first and the longest option: L108 and L109 run their tests and fire.
    items = [
        {"question": f"Question {i}?", "responses": [f"right answer {i}", "no", "nay"]}
        for i in range(30)
    ]
    for item in items:
        item["correct"] = item["responses"][0]
    quiz = tmp_path / "biased.json"
    quiz.write_text(json.dumps(items), encoding="utf-8")
    code = (
        "import sys\n"
        "from quiztui.core.lint import lint_quiz\n"
        "from quiztui.core.lint_model import LintSettings\n"
        "from quiztui.formats import load_quiz\n"
        "report = lint_quiz(load_quiz(sys.argv[1]), LintSettings())\n"
        "print(','.join(sorted({f.code for f in report.findings})), 'scipy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(quiz)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "L108" in out[0].split(",") and "L109" in out[0].split(","), out
    assert out[-1] == "False"
