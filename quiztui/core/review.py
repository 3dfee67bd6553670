"""Reviewing question quality (seed 004, MIRROR): criteria, reply parsers, convergence, agreement.

A reviewer rates a question 1–5 on five criteria and lists its strengths and flaws. In *direct*
mode one reviewer rates once. In *feedback* mode (MIRROR) two reviewers alternate: iteration 1 is
judge 1 with no feedback; iteration t > 1 is the other judge, shown the strengths and flaws of the
latest rating its partner produced. :func:`converged_at` is the stopping rule.

Parsers read the reply only (nothing from the prompt is parsed back). A reply without all five
scores raises :class:`~quiztui.core.replies.ReplyUnparsed` with what was missing; it is asked again
and then recorded *unparsed* with the reason — never given a made-up score. Strengths and flaws are
extracted by rule-based pattern matching (the paper's "rule-based pattern-matching algorithm"):
JSON lists when the reply has them, else headed sections tolerant of Markdown bullets, numbering,
bold or ``#`` headings and inline items (``Flaws: none``).

Agreement with human ratings (the seed's Tables 3 and 9 in form): Pearson r per criterion between
the judge's final scores and the mean human score, the exact-match share (judge score equals the
mean human score rounded half up), and Fleiss' κ among the human raters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quiztui.core.agreement import fleiss_kappa_labels
from quiztui.core.grading import REFUSAL_MARKERS
from quiztui.core.replies import JSONRefused, ReplyUnparsed, json_values

CRITERIA: tuple[str, ...] = (
    "grammaticality",
    "appropriateness",
    "relevance",
    "novelty",
    "complexity",
)
SHORT: dict[str, str] = {
    "grammaticality": "gram",
    "appropriateness": "appr",
    "relevance": "rel",
    "novelty": "nov",
    "complexity": "cplx",
}
CRITERION_HELP: dict[str, str] = {
    "grammaticality": "well-formed, fluent, correctly spelt and punctuated",
    "appropriateness": "fair, unambiguous, one defensible key, suitable for its audience",
    "relevance": "about the context (or its own subject) and answerable from it",
    "novelty": "not a stock question; a fresh angle on the material",
    "complexity": "cognitive demand: recall (1) up to analysis or evaluation (5)",
}
MODES: tuple[str, ...] = ("direct", "feedback")
MIN_FEEDBACK_ITERATIONS = 3  # the earliest iteration at which convergence can be declared

# The seed's figures for GPT-4 on its own data (EduProbe and SciQ, three educators), as published.
PAPER_EXACT_MATCH_DIRECT: dict[str, float] = {  # Table 9, % of questions, direct approach
    "grammaticality": 54.0,
    "appropriateness": 39.0,
    "relevance": 36.0,
    "novelty": 42.0,
    "complexity": 46.0,
}
PAPER_EXPERT_KAPPA: dict[str, float] = {  # section 4.4, Fleiss' κ among the three educators
    "grammaticality": 0.67,
    "appropriateness": 0.64,
    "relevance": 0.66,
    "novelty": 0.45,
    "complexity": 0.59,
}

Scores = tuple[int, ...]  # one 1–5 score per criterion, in CRITERIA order


@dataclass(frozen=True, slots=True)
class Review:
    """What one reply said: five scores and the strengths and flaws it listed."""

    scores: Scores
    strengths: tuple[str, ...] = ()
    flaws: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Iteration:
    """One rating in a question's trajectory. ``scores`` is None when the reply never parsed
    (``unparsed`` says why); a request that failed outright sets ``failed`` too."""

    number: int  # 1-based
    judge: int  # 1 or 2
    model: str
    scores: Scores | None
    strengths: tuple[str, ...] = ()
    flaws: tuple[str, ...] = ()
    reply: str = ""
    unparsed: str | None = None
    failed: bool = False
    attempts: int = 1
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """A question's review: the final scores (None: unscored, see ``unscored``) and trajectory.

    ``converged`` is None in direct mode; in feedback mode True when :func:`converged_at` found
    the rule met (at iteration ``converged_at``), False when the loop stopped without it.
    """

    question_id: str
    mode: str
    scores: Scores | None
    iterations: tuple[Iteration, ...]
    converged: bool | None = None
    converged_at: int | None = None
    unscored: str | None = None

    @property
    def scored(self) -> bool:
        return self.scores is not None

    def score(self, criterion: str) -> int | None:
        return None if self.scores is None else self.scores[CRITERIA.index(criterion)]


# The criteria a quiz question must meet. Novelty and complexity describe a question (a plain
# recall question is fine in a quiz), so a low score there is shown but does not flag it.
REWRITE_CRITERIA: tuple[str, ...] = ("grammaticality", "appropriateness", "relevance")


def needs_rewrite(scores: Scores | None, low_score: int) -> bool:
    """A question is flagged for rewriting when its final grammaticality, appropriateness or
    relevance score is at or below ``low_score``."""
    if scores is None:
        return False
    return min(scores[CRITERIA.index(c)] for c in REWRITE_CRITERIA) <= low_score


# --- the convergence rule ----------------------------------------------------------------------


def converged_at(trajectory: Sequence[Scores | None]) -> int | None:
    """The 1-based iteration at which the MIRROR loop converged, or None.

    The seed stops "when the scores from LLM1 and LLM2 become identical for two consecutive
    iterations". Iterations alternate judges, so iteration t's scores always come from the other
    judge than iteration t−1's. *Identical on one iteration* means iteration t's five scores
    equal iteration t−1's: the two judges' latest ratings agree. *For two consecutive
    iterations* means that happens at t−1 (vs t−2) and again at t (vs t−1). So the loop has
    converged at the first t ≥ 3 with

        scores[t−2] == scores[t−1] == scores[t]    (all five criteria, none missing)

    i.e. after the judges agreed, the first judge was shown that agreement and kept its scores.
    A single agreement can be a coincidence of one pass; requiring the agreeing rating to survive
    one more exchange is what "two consecutive" adds. An iteration without scores (an
    unparseable reply) breaks the chain.
    """
    for t in range(2, len(trajectory)):
        a, b, c = trajectory[t - 2], trajectory[t - 1], trajectory[t]
        if a is not None and a == b == c:
            return t + 1
    return None


def next_judge(iteration: int) -> int:
    """Judge 1 rates the odd iterations, judge 2 the even ones."""
    return 1 if iteration % 2 == 1 else 2


def final_scores(trajectory: Sequence[Scores | None]) -> Scores | None:
    """The loop's result: the agreed scores when it converged, else the latest scores given."""
    at = converged_at(trajectory)
    if at is not None:
        return trajectory[at - 1]
    return next((s for s in reversed(trajectory) if s is not None), None)


# --- parsing replies ---------------------------------------------------------------------------

_NAMES = "|".join(CRITERIA)
_DECOR = r"[\s*_`#>|]*"
# A score line: optional bullet/number/heading, the criterion (bold or not), an optional
# "score"/"rating" word, a separator, then the number (bold, "4/5", "4 out of 5" all fine).
_SCORE_LINE = re.compile(
    rf"^{_DECOR}(?:[-+•*]\s+|\d+[.)]\s+|[a-e][.)]\s+)?{_DECOR}({_NAMES}){_DECOR}"
    rf"(?:\s*(?:score|rating))?{_DECOR}(?:[:=\-–—|]|\bis\b)?{_DECOR}"
    rf"(?:\(\s*)?(\d+(?:\.\d+)?)(?:\s*(?:/|out\s+of)\s*(\d+))?\b",
    re.I | re.M,
)
_SECTION_WORD = re.compile(
    r"^(?:#{1,6}\s*|>\s*)?(?:[-+•*]\s+|\d+[.)]\s+)?[*_]*\s*(?:key\s+|main\s+|major\s+)?"
    r"(?P<word>strengths?|pros|positives|flaws?|weakness(?:es)?|cons|issues|problems"
    r"|areas\s+(?:for|of)\s+improvement)"
    r"(?:\s+(?:identified|noted|found))?\s*(?:\([^)]*\))?\s*[*_]*\s*(?P<colon>:)?[*_\s]*(?P<rest>.*)$",
    re.I,
)
_FLAW_WORDS = ("flaw", "weakness", "cons", "issues", "problems", "areas")
_BULLET = re.compile(r"^\s*(?:[-+•*▪◦]|\d+[.)]|\(?[a-z]\))\s+")
_EMPTY_ITEMS = {
    "none",
    "n/a",
    "na",
    "nothing",
    "-",
    "—",
    "none identified",
    "none noted",
    "no flaws",
    "no strengths",
    "(none yet)",
    "none yet",
}


def parse_scores(reply: str) -> Scores:
    """The five 1–5 scores of a reply, in CRITERIA order; ReplyUnparsed says what is missing.

    JSON first (``{"grammaticality": 4, …}``, nested under ``scores``/``ratings`` or with
    ``{"score": 4}`` values), else ``Criterion: N`` lines in any common Markdown dress, outside the
    strengths/flaws sections (a flaw saying "Complexity: 2 steps" is not a score). The last score
    line of a criterion wins (a model that corrects itself ends on its final answer). A reply
    whose JSON is past the caps of :mod:`quiztui.core.replies` is unparsed with that reason.
    """
    from_json = _json_scores(reply)
    if from_json is not None:
        return from_json
    found: dict[str, str] = {}
    for line in _sections(reply)[0]:
        m = _SCORE_LINE.match(line)
        if m is None:
            continue
        name, value, scale = m.group(1).lower(), m.group(2), m.group(3)
        if scale is not None and scale != "5":
            raise ReplyUnparsed(f"{name} is rated {value}/{scale}, not on the 1-5 scale")
        found[name] = value
    return _checked(found, reply)


def _checked(found: Mapping[str, Any], reply: str) -> Scores:
    missing = [c for c in CRITERIA if c not in found]
    if len(missing) == len(CRITERIA):
        return _raise_missing(reply)
    if missing:
        raise ReplyUnparsed(f"no score for {', '.join(missing)}")
    scores = []
    for c in CRITERIA:
        value = _whole(found[c])
        if value is None:
            raise ReplyUnparsed(f"{c} score {str(found[c])[:12]!r} is not a whole number 1-5")
        if not 1 <= value <= 5:
            raise ReplyUnparsed(f"{c} score {value} is outside 1-5")
        scores.append(value)
    return tuple(scores)


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)(?:\.0+)?\s*(?:/\s*5)?\s*", value)
        return int(m.group(1)) if m else None
    if isinstance(value, dict):
        for key in ("score", "rating", "value"):
            if key in value:
                return _whole(value[key])
    return None


def _raise_missing(reply: str) -> Scores:
    text = " ".join(reply.split())
    if not text:
        raise ReplyUnparsed("no scores: the reply was empty")
    clip = text if len(text) <= 60 else text[:59] + "…"
    if any(m in text.lower()[:200] for m in REFUSAL_MARKERS):
        raise ReplyUnparsed(f"no scores: the judge refused ({clip})")
    raise ReplyUnparsed(f"no scores in the reply ({clip})")


def _json_scores(reply: str) -> Scores | None:
    """Scores from the first JSON object naming at least one criterion, or None."""
    for obj in _json_objects(reply):
        holder = obj
        for key in ("scores", "ratings", "score", "rating"):
            inner = _lower_keys(obj).get(key)
            if isinstance(inner, dict):
                holder = inner
                break
        lowered = _lower_keys(holder)
        if any(c in lowered for c in CRITERIA):
            return _checked({c: lowered[c] for c in CRITERIA if c in lowered}, reply)
    return None


def _json_objects(reply: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for v in json_values(reply):
        if isinstance(v, dict):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, dict))
    return out


def _lower_keys(obj: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _section_of(line: str) -> tuple[str | None, str]:
    """("strengths" or "flaws", the inline text after the colon) when ``line`` heads a section.

    ``Strengths:``, ``**Flaws**``, ``## Weaknesses``, ``1. **Strengths:** clear`` head one;
    ``Strengths are clear`` (no colon, more words) is prose, and ``- Flaws in the options`` an item.
    """
    m = _SECTION_WORD.match(line.strip())
    if m is None:
        return None, ""
    rest = m.group("rest").strip()
    if rest and m.group("colon") is None:
        return None, ""
    word = m.group("word").lower()
    return ("flaws" if word.startswith(_FLAW_WORDS) else "strengths"), rest


def _other_heading(line: str) -> bool:
    """A line that ends a strengths/flaws section: a score line or some other heading."""
    if _SCORE_LINE.match(line):
        return True
    stripped = line.strip()
    if re.match(r"^#{1,6}\s", stripped):
        return True
    if re.fullmatch(r"[*_]{2}[^*_]{1,60}[*_]{2}\s*:?", stripped):
        return True
    return bool(re.fullmatch(r"[A-Z][A-Za-z /&'-]{1,40}:", stripped))


def _clean_item(text: str) -> str:
    text = _BULLET.sub("", text, count=1)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    text = re.sub(r"__([^_]+)__", r"\1", text)
    text = re.sub(r"^[*_`\s]+|[*_`\s]+$", "", text)
    return " ".join(text.split())


def parse_points(reply: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(strengths, flaws) listed in a reply; empty tuples when it lists none (never an error).

    JSON ``strengths`` / ``flaws`` (or ``weaknesses``) lists win when present. Otherwise each
    ``Strengths:`` / ``**Flaws**`` / ``## Weaknesses`` heading opens a section. Its bullet or
    numbered lines are its items (an indented line under one continues it); a section without
    bullets takes each non-empty line. A section ends at the next heading or score line, or at
    a plain line after a blank one once it has bullets. Text after the heading's colon is an
    item too (``Flaws: none`` is none). "None" and the like are dropped, duplicates kept once.
    JSON past the caps of :mod:`quiztui.core.replies` is passed over for the headed sections.
    """
    try:
        objects = _json_objects(reply)
    except JSONRefused:
        objects = []  # past the caps: the scores are refused with the reason, points just empty
    for obj in objects:
        lowered = _lower_keys(obj)
        strengths = _json_list(lowered, "strengths", "strength", "pros")
        flaws = _json_list(lowered, "flaws", "weaknesses", "flaw", "cons")
        if strengths is not None or flaws is not None:
            return strengths or (), flaws or ()
    _, listed_strengths, listed_flaws = _sections(reply)
    return _tidy(listed_strengths), _tidy(listed_flaws)


def _sections(reply: str) -> tuple[list[str], list[str], list[str]]:
    """(lines outside any strengths/flaws section, strength items, flaw items)."""
    outside: list[str] = []
    found: dict[str, list[str]] = {"strengths": [], "flaws": []}
    current: str | None = None
    bullets = blank = False
    for line in reply.splitlines():
        kind, rest = _section_of(line)
        if kind is not None:
            current, bullets, blank = kind, False, False
            if rest:
                found[kind].extend(_split_inline(rest))
            continue
        if current is not None:
            items = found[current]
            if not line.strip():
                blank = True
                continue
            if _BULLET.match(line):
                items.append(_clean_item(line))
                bullets, blank = True, False
                continue
            if bullets and items and line[:1].isspace() and not blank:
                items[-1] = f"{items[-1]} {_clean_item(line)}"  # a wrapped bullet
                continue
            if not bullets and not _other_heading(line) and not (blank and items):
                items.append(_clean_item(line))
                continue
            current = None  # another heading, a score line, or prose after the list
        outside.append(line)
    return outside, found["strengths"], found["flaws"]


def _split_inline(text: str) -> list[str]:
    parts = [p for p in re.split(r"\s*;\s*", text) if p.strip()]
    return [_clean_item(p) for p in parts]


def _json_list(obj: Mapping[str, Any], *names: str) -> tuple[str, ...] | None:
    for name in names:
        value = obj.get(name)
        if isinstance(value, list):
            return _tidy([_clean_item(str(v)) for v in value if isinstance(v, str | int | float)])
        if isinstance(value, str):
            return _tidy(_split_inline(value))
    return None


def _tidy(items: Sequence[str]) -> tuple[str, ...]:
    kept = [i for i in items if i and i.strip(" .").lower() not in _EMPTY_ITEMS]
    return tuple(dict.fromkeys(kept))


def parse_review(reply: str) -> Review:
    """Scores (required) plus strengths and flaws (optional) from one reply."""
    scores = parse_scores(reply)
    strengths, flaws = parse_points(reply)
    return Review(scores, strengths, flaws)


# --- agreement with human ratings --------------------------------------------------------------


def round_half_up(value: float) -> int:
    """2.5 → 3, 3.49 → 3: the usual rounding of a mean rating (not Python's round-half-even)."""
    return math.floor(value + 0.5)


@dataclass(frozen=True, slots=True)
class CriterionAgreement:
    criterion: str
    n: int  # questions with a judge score and at least one human rating
    judge_mean: float | None
    human_mean: float | None
    pearson: float | None  # None when n < 2 or either side is constant
    exact_match: float | None  # share 0–1 of questions with judge == round_half_up(mean human)
    fleiss_kappa: float | None  # among the human raters; None when undefined
    kappa_items: int  # questions with at least two human ratings (the κ's sample)


@dataclass(frozen=True, slots=True)
class HumanAgreement:
    raters: int
    questions: int  # reviewed questions with at least one human rating
    criteria: tuple[CriterionAgreement, ...] = field(default_factory=tuple)

    def of(self, criterion: str) -> CriterionAgreement:
        return next(c for c in self.criteria if c.criterion == criterion)


def human_agreement(
    judge: Mapping[str, Scores | None],
    humans: Mapping[str, Mapping[str, Mapping[str, int | None]]],
) -> HumanAgreement:
    """Per criterion: Pearson r and exact match of the judge's final scores against the mean
    human score, and Fleiss' κ among the humans (categories 1–5).

    ``judge`` maps question id → final scores (None: unscored); ``humans`` maps question id →
    rater → criterion → score (None: not rated). Only questions in ``judge`` count, so a run
    limited to some questions compares those.
    """
    import numpy as np

    raters = sorted({r for qid in judge for r in humans.get(qid, {})})
    rated_questions = [qid for qid in judge if humans.get(qid)]
    rows = []
    for i, criterion in enumerate(CRITERIA):
        judged: list[float] = []
        means: list[float] = []
        exact = 0
        labels: list[list[int | None]] = []
        for qid in rated_questions:
            given = [v[criterion] for v in humans[qid].values() if v.get(criterion) is not None]
            labels.append(list(given))
            scores = judge[qid]
            if scores is None or not given:
                continue
            mean = sum(given) / len(given)  # type: ignore[arg-type]
            judged.append(float(scores[i]))
            means.append(mean)
            exact += scores[i] == round_half_up(mean)
        n = len(judged)
        pearson = None
        if n >= 2 and len(set(judged)) > 1 and len(set(means)) > 1:
            pearson = float(np.corrcoef(np.array(judged), np.array(means))[0, 1])
        kappa = fleiss_kappa_labels(labels)
        rows.append(
            CriterionAgreement(
                criterion,
                n,
                sum(judged) / n if n else None,
                sum(means) / n if n else None,
                pearson,
                exact / n if n else None,
                None if math.isnan(kappa) else kappa,
                sum(1 for row in labels if len(row) >= 2),
            )
        )
    return HumanAgreement(len(raters), len(rated_questions), tuple(rows))


# --- summaries ---------------------------------------------------------------------------------


@dataclass(slots=True)
class ReviewTally:
    """Running counts over reviewed questions."""

    total: int = 0
    scored: int = 0
    converged: int = 0
    not_converged: int = 0
    rewrite: int = 0
    iterations: int = 0
    sums: list[float] = field(default_factory=lambda: [0.0] * len(CRITERIA))

    def add(self, outcome: ReviewOutcome, low_score: int) -> None:
        self.total += 1
        self.iterations += len(outcome.iterations)
        if outcome.converged is True:
            self.converged += 1
        elif outcome.converged is False:
            self.not_converged += 1
        if outcome.scores is not None:
            self.scored += 1
            for i, s in enumerate(outcome.scores):
                self.sums[i] += s
            self.rewrite += needs_rewrite(outcome.scores, low_score)

    def means(self) -> dict[str, float | None]:
        return {
            c: (self.sums[i] / self.scored if self.scored else None) for i, c in enumerate(CRITERIA)
        }
