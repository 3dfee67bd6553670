"""Reading QA-generation replies (seed 001): JSON found leniently, items, "None", "I don't know".

Pure parsing, shared by the document pipeline and its tests: code fences, prose around the JSON,
a single object instead of a list, trailing commas and replies cut short are all read (through
the capped extractor of :mod:`quiztui.core.replies`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from quiztui.core.replies import JSONRefused, embedded_values, fenced_blocks, json_document

_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_NONE_WORDS = {"none", "'none'", '"none"', "none.", "`none`"}


class ReplyError(ValueError):
    """A reply with nothing usable in it; the message says why, on one line."""


def _excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def extract_json(text: str) -> Any:
    """The JSON value in a model reply: whole, in a code fence, or embedded in prose.

    Trailing commas are forgiven. When no whole list or object decodes (a reply cut short, say),
    the complete objects found in it are returned as a list. A reply that is just "None" returns
    None. Raises :class:`ReplyError` when no JSON list or object is found, or when the reply is
    past the caps of :mod:`quiztui.core.replies` (too long, or nested too deep).
    """
    stripped = text.strip()
    if stripped.strip("`").strip().casefold() in _NONE_WORDS:
        return None
    if not stripped:
        raise ReplyError("empty reply")
    try:
        return _extract(text, stripped)
    except JSONRefused as exc:
        raise ReplyError(str(exc)) from None


def _extract(text: str, stripped: str) -> Any:
    candidates = [*fenced_blocks(text), text]
    variants = [v for c in candidates for v in dict.fromkeys((c, _TRAILING_COMMA.sub(r"\1", c)))]
    for variant in variants:
        value = json_document(variant)
        if value is not None:
            return value
    salvaged = None
    for variant in variants:
        value, whole = _embedded(variant)
        if whole:
            return value
        salvaged = value if salvaged is None else salvaged
    if salvaged is not None:
        return salvaged
    if stripped.casefold().startswith("none"):
        return None
    raise ReplyError(f"reply had no JSON: {_excerpt(text)}")


def _embedded(text: str) -> tuple[Any, bool]:
    """(value, whole): the first list that decodes inside ``text`` (whole), else every object
    that does (not whole: a list cut short, say), else (None, False)."""
    objects: list[Any] = []
    for value in embedded_values(text):
        if isinstance(value, dict):
            objects.append(value)
        elif value and not objects:
            return value, True
    if not objects:
        return None, False
    return (objects if len(objects) > 1 else objects[0]), False


def as_items(value: Any) -> list[dict[str, Any]]:
    """A JSON value as a list of objects: a list, one object, or an object wrapping a list."""
    if value is None:
        return []
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1 and all(isinstance(x, dict) for x in lists[0]) and lists[0]:
            value = lists[0]
        else:
            value = [value]
    if not isinstance(value, list):
        raise ReplyError(f"expected a JSON list of objects, got {type(value).__name__}")
    items = [item for item in value if isinstance(item, dict)]
    if value and not items:
        raise ReplyError("expected a JSON list of objects, got a list of other values")
    return items


def item_field(item: dict[str, Any], *names: str) -> str | None:
    """A string field, looked up case-insensitively; numbers are turned into text."""
    folded = {str(k).casefold(): v for k, v in item.items()}
    for name in names:
        value = folded.get(name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            return f"{value:g}" if isinstance(value, float) else str(value)
        if isinstance(value, str):
            return value.strip()
    return None


def is_none(text: str | None) -> bool:
    return text is not None and text.strip().strip("'\"`.").casefold() == "none"


def is_dont_know(text: str) -> bool:
    flat = " ".join(text.split()).casefold().strip(" .!").replace("\u2019", "'")
    return flat in {"i don't know", "i do not know", "i dont know", "unknown"}


@dataclass
class QAItem:
    question: str
    answer: str
    context: str


def parse_qa_reply(text: str) -> tuple[list[QAItem], int, int]:
    """(pairs, items with question "None", incomplete items) of a QA-generation reply."""
    value = extract_json(text)
    if value is None:
        return [], 1, 0
    pairs: list[QAItem] = []
    nones = incomplete = 0
    for item in as_items(value):
        question = item_field(item, "question", "q")
        answer = item_field(item, "answer", "a")
        context = item_field(item, "context") or ""
        if is_none(question):
            nones += 1
        elif not question or not answer or is_none(answer):
            incomplete += 1
        else:
            pairs.append(QAItem(question, answer, context))
    if not pairs and not nones and incomplete:
        raise ReplyError(f"no item had both a question and an answer: {_excerpt(text)}")
    return pairs, nones, incomplete
