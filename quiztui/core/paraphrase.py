"""Paraphrase robustness (MultiQ&A, seed 002): prompts, reply parsers and answer grouping.

Pure functions for the Query Rewriter (one request rewrites a question v ways), the Answer
Generator (one independent request per form: the identity q0 and each rewrite, answered as
multiple choice with the options unchanged or as a free-form answer) and the Aggregator's
grouping of free-form answers. The metrics themselves are in :mod:`quiztui.core.robustness`.

Every value put into a prompt is flattened to one line (:func:`sanitise`), and the templates are
filled in one pass, so a question cannot forge lines of its own prompt, let alone another's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quiztui.core.assertions import sanitise as _flatten
from quiztui.core.grading import REFUSAL_MARKERS
from quiztui.core.lexical import normalize_answer
from quiztui.core.markers import neutralise_markers
from quiztui.core.question_mode import LETTERS, read_choice_line
from quiztui.core.replies import JSONRefused, ReplyUnparsed


def sanitise(text: str) -> str:
    """One printable line that cannot open or close a prompt's marker lines."""
    return neutralise_markers(_flatten(text))


FORMATS = ("multiple-choice", "abstractive")

# How an answer request ended. Only "answered" carries an answer; the others are counted apart
# (seed §6.4 counts content-filter failures apart from service errors) and never as wrong.
ANSWERED = "answered"
REFUSED = "refused"  # the model declined in words
FILTERED = "filtered"  # the provider's content filter stopped the reply
UNPARSED = "unparsed"  # a reply with no answer in it, after the re-asks
FAILED = "failed"  # the request failed after the provider's retries
NOT_ASKED = "not asked"  # no such form: the rewriter gave fewer than v rewrites, or failed
STATUSES = (ANSWERED, REFUSED, FILTERED, UNPARSED, FAILED, NOT_ASKED)


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` slots in one pass (values are inserted as given, never re-expanded)."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def choices_block(options: Sequence[str]) -> str:
    return "\n".join(f"{L}. {sanitise(o)}" for L, o in zip(LETTERS, options, strict=False))


def render_rewrite(template: str, question: str, n: int, options: Sequence[str] = ()) -> str:
    note = ""
    if options:
        shown = "; ".join(f"{L}. {sanitise(o)}" for L, o in zip(LETTERS, options, strict=False))
        note = f"It will be asked with these answer choices, unchanged: {shown}."
    return fill(template, {"n": str(n), "question": sanitise(question), "choices_note": note})


def render_answer(template: str, question: str, options: Sequence[str] = ()) -> str:
    """An answer prompt for one form: with ``options`` the multiple-choice format, else open."""
    return fill(template, {"question": sanitise(question), "choices": choices_block(options)})


# --- rewrites ----------------------------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*(?:[-*•]\s*)?\(?(\d{1,2})[.):]\s*(.+?)\s*$")
_BULLET = re.compile(r"^\s*[-*•]\s+(.+?)\s*$")


def _clean_form(text: str) -> str:
    text = text.strip().strip("*_`").strip()
    if len(text) >= 2 and text[0] in "\"'“‘" and text[-1] in "\"'”’":
        text = text[1:-1].strip()
    return sanitise(text)


def parse_rewrites(reply: str, n: int, original: str = "") -> list[str]:
    """The rewritten questions in a rewriter reply: numbered lines, else bullets.

    Duplicates and copies of the original (after normalising) are dropped, and at most ``n`` are
    kept. Raises :class:`ReplyUnparsed` when none is found.
    """
    lines = reply.splitlines()
    found = [m.group(2) for line in lines if (m := _NUMBERED.match(line))]
    if not found:
        found = [m.group(1) for line in lines if (m := _BULLET.match(line))]
    seen = {normalize_answer(original)} if original else set()
    out: list[str] = []
    for raw in found:
        form = _clean_form(raw)
        key = normalize_answer(form)
        if not form or not key or key in seen:
            continue
        seen.add(key)
        out.append(form)
        if len(out) == n:
            break
    if not out:
        raise ReplyUnparsed(f"no numbered rewrites in the reply ({_clip(reply)})")
    return out


# --- answers -----------------------------------------------------------------------------------


def refusal_status(text: str, finish_reason: str | None, refusal: str | None = None) -> str | None:
    """FILTERED or REFUSED when the reply is a content-filter stop or a refusal, else None."""
    if finish_reason == "content_filter":
        return FILTERED
    if refusal:
        return REFUSED
    head = text.strip().lower()[:200]
    if any(m in head for m in REFUSAL_MARKERS):
        return REFUSED
    return None


def parse_choice(reply: str, options: Sequence[str]) -> int:
    """The option a multiple-choice answer names: ``Answer: B``, a bare letter, or the text."""
    n = len(options)
    refused = None
    for line in reply.splitlines():
        found, why = read_choice_line(line, n)
        if found is not None:
            return found[0]
        refused = refused or why
    said = normalize_answer(_strip_answer(reply))
    if said:
        named = [i for i, o in enumerate(options) if normalize_answer(o) == said]
        if len(named) == 1:
            return named[0]
    if refused:
        raise JSONRefused(refused)
    raise ReplyUnparsed(f"no choice among {LETTERS[0]}–{LETTERS[n - 1]} ({_clip(reply)})")


_ANSWER_PREFIX = re.compile(r"^[\s>*#`\-•]*(?:final\s+)?answer\s*[:=\-–—]\s*", re.IGNORECASE)


def _strip_answer(reply: str) -> str:
    lines = [line for line in reply.splitlines() if line.strip()]
    for line in lines:
        if _ANSWER_PREFIX.match(line):
            return _ANSWER_PREFIX.sub("", line).strip().strip("*_`\"'").strip()
    return lines[0].strip().strip("*_`\"'").strip() if lines else ""


def parse_open(reply: str) -> str:
    """The free-form answer: the ``Answer:`` line, else the first line of the reply."""
    answer = sanitise(_strip_answer(reply))
    if not normalize_answer(answer):
        raise ReplyUnparsed(f"no answer in the reply ({_clip(reply)})")
    return answer


# --- grouping free-form answers ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grouping:
    """Answer categories of one question: a code per answer (-1 for none) and each group's label."""

    codes: tuple[int, ...]
    labels: tuple[str, ...]  # the first answer seen in each group
    correct: int  # the group that matches the reference, or -1 when none does


def group_by_text(answers: Sequence[str | None], references: Sequence[str]) -> Grouping:
    """Group answers whose normalised text (SQuAD normalisation) is equal.

    The correct group is the one whose normalised text equals a reference's (the key or an
    alias); an answer matching a reference joins that group even if worded differently.
    """
    refs = {normalize_answer(r) for r in references if normalize_answer(r)}
    keys: dict[str, int] = {}
    labels: list[str] = []
    codes: list[int] = []
    correct = -1
    for answer in answers:
        if answer is None:
            codes.append(-1)
            continue
        key = normalize_answer(answer)
        if key in refs:
            key = "\x00reference"
        if key not in keys:
            keys[key] = len(labels)
            labels.append(answer)
        codes.append(keys[key])
        if key == "\x00reference":
            correct = keys[key]
    return Grouping(tuple(codes), tuple(labels), correct)


def group_by_similarity(
    answers: Sequence[str | None],
    similarity: Sequence[Sequence[float]],
    reference_similarity: Sequence[float],
    threshold: float,
) -> Grouping:
    """Greedy grouping by cosine similarity, for embedding matching.

    ``similarity`` is the answers' pairwise cosine matrix and ``reference_similarity`` each
    answer's best cosine to a reference. Answers at or above ``threshold`` to the reference form
    the correct group; each other answer joins the first group whose first member it reaches
    ``threshold`` with, else starts a group.
    """
    labels: list[str] = []
    leaders: list[int] = []
    codes: list[int] = []
    correct = -1
    for i, answer in enumerate(answers):
        if answer is None:
            codes.append(-1)
            continue
        if reference_similarity[i] >= threshold:
            if correct < 0:
                correct = len(labels)
                labels.append(answer)
                leaders.append(i)
            codes.append(correct)
            continue
        for code, leader in enumerate(leaders):
            if code != correct and similarity[i][leader] >= threshold:
                codes.append(code)
                break
        else:
            codes.append(len(labels))
            labels.append(answer)
            leaders.append(i)
    return Grouping(tuple(codes), tuple(labels), correct)


def _clip(text: str, n: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FormAnswer:
    """One answer request: form 0 is the original question q0, forms 1..v the rewrites."""

    form: int
    status: str  # one of STATUSES
    answer: str = ""  # the letter (multiple choice) or the free-form text, when answered
    code: int = -1  # the answer's category (option index or group), -1 when not answered
    reason: str = ""  # why there is no answer
    reply: str = ""
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class StageUsage:
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def __add__(self, other: StageUsage) -> StageUsage:
        return StageUsage(
            self.requests + other.requests,
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
        )


@dataclass(frozen=True, slots=True)
class QuestionRobustness:
    """Everything measured for one question: forms, answers, metrics and the fragility flag."""

    question_id: str
    text: str
    forms: tuple[str, ...]  # q0 first, then the rewrites that were written
    rewrite_reply: str
    rewrite_note: str  # why fewer than v rewrites (empty when all came)
    answers: tuple[FormAnswer, ...]  # one per form slot, v + 1 of them
    categories: tuple[str, ...]  # labels of the answer codes (letters, or group labels)
    correct: int  # the code of the keyed answer, -1 when no answer matched it
    k: int  # K_j, the number of possible categories
    metrics: dict[str, float | int | None]  # core.robustness.question_row
    fragile: bool
    fragile_reason: str
    rewrite_usage: StageUsage = StageUsage()
    answer_usage: StageUsage = StageUsage()

    def count(self, status: str) -> int:
        return sum(a.status == status for a in self.answers)


def fragility(
    answers: Sequence[FormAnswer],
    categories: Sequence[str],
    correct: int,
    certainty: float | None,
    threshold: float,
) -> tuple[bool, str]:
    """Is the question fragile, and why (or why not) in one line.

    Fragile: a form was answered differently from the original (or, when the original has no
    answer, from the plurality), or the answers' normalised certainty is below ``threshold``.
    Answers disagreeing with the key all together are noted too (the key may be wrong), but that
    alone is not fragility: the question reads the same way every time.
    """
    given = [a for a in answers if a.status == ANSWERED]
    if not given:
        return False, "not measured: no form was answered"
    codes = [a.code for a in given]
    base = (
        answers[0].code
        if answers and answers[0].status == ANSWERED
        else max(set(codes), key=codes.count)
    )
    differ = [a for a in given if a.code != base]
    notes: list[str] = []
    fragile = False
    if differ:
        fragile = True
        other = sorted({categories[a.code] for a in differ})
        notes.append(
            f"{len(differ)} of {len(given)} forms answered differently"
            f" ({_clip(categories[base], 20)} vs {', '.join(_clip(o, 20) for o in other)})"
        )
    if certainty is not None and certainty < threshold:
        fragile = True
        notes.append(f"certainty {certainty:.2f} < {threshold:g}")
    if all(c != correct for c in codes):
        notes.append("no form was answered with the key")
    missing = len(answers) - len(given)
    if missing:
        notes.append(f"{missing} without an answer")
    if not notes:
        notes.append(f"all {len(given)} forms agree")
    return fragile, "; ".join(notes)
