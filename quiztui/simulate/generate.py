"""Deterministic replies to the document prompts (generate QA, rephrase, candidates, distractors).

Used by the simulated provider and the fake server, so ``quiztui generate`` runs offline and in
tests exactly as it would against a model. ``reply`` returns None for any other prompt. A prompt
is recognised by the markers around the data in its user message (the ``*_BEGIN``/``*_END``
constants below, which the prompt files in ``prompts/`` use); the pipeline neutralises marker-like
text inside inserted data (:func:`neutralise_markers`), so a document cannot forge them.

- QA generation: one fill-in-the-blank pair per sentence that has a number or a capitalised term
  (the answer), with the sentence as the Context, whitespace collapsed as a model would copy it.
  Every 7th Context (4th, 11th, ...) drops a word and every 11th (9th, 20th, ...) is garbled, so
  both fuzzy location and flagging happen. A chunk with no such sentence gets "None".
- Rephrasing: the same items with reworded questions; answers are kept.
- Candidate answers: the oracle remembers the pairs it generated in this process (question →
  answer); by a hash of the question it answers right (about 75 %), "I don't know" (about 15 %,
  and for every question it never wrote) or wrong (about 10 %).
- Distractors: three wrong options per answer: nearby numbers, or other terms of the batch.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from quiztui.core.markers import (
    CANDIDATES_BEGIN,
    CANDIDATES_END,
    DISTRACTORS_BEGIN,
    DISTRACTORS_END,
    DOC_BEGIN,
    DOC_END,
    DONT_KNOW,
    REPHRASE_BEGIN,
    REPHRASE_END,
)

BLANK = "___"
MAX_PAIRS_PER_CHUNK = 50

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_TERM = re.compile(r"\b[A-Z][a-zA-Z-]+(?: [A-Z][a-zA-Z-]+)*")
_FALLBACK_TERMS = ("Alexander", "Victoria", "Meridian", "Cambridge", "Atlas", "Orion")

# question -> answer, for the pairs this oracle wrote (bounded; cleared when full).
_KNOWN: dict[str, str] = {}
_KNOWN_LIMIT = 100_000


def reply(prompt: str, seed: int = 0) -> str | None:
    handlers: tuple[tuple[str, str, Callable[[str, int], str]], ...] = (
        (DOC_BEGIN, DOC_END, _generate),
        (REPHRASE_BEGIN, REPHRASE_END, _rephrase),
        (CANDIDATES_BEGIN, CANDIDATES_END, _candidates),
        (DISTRACTORS_BEGIN, DISTRACTORS_END, _distractors),
    )
    for begin, end, handler in handlers:
        start = prompt.find(begin)
        if start < 0:
            continue
        stop = prompt.find(end, start + len(begin))
        if stop < 0:
            continue
        return handler(prompt[start + len(begin) : stop], seed)
    return None


def _unit(seed: int, text: str) -> float:
    digest = hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _remember(question: str, answer: str) -> None:
    if len(_KNOWN) >= _KNOWN_LIMIT:
        _KNOWN.clear()
    _KNOWN[question] = answer


def _json_lines(items: list[dict[str, Any]], fenced: bool = True) -> str:
    """A JSON list with one item per line (the simulated provider streams it line by line)."""
    body = "[\n" + ",\n".join(json.dumps(item, ensure_ascii=False) for item in items) + "\n]"
    return f"```json\n{body}\n```\n" if fenced else body + "\n"


# -- QA generation -------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """The sentences of a text, whitespace collapsed; blank lines and Markdown headings end one."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            blocks.append([])
        else:
            blocks[-1].append(line)
    out = []
    for block in blocks:
        flat = " ".join(" ".join(block).split())
        out += [s.strip() for s in _SENTENCE_SPLIT.split(flat) if s.strip()]
    return out


def _answer_in(sentence: str) -> str | None:
    number = _NUMBER.search(sentence)
    if number:
        return number.group()
    for m in _TERM.finditer(sentence):
        if m.start() > 0:  # the first word is capitalised anyway
            return m.group()
    return None


def _tamper(context: str, answer: str, index: int, seed: int) -> str:
    """Every 7th Context loses a word; every 11th is garbled (its second half reversed)."""
    words = context.split(" ")
    if index % 11 == 8 and len(words) >= 6:
        half = len(words) // 2
        return " ".join(words[:half] + words[half:][::-1])
    if index % 7 == 3 and len(words) >= 6:
        droppable = [i for i, w in enumerate(words[1:-1], 1) if answer not in w and len(w) > 2]
        if droppable:
            drop = droppable[int(_unit(seed, "drop\x00" + context) * len(droppable))]
            return " ".join(words[:drop] + words[drop + 1 :])
    return context


def _generate(text: str, seed: int) -> str:
    items: list[dict[str, Any]] = []
    for sentence in sentences(text):
        words = sentence.split()
        if not 5 <= len(words) <= 80:
            continue
        answer = _answer_in(sentence)
        if answer is None:
            continue
        question = "Fill in the blank: " + sentence.replace(answer, BLANK, 1)
        if any(item["Question"] == question for item in items):
            continue
        context = _tamper(sentence, answer, len(items), seed)
        items.append({"Question": question, "Answer": answer, "Context": context})
        _remember(question, answer)
        if len(items) >= MAX_PAIRS_PER_CHUNK:
            break
    if not items:
        items = [{"Question": "None", "Answer": "None", "Context": "None"}]
    return _json_lines(items)


# -- rephrasing, candidates, distractors -----------------------------------------------------


def _items(body: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return []
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def _field(item: dict[str, Any], name: str) -> str:
    for key, value in item.items():
        if key.casefold() == name:
            return str(value)
    return ""


def _rephrase(body: str, seed: int) -> str:
    out = []
    for item in _items(body):
        question, answer = _field(item, "question"), _field(item, "answer")
        if question.startswith("Fill in the blank: "):
            statement = question.removeprefix("Fill in the blank: ")
            new_question = f"Which word or value belongs in the gap of this statement: {statement}"
        else:
            new_question = f"Put differently: {question}"
        _remember(new_question, _KNOWN.get(question, answer))
        out.append({"id": item.get("id"), "Question": new_question, "Answer": answer})
    return _json_lines(out)


def _wrong_answer(answer: str, seed: int) -> str:
    options = _distractors_for(answer, [], seed)
    return options[0] if options else "something else"


def _candidates(body: str, seed: int) -> str:
    out = []
    for item in _items(body):
        question = _field(item, "question")
        known = _KNOWN.get(question)
        u = _unit(seed, "candidate\x00" + question)
        if known is None or u < 0.15:
            answer = DONT_KNOW
        elif u < 0.25:
            answer = _wrong_answer(known, seed)
        else:
            answer = known
        out.append({"id": item.get("id"), "answer": answer})
    return _json_lines(out)


def _number_variants(answer: str) -> list[str]:
    plain = answer.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", answer) else answer
    if not re.fullmatch(r"\d+(\.\d+)?", plain):
        return []
    places = len(plain.partition(".")[2])
    value = float(plain)
    step = max(10.0**-places, round(abs(value) * 0.1, places))
    out = []
    for candidate in (value + step, value - step, value + 2 * step, value * 2, value - 2 * step):
        if candidate <= 0 or abs(candidate - value) < 10.0**-places / 2:
            continue
        text = f"{candidate:.{places}f}"
        if text not in out and text != plain:
            out.append(text)
    return out


def _distractors_for(answer: str, others: list[str], seed: int) -> list[str]:
    numbers = _number_variants(answer)
    if numbers:
        return numbers[:3]
    seen = {answer.casefold()}
    pool = []
    for other in [*others, *_FALLBACK_TERMS]:
        if other.casefold() not in seen and not _number_variants(other):
            seen.add(other.casefold())
            pool.append(other)
    pool.sort(key=lambda t: _unit(seed, f"distractor\x00{answer}\x00{t}"))
    return pool[:3]


def _distractors(body: str, seed: int) -> str:
    items = _items(body)
    answers = [_field(item, "answer") for item in items]
    out = []
    for item, answer in zip(items, answers, strict=True):
        out.append({"id": item.get("id"), "distractors": _distractors_for(answer, answers, seed)})
    return _json_lines(out)
