"""Deterministic replies to the robustness prompts (rewrite, answer a choice, answer openly).

Used by the simulated provider and the fake server, so ``quiztui robustness`` runs offline and in
tests the way it runs against a model. A prompt is recognised by the marker lines of
``prompts/robust_*.md``; :func:`reply` returns None for any other prompt.

- Rewriting: v rewrites of q0, each a fixed framing around the question (``In other words, …?``)
  that :func:`original_of` can undo, so the answering oracle knows which question a form asks.
  They are formulaic on purpose: this is a stand-in for plumbing and demos, not a paraphraser.
- Answering: from the truth table (assertion text → truth, as for the judge oracle). Each question
  gets a difficulty d = ``disagreement`` · 4u³ (u uniform from a hash of the question, so the mean
  is ``disagreement`` and most questions are easy while a few are hard). Each form is answered
  with the true option with probability 1 − d, else a distractor (usually the question's most
  attractive one, so wrong answers cluster as a real model's do); with probability
  ``refusal_rate`` it is a refusal instead. Every draw is a hash of (seed, form), so the same form
  always gets the same answer. A question missing from the truth table gets a hashed guess
  (multiple choice) or "I don't know" (open).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from quiztui.core.assertions import sanitise
from quiztui.core.question_mode import LETTERS

REWRITE_BEGIN = "<<<QUESTION TO REWRITE>>>"
REWRITE_END = "<<<END OF QUESTION TO REWRITE>>>"
CHOICE_BEGIN = "<<<MULTIPLE-CHOICE QUESTION>>>"
CHOICE_END = "<<<END OF MULTIPLE-CHOICE QUESTION>>>"
OPEN_BEGIN = "<<<QUESTION TO ANSWER>>>"
OPEN_END = "<<<END OF QUESTION TO ANSWER>>>"

REFUSAL = "I'm sorry, but I can't help with that request."
# The simulated provider and the fake server turn this reply into an empty message with
# finish_reason "content_filter", the way a provider's content filter ends a reply.
CONTENT_FILTERED = "\x00content_filter\x00"

FRAMES = (
    "In other words, {q}?",
    "Put another way: {q}?",
    "Here is something to work out: {q}?",
    "Tell me this: {q}?",
    "A question for you: {q}?",
    "Think it over and say: {q}?",
    "Quiz time: {q}?",
    "Consider this carefully: {q}?",
    "Can you work out the following: {q}?",
    "One more for you: {q}?",
)


def _unit(*parts: object) -> float:
    digest = hashlib.blake2b("\x00".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _core(question: str) -> str:
    return question.strip().rstrip("?").strip()


def _key(question: str) -> str:
    core = _core(question)
    return core[:1].lower() + core[1:]


def _embedded(question: str) -> str:
    """The question as it reads inside a framing: "What is …" → "what is …" (not "NATO …")."""
    core = _core(question)
    return core[:1].lower() + core[1:] if core[1:2].islower() else core


def rewrites(question: str, n: int) -> list[str]:
    core = _embedded(question)
    out = [FRAMES[i % len(FRAMES)].format(q=core) for i in range(n)]
    return [f + (f" (version {i + 1})" if i >= len(FRAMES) else "") for i, f in enumerate(out)]


def original_of(form: str) -> str:
    """The question a rewrite came from (the form itself when it is no known framing)."""
    text = form.strip()
    if text.endswith(")") and " (version " in text:
        text = text[: text.rindex(" (version ")]
    for frame in FRAMES:
        head, tail = frame.split("{q}")
        if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
            return text[len(head) : len(text) - len(tail)]
    return _core(text)


# question (without "?") → [(option, truth), ...] in option order; per truth table.
_INDEX: dict[int, tuple[Mapping[str, bool], dict[str, list[tuple[str, bool]]]]] = {}


def _index(truth: Mapping[str, bool]) -> dict[str, list[tuple[str, bool]]]:
    cached = _INDEX.get(id(truth))
    if cached is not None and cached[0] is truth:
        return cached[1]
    index: dict[str, list[tuple[str, bool]]] = {}
    for text, value in truth.items():
        if not text.startswith("Q: ") or " A: " not in text:
            continue
        question, option = text[3:].split(" A: ", 1)
        index.setdefault(_key(question), []).append((option, bool(value)))
    if len(_INDEX) > 64:
        _INDEX.clear()
    _INDEX[id(truth)] = (truth, index)
    return index


def reply(
    prompt: str,
    truth: Mapping[str, bool],
    *,
    seed: int = 0,
    disagreement: float = 0.0,
    refusal_rate: float = 0.0,
) -> str | None:
    for begin, end in ((REWRITE_BEGIN, REWRITE_END), (CHOICE_BEGIN, CHOICE_END)):
        body = _between(prompt, begin, end)
        if body is not None:
            break
    else:
        begin = OPEN_BEGIN
        body = _between(prompt, OPEN_BEGIN, OPEN_END)
        if body is None:
            return None
    if begin == REWRITE_BEGIN:
        n = _count(prompt)
        return "\n".join(f"{i + 1}. {f}" for i, f in enumerate(rewrites(body.strip(), n))) + "\n"
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    form = lines[0].removeprefix("Question:").strip() if lines else ""
    options = [line[3:] for line in lines[1:] if len(line) > 3 and line[1:3] == ". "]
    if _unit(seed, "refuse", form) < refusal_rate:
        return CONTENT_FILTERED if _unit(seed, "filter", form) < 0.4 else REFUSAL + "\n"
    question = _key(original_of(form))
    known = _index(truth).get(question)
    if begin == CHOICE_BEGIN:
        return f"Answer: {LETTERS[_choose(question, form, options, known, seed, disagreement)]}\n"
    if not known:
        return "Answer: I don't know\n"
    names = [o for o, _ in known]
    answer = names[_choose(question, form, names, known, seed, disagreement)]
    style = int(_unit(seed, "style", form) * 3)
    answer = (answer, answer.lower(), f"{answer}.")[style]
    return f"Answer: {answer}\n"


def _choose(
    question: str,
    form: str,
    options: list[str],
    known: list[tuple[str, bool]] | None,
    seed: int,
    disagreement: float,
) -> int:
    n = max(1, len(options))
    if not known:
        return int(_unit(seed, "guess", form) * n)
    truths = {sanitise(o): t for o, t in known}
    right = [i for i, o in enumerate(options) if truths.get(sanitise(o))]
    wrong = [i for i in range(len(options)) if i not in right]
    d = min(0.95, disagreement * 4 * _unit(seed, "difficulty", question) ** 3)
    if right and (not wrong or _unit(seed, "answer", form) >= d):
        return right[0]
    if not wrong:
        return int(_unit(seed, "guess", form) * n)
    attractive = wrong[int(_unit(seed, "attractive", question) * len(wrong))]
    if _unit(seed, "which", form) < 0.7:
        return attractive
    return wrong[int(_unit(seed, "other", form) * len(wrong))]


def _count(prompt: str) -> int:
    m = re.search(r"Rewrite the question in (\d+) ", prompt)
    return max(1, min(50, int(m.group(1)))) if m else 5


def _between(prompt: str, begin: str, end: str) -> str | None:
    start = prompt.find(begin)
    if start < 0:
        return None
    stop = prompt.find(end, start + len(begin))
    return None if stop < 0 else prompt[start + len(begin) : stop]
