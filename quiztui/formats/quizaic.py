"""Quizaic JSON: objects ``{"question", "responses": [...], "correct"}``.

Dataset exports load too: ``{"question", "choices": [...], "answer": index|letter|text}`` and
the common variants (``options``, ``answerKey``, ``label``, ``correct_answer``, ARC's nested
``choices``), options in their written order, other fields kept as metadata (``_dataset``).

Either a JSON array of such objects (problems name the item and the line it starts on) or one
object per line, JSON Lines style (problems name the line). Items may carry "category",
"difficulty", "context" (the passage the question was written from, as ``quiztui generate``
writes it) and "lint_ignore" (lint codes or categories the author accepts for the question:
"L106", "L105, L106" or ["style"]).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from quiztui.core.bank import (
    Bank,
    Item,
    flat,
    lint_ignore_of,
    refuse_annotations,
    why_not_judged,
)
from quiztui.core.quiz import Quiz
from quiztui.errors import QuiztuiError
from quiztui.formats import _dataset
from quiztui.formats._source import (
    array_item_lines,
    category_and_difficulty,
    dump_like,
    json_array_spans,
    json_problem,
    type_name,
)
from quiztui.formats._validate import QuizBuilder, RawItem

NAME = "quizaic"
LINT_IGNORE = "lint_ignore"  # an item's lint codes or categories the quiz accepts for it
_LETTERS = "ABCDEFGHIJ"


def parse(
    text: str,
    path: str,
    title: str,
    *,
    strict: bool = True,
    columns: _dataset.Columns | None = None,
) -> Quiz:
    builder = QuizBuilder(path, NAME, columns=columns)
    stripped = text.lstrip()
    if not stripped:
        builder.problem("file is empty")
        raise builder.error()
    if stripped.startswith("["):
        _parse_array(text, builder)
    else:
        _parse_lines(text, builder)
    return builder.build(title, strict=strict)


def _parse_array(text: str, builder: QuizBuilder) -> None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        builder.problems.append(json_problem(builder.path, exc))
        return
    lines = array_item_lines(text)
    for index, obj in enumerate(data):
        line = lines[index] if index < len(lines) else None
        check_item(obj, builder, line=line, item=index + 1)


def _parse_lines(text: str, builder: QuizBuilder) -> None:
    """One object per line; a whole-file JSON object (possibly pretty-printed) is one item."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        whole_error: json.JSONDecodeError | None = exc
    else:
        whole_error = None
        if isinstance(whole, dict) and "question" not in whole:
            builder.problem(
                "not a quiz: expected a Quizaic array or one Quizaic object per line, "
                "or an Open Trivia DB object with a 'results' list",
                field="results",
            )
            return
        check_item(whole, builder, line=1, item=None)
        return
    rows = [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if rows and whole_error is not None and not _parses(rows[0][1]):
        # Not JSON Lines at all (e.g. one pretty-printed document): report where it broke.
        builder.problems.append(json_problem(builder.path, whole_error))
        return
    for number, line in rows:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            builder.problems.append(json_problem(builder.path, exc, line_offset=number - 1))
            continue
        check_item(obj, builder, line=number, item=None)


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def check_item(obj: Any, builder: QuizBuilder, *, line: int | None, item: int | None) -> None:
    """Type-check one Quizaic object and hand it to the builder."""
    count = len(builder.problems)

    def report(message: str, field: str | None = None) -> None:
        builder.problem(message, line=line, item=item, field=field)

    if not isinstance(obj, dict):
        report(
            f"expected an object with 'question', 'responses' and 'correct' (got {type_name(obj)})"
        )
        return
    ignore = lint_ignore(obj, report)
    dataset = _dataset.object_fields(obj, builder.columns)
    if dataset is not None:  # {"question", "choices": [...], "answer"} and its variants
        if len(builder.problems) > count:
            return
        question_field, options_field, answer_field = dataset["fields"]
        options = dataset["responses"]
        builder.add(
            RawItem(
                text=dataset["question"],
                options=options,
                correct=dataset["correct"],
                option_fields=[options_field] * len(options),
                line=line,
                item=item,
                question_field=question_field,
                correct_field=answer_field,
                options_field=options_field,
                category=dataset["category"],
                difficulty=d if isinstance(d := dataset["difficulty"], str) else None,
                metadata=tuple(kv for kv in dataset["metadata"] if kv[0] != LINT_IGNORE),
                lint_ignore=ignore,
            )
        )
        return
    question = obj.get("question")
    responses = obj.get("responses")
    correct = obj.get("correct")
    for name, value in (("question", question), ("correct", correct)):
        if name not in obj:
            report("missing", name)
        elif not isinstance(value, str):
            what = "a string" if name == "question" else "the text of one of the responses"
            report(f"must be {what} (got {type_name(value)})", name)
    if "responses" not in obj:
        report("missing", "responses")
    elif not isinstance(responses, list):
        report(f"must be a list of strings (got {type_name(responses)})", "responses")
    else:
        for i, option in enumerate(responses):
            if not isinstance(option, str):
                report(f"option {i + 1} must be a string (got {type_name(option)})", "responses")
    extras = category_and_difficulty(obj, report)
    context = obj.get("context")
    if context is not None and not isinstance(context, str):
        report(f"must be a string (got {type_name(context)})", "context")
    if len(builder.problems) > count:
        return
    assert isinstance(question, str) and isinstance(correct, str) and isinstance(responses, list)
    builder.add(
        RawItem(
            text=question,
            options=list(responses),
            correct=correct,
            option_fields=["responses"] * len(responses),
            line=line,
            item=item,
            category=extras["category"],
            difficulty=extras["difficulty"],
            context=context if isinstance(context, str) else None,
            lint_ignore=ignore,
        )
    )


def lint_ignore(obj: dict[str, Any], report: Any) -> tuple[str, ...]:
    """The item's ``lint_ignore``: a code or category, a comma-separated string of them, or a
    list of them; a wrong type or an unknown code is reported on the field."""
    value = obj.get(LINT_IGNORE)
    if value is None:
        return ()
    from quiztui.core.lint_model import LintSettingsError, check_selectors, split_selectors

    if isinstance(value, str):
        words = split_selectors([value])
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        words = split_selectors(value)
    else:
        report(f"must be a lint code or a list of codes (got {type_name(value)})", LINT_IGNORE)
        return ()
    try:
        return check_selectors(words)
    except LintSettingsError as exc:
        report(str(exc), LINT_IGNORE)
        return ()


# --- writing ------------------------------------------------------------------------------------


def item_object(item: Item, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Quizaic object of a judgeable item; ``base`` (the object it came from) keeps its
    other keys and their order."""
    text, options, key = flat(item)
    obj = dict(base) if base is not None else {}
    obj.update(question=text, responses=list(options), correct=options[key])
    if base is None:
        for name in ("category",):
            if item.category:
                obj[name] = item.category
        for name in ("difficulty", "context"):
            value = item.extra_value(name)
            if value:
                obj[name] = value
        ignore = lint_ignore_of(item.comments)  # GIFT's ``// quiztui: ignore`` line, or ours
        if ignore:
            obj[LINT_IGNORE] = list(ignore)
    return obj


def unsupported(item: Item) -> str | None:
    reason = why_not_judged(item)
    return None if reason is None else f"{reason} (Quizaic holds one-key multiple choice)"


def write_bank(bank: Bank, annotations: Mapping[int, Mapping[str, str]] | None = None) -> str:
    refuse_annotations(NAME, annotations)
    objects = [item_object(item) for item in bank.items]
    return json.dumps(objects, ensure_ascii=False, indent=2) + "\n"


def item_spans(text: str) -> list[tuple[int, int]]:
    """Where each question's object is in the file: array elements, lines, or the whole text."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json_array_spans(text)
    try:
        json.loads(text)
    except json.JSONDecodeError:
        spans, pos = [], 0
        for line in text.split("\n"):
            body = line.rstrip("\r")
            if body.strip():
                spans.append((pos, pos + len(body)))
            pos += len(line) + 1
        return spans
    start = len(text) - len(stripped)
    return [(start, len(text.rstrip()))]


def splice_item(
    text: str, span: tuple[int, int], item: Item, *, columns: _dataset.Columns | None = None
) -> str:
    """The text that replaces ``span`` (one question's object) after the item was edited: a
    dataset record (``choices`` and ``answer``, or the fields ``columns`` names) keeps its own
    fields, a Quizaic object its ``question``/``responses``/``correct``."""
    original = text[span[0] : span[1]]
    base = json.loads(original)
    obj = dataset_object(item, base, columns) if isinstance(base, dict) else None
    return dump_like(obj or item_object(item, base), original, text, span[0])


def dataset_object(
    item: Item, base: dict[str, Any], columns: _dataset.Columns | None
) -> dict[str, Any] | None:
    """The edited record in a dataset's own fields (None: not a dataset record): the question,
    the options list, and the answer written as it was (an index, a letter or the text)."""
    found = _dataset.object_fields(base, columns)
    if found is None:
        return None
    question_key, list_key, answer_key = found["fields"]
    listed = base.get(list_key)
    if not isinstance(base.get(question_key), str) or not (
        isinstance(listed, list) and all(isinstance(o, str) for o in listed)
    ):
        raise QuiztuiError(
            f"cannot write the edit into this record's nested {list_key!r} field"
            " (convert the file to Quizaic JSON or CSV first)"
        )
    text, options, key = flat(item)
    obj = dict(base)
    obj[question_key] = text
    obj[list_key] = list(options)
    old = base[answer_key]
    mark = old.strip() if isinstance(old, str) else ""
    if isinstance(old, int) and not isinstance(old, bool):
        obj[answer_key] = key
    elif len(mark) == 1 and mark.upper() in _LETTERS and mark not in listed:
        obj[answer_key] = _LETTERS[key] if mark.isupper() else _LETTERS[key].lower()
    elif mark.isdecimal() and mark not in listed:
        obj[answer_key] = str(key)
    else:
        obj[answer_key] = options[key]
    return obj
