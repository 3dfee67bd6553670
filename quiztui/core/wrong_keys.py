"""How many keys of the quiz are wrong: the sum of the questions' P(key wrong), with an interval.

Each question's key is wrong with its own probability ``p_i`` (1 − the question's confidence);
the number of wrong keys is then a sum of independent Bernoulli(p_i): a Poisson-binomial
variable. Its mean is Σ p_i; its distribution comes from the exact dynamic programme over the
questions (``pmf_k`` after one more question is ``pmf_k (1 − p) + pmf_{k−1} p``), cut at
``mean + 10 sd + 40`` where the mass left out is below 1e-20 (a Bernstein bound), so a
25,000-question quiz costs 25,000 vector steps of a few hundred cells. The interval is the
equal-tailed one: the smallest counts whose cumulative probability reaches (1 − level)/2 and
(1 + level)/2.

Every face (the reports, the headless summary, the panel report) words it through
:func:`wrong_keys_text`: ``expect 3.2 wrong keys [1, 6] in 120 questions (95 % interval)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

LEVEL = 0.95
_TAIL_SDS = 10.0
_TAIL_SLACK = 40


@dataclass(frozen=True, slots=True)
class WrongKeys:
    expected: float  # Σ P(key wrong)
    low: int  # the interval's ends, in whole keys
    high: int
    level: float
    questions: int

    def to_dict(self) -> dict[str, object]:
        return {
            "expected": self.expected,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "questions": self.questions,
            "text": wrong_keys_text(self),
        }


def poisson_binomial(p_wrong: Sequence[float]) -> list[float]:
    """P(exactly k keys wrong) for k = 0, 1, …, up to the cut (module doc)."""
    import numpy as np

    ps = np.asarray(p_wrong, dtype=float)
    if ps.size and (not np.all(np.isfinite(ps)) or ps.min() < 0.0 or ps.max() > 1.0):
        raise ValueError("P(key wrong) must be a probability in [0, 1] for every question")
    mean = float(ps.sum())
    sd = math.sqrt(float(np.sum(ps * (1.0 - ps))))
    cap = min(int(ps.size), math.ceil(mean + _TAIL_SDS * sd) + _TAIL_SLACK)
    pmf = np.zeros(cap + 1)
    pmf[0] = 1.0
    top = 0  # the highest count with mass so far
    for p in ps[ps > 0.0]:
        top = min(top + 1, cap)
        head = pmf[:top].copy()
        pmf[: top + 1] *= 1.0 - p
        pmf[1 : top + 1] += head * p
    return [float(x) for x in pmf]


def expected_wrong_keys(p_wrong: Sequence[float], level: float = LEVEL) -> WrongKeys:
    """The expected number of wrong keys and its ``level`` interval (module doc)."""
    if not 0.0 < level < 1.0:
        raise ValueError("level must be in (0, 1)")
    pmf = poisson_binomial(p_wrong)
    lower, upper = (1.0 - level) / 2.0, (1.0 + level) / 2.0
    low = high = len(pmf) - 1
    cumulative = 0.0
    found_low = False
    for k, mass in enumerate(pmf):
        cumulative += mass
        if not found_low and cumulative >= lower - 1e-12:
            low, found_low = k, True
        if cumulative >= upper - 1e-12:
            high = k
            break
    return WrongKeys(float(sum(p_wrong)), low, high, level, len(p_wrong))


def wrong_keys_text(w: WrongKeys) -> str:
    """``expect 3.2 wrong keys [1, 6] in 120 questions (95 % interval)``."""
    mean = f"{w.expected:.0f}" if w.expected >= 10 else f"{w.expected:.1f}"
    noun = "wrong key" if mean in ("1", "1.0") else "wrong keys"
    questions = "question" if w.questions == 1 else "questions"
    return (
        f"expect {mean} {noun} [{w.low}, {w.high}] in {w.questions} {questions}"
        f" ({w.level * 100:g} % interval)"
    )


def wrong_keys_short(w: WrongKeys) -> str:
    """The header's form, where every column counts: ``~3.2 wrong keys [1, 6]`` (about 3.2
    expected, 95 % interval 1 to 6)."""
    mean = f"{w.expected:.0f}" if w.expected >= 10 else f"{w.expected:.1f}"
    noun = "wrong key" if mean in ("1", "1.0") else "wrong keys"
    return f"~{mean} {noun} [{w.low}, {w.high}]"


def worth_text(p_wrong: float, *, disagree: bool, judges: int = 1) -> str:
    """What a question's P(key wrong) is worth, in words, for the detail view: ``on questions
    like this, judges that disagree with the key are right about 1 time in 9: check it``.
    ``disagree``: a judge left the key on this question."""
    if p_wrong >= 0.5:
        return (
            f"on questions like this the key is wrong more often than right"
            f" (P(key wrong) {p_wrong:.2f}): fix it"
        )
    if p_wrong < 0.01:
        return "on questions like this the key is right more than 99 times in 100"
    times = max(2, round(1.0 / p_wrong))
    if disagree:
        who = "a judge that disagrees" if judges == 1 else "judges that disagree"
        verb = "is" if judges == 1 else "are"
        text = f"on questions like this, {who} with the key {verb} right about 1 time in {times}"
    else:
        text = f"on questions like this the key is wrong about 1 time in {times}"
    return text + (": check it" if p_wrong >= 0.05 else "")


def wrong_keys_of(confidences: Sequence[float], level: float = LEVEL) -> WrongKeys:
    """From the questions' confidence (P(key right)), as runs and panels keep it. The same
    confidences give the same figure at once: a headless run's summary line and its report
    both ask for it (a few ms each for 400 questions)."""
    return _wrong_keys_of(tuple(confidences), level)


@functools.lru_cache(maxsize=4)
def _wrong_keys_of(confidences: tuple[float, ...], level: float) -> WrongKeys:
    return expected_wrong_keys([min(max(1.0 - c, 0.0), 1.0) for c in confidences], level)


__all__ = ["LEVEL", "WrongKeys", "expected_wrong_keys", "poisson_binomial", "worth_text",
           "wrong_keys_of", "wrong_keys_short", "wrong_keys_text"]  # fmt: skip
