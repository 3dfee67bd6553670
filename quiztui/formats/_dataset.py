"""Question sets as spreadsheets and dataset hubs export them: the column and field names they
use, option lists written into one cell, and answers given as a letter, an index or the text.

Shared by the CSV reader (one column per option, or a ``choices`` column) and the JSON Lines
reader (``{"question", "choices": [...], "answer"}`` and its variants).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from quiztui.errors import QuiztuiError

QUESTION_NAMES = ("question", "question_text", "prompt", "stem", "query")
LIST_NAMES = ("choices", "options", "answers_list", "endings")
ANSWER_NAMES = (
    "answer",
    "answerkey",
    "answer_key",
    "correct_answer",
    "correct_option",
    "answer_index",
    "answer_idx",
    "label",
    "key",
    "target",
    "gold",
    "correct",
)
CATEGORY_NAMES = ("subject", "category", "topic")
# One column per option: "A".."J", "option a", "option_a", "optiona", "opa", "option1",
# "choice_1", "opt1", "a)" (case and separators ignored).
_OPTION_COLUMN = re.compile(r"(?:option|choice|opt|op|answer)?[ _\-]?([a-j]|[1-9]|10)\)?")
_LETTERS = "ABCDEFGHIJ"


ROLES = ("question", "answer", "options", "choices", "category")
# role -> the column (or field) names the user gave for it (``--columns``); None: the defaults.
Columns = Mapping[str, Sequence[str]]


def parse_columns(text: str) -> dict[str, tuple[str, ...]]:
    """``--columns question=Stem,answer=Key,options=Opt1+Opt2+Opt3,category=Unit``: which
    column holds what, for files whose names quiztui does not know."""
    out: dict[str, tuple[str, ...]] = {}
    for part in text.split(","):
        role, eq, names = part.partition("=")
        role = role.strip().casefold()
        if not eq or role not in ROLES or not names.strip():
            raise QuiztuiError(
                f"--columns: {part.strip()!r} is not ROLE=NAME (roles: {', '.join(ROLES)};"
                " several option columns as options=A+B+C)"
            )
        out[role] = tuple(n.strip() for n in names.split("+") if n.strip())
    return out


def wanted(role: str, columns: Columns | None, defaults: Sequence[str]) -> tuple[str, ...]:
    """The canonical names to look for in ``role``: the user's (``--columns``), else defaults."""
    if columns and role in columns:
        return tuple(canonical(n) for n in columns[role])
    return tuple(defaults)


def canonical(name: str) -> str:
    """A header or key compared loosely: case-folded, spaces and dashes as underscores."""
    return re.sub(r"[\s\-]+", "_", name.strip().casefold())


def option_position(name: str) -> int | None:
    """0-based option position a column name stands for (``B`` -> 1, ``option3`` -> 2)."""
    found = _OPTION_COLUMN.fullmatch(name.strip().casefold())
    if found is None:
        return None
    mark = found.group(1)
    return ord(mark) - ord("a") if mark.isalpha() else int(mark) - 1


def find(names: Sequence[str], wanted: Sequence[str]) -> str | None:
    """The first of ``names`` whose canonical form is one of ``wanted`` (in ``wanted``'s order)."""
    by_canonical = {canonical(n): n for n in reversed(names)}
    return next((by_canonical[w] for w in wanted if w in by_canonical), None)


def cell_list(cell: str) -> list[str] | None:
    """A list written into one cell, as JSON (``["a", "b"]``) or a Python literal
    (``['a' 'b']`` numpy-style is not a list); None when it is not one."""
    text = cell.strip()
    if not text.startswith("["):
        return None
    value: Any
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    return None


def letter_answers(answers: Sequence[str]) -> bool:
    """True when every answer of a file is one letter A–J: then a letter is a position even
    where an option's text is that letter."""
    return bool(answers) and all(len(a) == 1 and a.upper() in _LETTERS for a in answers)


def resolve_answer(
    value: Any,
    options: Sequence[str],
    *,
    labels: Sequence[str] = (),
    one_based: bool = False,
    letters: bool = False,
    hub_index: bool = False,
) -> str:
    """The option text an answer names, else the answer as text (the caller reports it).

    A label (ARC's ``"1"``/``"A"``) wins; a JSON number is a 0-based index (datasets' convention);
    with ``letters`` (see ``letter_answers``) a letter is a position; a text equal to an option
    is that option; a single letter A–J is a position; a string of digits is an index, 1-based
    with ``one_based`` (spreadsheets), else 0-based. With ``hub_index`` (a dataset hub's options
    list in one cell, whose integer answer is always a 0-based index) a string of digits is that
    index before it is an option's text: options ``1, 2, 3, 4`` with answer ``1`` are keyed
    ``2``."""
    if isinstance(value, bool):
        return str(value)
    text = str(value).strip()
    if labels and text in labels:
        index = list(labels).index(text)
        return options[index] if index < len(options) else text
    if isinstance(value, int) or (hub_index and text.isdecimal()):
        position = int(text)
        return options[position] if 0 <= position < len(options) else text
    if text in options and not (letters and len(text) == 1):
        return text
    if len(text) == 1 and text.upper() in _LETTERS:
        index = _LETTERS.index(text.upper())
        return options[index] if index < len(options) else text
    if text.isdecimal():  # not isdigit: "¹0" is digits int() cannot read
        index = int(text) - (1 if one_based else 0)
        return options[index] if 0 <= index < len(options) else text
    return text


def object_fields(obj: dict[str, Any], columns: Columns | None = None) -> dict[str, Any] | None:
    """A dataset record as Quizaic fields (question, responses, correct, category, metadata),
    or None when it is not one of the known shapes (then it is read as Quizaic).

    Shapes: ``{"question", "choices"|"options": [...], "answer"|"answerKey"|"label"|
    "correct_answer": index|letter|text}``; ARC's ``{"question": {"stem", "choices": [{"text",
    "label"}]}, "answerKey"}`` and ``"choices": {"text": [...], "label": [...]}``."""
    if "responses" in obj and not columns:
        return None
    keys = list(obj)
    question_key = find(keys, wanted("question", columns, QUESTION_NAMES))
    if question_key is None:
        return None
    question = obj[question_key]
    choices: Any = None
    if isinstance(question, dict):  # ARC: {"stem": ..., "choices": [...]}
        choices = question.get("choices")
        question = question.get("stem")
    list_key = find(keys, wanted("choices", columns, wanted("options", columns, LIST_NAMES)))
    if choices is None and list_key is not None:
        choices = obj[list_key]
    options, labels = _options(choices)
    answer_key = find(keys, wanted("answer", columns, ANSWER_NAMES))
    if options is None or answer_key is None or not isinstance(question, str):
        return None
    correct = resolve_answer(obj[answer_key], options, labels=labels)
    category_key = find(keys, wanted("category", columns, CATEGORY_NAMES))
    used = {question_key, list_key, answer_key, category_key}
    metadata = tuple(
        (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
        for k, v in obj.items()
        if k not in used and v is not None and k != "difficulty"
    )
    category = obj.get(category_key) if category_key else None
    return {
        "question": question,
        "responses": options,
        "correct": correct,
        "category": category if isinstance(category, str) else None,
        "difficulty": obj.get("difficulty"),
        "metadata": metadata,
        "fields": (question_key, list_key or "choices", answer_key),
    }


def _options(choices: Any) -> tuple[list[str] | None, list[str]]:
    if isinstance(choices, dict) and isinstance(choices.get("text"), list):
        texts = choices["text"]
        raw_labels = choices.get("label")
        labels = [str(x) for x in raw_labels] if isinstance(raw_labels, list) else []
        if all(isinstance(t, str) for t in texts):
            return list(texts), labels
    if isinstance(choices, list):
        if all(isinstance(c, str) for c in choices):
            return list(choices), []
        if all(isinstance(c, dict) and isinstance(c.get("text"), str) for c in choices):
            return [c["text"] for c in choices], [str(c.get("label", "")) for c in choices]
    return None, []
