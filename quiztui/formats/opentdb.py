"""Open Trivia DB API JSON: ``{"results": [{type, difficulty, category, question,
correct_answer, incorrect_answers}]}``, with HTML entities in the text.

True/false questions become options ("True", "False") in that order. Multiple-choice options
are the correct answer plus the incorrect ones in a deterministic order seeded by the question
text, so the key is not always the first option. Problems name the item (1-based in "results").
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from quiztui.core.bank import Bank, Item, flat, refuse_annotations, why_not_judged
from quiztui.core.quiz import Quiz
from quiztui.formats._source import (
    category_and_difficulty,
    dump_like,
    json_array_spans,
    json_problem,
    show,
    type_name,
)
from quiztui.formats._validate import QuizBuilder, RawItem

NAME = "opentdb"
_BOOLEAN = {"true": "True", "false": "False"}


def parse(text: str, path: str, title: str, *, strict: bool = True) -> Quiz:
    builder = QuizBuilder(path, NAME)
    if not text.strip():
        builder.problem("file is empty")
        raise builder.error()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        builder.problems.append(json_problem(path, exc))
        raise builder.error() from None
    return parse_data(data, path, title, strict=strict)


def parse_data(data: Any, path: str, title: str, *, strict: bool = True) -> Quiz:
    """Build the quiz from an already-decoded JSON document."""
    builder = QuizBuilder(path, NAME)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(data, dict) or "results" not in data:
        builder.problem("missing 'results' list (not an Open Trivia DB file)", field="results")
    elif not isinstance(results, list):
        builder.problem(f"must be a list (got {type_name(results)})", field="results")
    else:
        code = data.get("response_code")
        if not results and isinstance(code, int) and code != 0:
            builder.problem(f"the API returned no questions (response_code {code})")
        for index, obj in enumerate(results):
            _check_item(obj, builder, index + 1)
        if isinstance(data.get("title"), str) and data["title"].strip():
            title = data["title"].strip()
    return builder.build(title, strict=strict)


def _check_item(obj: Any, builder: QuizBuilder, item: int) -> None:
    count = len(builder.problems)

    def report(message: str, field: str | None = None) -> None:
        builder.problem(message, item=item, field=field)

    if not isinstance(obj, dict):
        report(f"expected an object (got {type_name(obj)})")
        return
    kind = obj.get("type", "multiple")
    if kind not in ("multiple", "boolean"):
        shown = show(kind) if isinstance(kind, str) else type_name(kind)
        report(f"must be 'multiple' or 'boolean' (got {shown})", "type")
    for name in ("question", "correct_answer"):
        if name not in obj:
            report("missing", name)
        elif not isinstance(obj[name], str):
            report(f"must be a string (got {type_name(obj[name])})", name)
    incorrect = obj.get("incorrect_answers")
    if "incorrect_answers" not in obj:
        report("missing", "incorrect_answers")
    elif not isinstance(incorrect, list):
        report(f"must be a list of strings (got {type_name(incorrect)})", "incorrect_answers")
    elif not all(isinstance(answer, str) for answer in incorrect):
        report("must be a list of strings", "incorrect_answers")
    extras = category_and_difficulty(obj, report)
    if len(builder.problems) > count:
        return
    assert isinstance(incorrect, list)
    question = html.unescape(obj["question"])
    correct = html.unescape(obj["correct_answer"])
    category = html.unescape(extras["category"]) if extras["category"] else None
    if kind == "boolean":
        if correct.strip().casefold() not in _BOOLEAN:
            report(f"must be 'True' or 'False' (got {show(correct)})", "correct_answer")
            return
        options = ["True", "False"]
        correct = _BOOLEAN[correct.strip().casefold()]
        fields = ["correct_answer", "incorrect_answers"]
    else:
        options = [correct] + [html.unescape(answer) for answer in incorrect]
        fields = ["correct_answer"] + ["incorrect_answers"] * len(incorrect)
    builder.add(
        RawItem(
            text=question,
            options=options,
            correct=correct,
            option_fields=fields,
            item=item,
            correct_field="correct_answer",
            options_field="incorrect_answers",
            category=category,
            difficulty=extras["difficulty"],
            kind=kind,
            shuffle=kind == "multiple",
        )
    )


# --- writing ------------------------------------------------------------------------------------


def item_object(item: Item, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Open Trivia DB result of a judgeable item (text HTML-escaped as the API does);
    ``base`` (the object it came from) keeps its other keys and their order."""
    text, options, key = flat(item)
    boolean = item.type == "truefalse"
    obj = dict(base) if base is not None else {}
    if base is None:
        obj["type"] = "boolean" if boolean else "multiple"
        obj["difficulty"] = item.extra_value("difficulty") or "medium"
        obj["category"] = html.escape(item.category or "General Knowledge")
    else:
        obj["type"] = "boolean" if boolean else "multiple"
    obj["question"] = html.escape(text)
    obj["correct_answer"] = html.escape(options[key])
    obj["incorrect_answers"] = [html.escape(o) for i, o in enumerate(options) if i != key]
    return obj


def unsupported(item: Item) -> str | None:
    reason = why_not_judged(item)
    return None if reason is None else f"{reason} (Open Trivia DB holds one-key questions)"


def write_bank(bank: Bank, annotations: Mapping[int, Mapping[str, str]] | None = None) -> str:
    refuse_annotations(NAME, annotations)
    document = {"response_code": 0, "results": [item_object(item) for item in bank.items]}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def item_spans(text: str) -> list[tuple[int, int]]:
    return json_array_spans(text, "results")


def splice_item(text: str, span: tuple[int, int], item: Item) -> str:
    original = text[span[0] : span[1]]
    return dump_like(item_object(item, json.loads(original)), original, text, span[0])
