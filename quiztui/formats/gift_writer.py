"""Moodle GIFT writing: one question rendered as GIFT, and a whole bank written as a GIFT file.

``quiztui.formats.gift`` holds the reader and re-exports ``render_item``, ``write_bank`` and
``unsupported`` from here, so the format registry reaches them through that module. This module
also holds the question types GIFT can carry and the numerical-answer pattern the reader shares.

``unsupported`` says why an item has no GIFT form (a type GIFT lacks, or a shape the reader
would read back as something else); ``write_bank`` refuses such items. ``$CATEGORY:`` is written
whenever the category changes, and an item's id, tags and annotations go in ``//`` comments
just before it. True/false feedback is written in Moodle's order (``TRUE#wrong#right``). The
writer escapes every control character and writes newlines as ``\\n``, so any text survives a
round trip; a text is led by its ``[format]`` tag when that differs from the question's or when
the text would otherwise be misread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from quiztui.core.bank import (
    ANNOTATION_PREFIX,
    TEXT_FORMATS,
    Bank,
    Choice,
    Item,
    Text,
    annotation_pairs,
    multiple_answers,
    right_options,
)
from quiztui.errors import QuiztuiError
from quiztui.formats import cloze

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMERICAL = re.compile(rf"\*|{_NUMBER}|{_NUMBER}[ \t]*(?::|\.\.)[ \t]*{_NUMBER}")
_TYPES = (
    "multichoice",
    "multichoiceset",  # written as Moodle's multiple-answer multichoice (see ``_answer_block``)
    "truefalse",
    "shortanswer",
    "numerical",
    "matching",
    "essay",
    "description",
    "multianswer",
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Text that would be misread at the start of a field unless an explicit [format] tag leads it.
_RISKY_START = re.compile(r"\[(?:html|moodle|plain|markdown)\]|%|//|\$CATEGORY:")


def unsupported(item: Item, *, cloze_extension: bool = False) -> str | None:
    """None when ``item`` can be written as GIFT, else why not. Moodle's GIFT format has no
    embedded answers (question/format/gift/format.php reads no ``{1:SA:...}``): a cloze item is
    written only as quiztui's own extension, when ``cloze_extension`` asks for it."""
    if item.raw is not None or item.type not in _TYPES:
        return f"{item.type} questions have no GIFT form"
    if item.type == "multianswer" and not cloze_extension:
        return (
            "embedded answers (cloze) have no GIFT form in Moodle (--gift-cloze writes"
            " quiztui's own extension, which only quiztui reads)"
        )
    for text in _texts(item):
        if text.format not in TEXT_FORMATS:
            return f"text format {text.format!r} has no GIFT tag"
    reason = _shape_problem(item)
    if reason is not None:
        return reason
    if any(c.weight is not None and not -100 <= c.weight <= 100 for c in item.choices):
        return "a weight outside -100..100"
    if item.ident is not None and (_CONTROL.search(item.ident) or item.ident.endswith("\\")):
        return "an id with control characters or a final backslash"
    if any(_CONTROL.search(t) or "<" in t or ">" in t or t.endswith("\\") for t in item.tags):
        return "a tag with <, >, control characters or a final backslash"
    if item.category is not None and _CONTROL.search(item.category):
        return "a category with a line break"
    return None


def _shape_problem(item: Item) -> str | None:
    kind, choices = item.type, item.choices
    if item.subquestions and kind != "multianswer":
        return f"a {kind} with embedded answers"
    if kind == "multianswer":
        if choices or item.tail is not None or _present(item.general_feedback):
            return "embedded answers with an answer block, a tail or general feedback"
        return cloze.problem(item.subquestions, item.stem.text)
    if kind == "description":
        if choices or item.general_feedback is not None or item.tail is not None:
            return "a description with answers, feedback or a tail"
        if not item.stem.text and not item.title:
            return "an empty description"
    elif kind == "essay" and choices:
        return "an essay with answers"
    elif kind == "truefalse":
        if len(choices) != 2 or choices[0].correct == choices[1].correct:
            return "true/false without a True and a False answer, exactly one of them right"
    elif kind in ("multichoice", "multichoiceset"):
        if len(choices) < 2:
            return "multiple choice with fewer than two answers"
        if all(c.correct for c in choices) and not multiple_answers(item):
            return "multiple choice with every answer right (GIFT reads that as short answer)"
    elif kind == "shortanswer":
        if not choices:
            return "short answer without answers"
        if any("->" in t.text for c in choices for t in (c.text, c.feedback) if t is not None):
            return "short answer containing '->' (GIFT reads it as matching)"
    elif kind == "numerical":
        if not choices:
            return "numerical without answers"
        for choice in choices:
            if not _NUMERICAL.fullmatch(choice.text.text):
                return (
                    f"numerical answer {choice.text.text!r} is not number[:tolerance] or min..max"
                )
    elif kind == "matching":
        if len(choices) < 2:
            return "matching with fewer than two pairs"
        if any(not (c.match or "").strip() or "->" in c.text.text for c in choices):
            return "matching pair without an answer, or with '->' in its question"
    if kind in ("multichoice", "multichoiceset", "shortanswer") and any(
        not c.text.text.strip() for c in choices
    ):
        return f"{kind} with an empty answer"
    return None


def _texts(item: Item) -> list[Text]:
    texts = [item.stem, *(c.text for c in item.choices)]
    texts += [c.feedback for c in item.choices if c.feedback is not None]
    texts += [t for t in (item.general_feedback, item.tail) if t is not None]
    return texts


def write_bank(
    bank: Bank,
    annotations: Mapping[int, Mapping[str, str]] | None = None,
    *,
    cloze_extension: bool = False,
) -> str:
    """The whole bank as a GIFT file; items must pass ``unsupported`` (callers drop the rest)."""
    blocks: list[str] = []
    category: str | None = None
    for index, item in enumerate(bank.items):
        reason = unsupported(item, cloze_extension=cloze_extension)
        if reason is not None:
            raise QuiztuiError(f"item {index + 1} cannot be written as GIFT: {reason}")
        if item.category is not None and item.category != category:
            blocks.append(f"$CATEGORY: {item.category}")
            category = item.category
        # A comment is written back whole unless it holds a line break or another control
        # character (a tab inside a comment is the author's own spacing and reads back the same).
        lines = [
            c
            for c in item.comments
            if c.startswith("//") and not _CONTROL.search(c.replace("\t", " "))
        ]
        if item.ident:
            lines.append(f"// [id:{_bracketed(item.ident)}]")
        if item.tags:
            lines.append("// " + " ".join(f"[tag:{_bracketed(t)}]" for t in item.tags))
        note = (annotations or {}).get(index)
        if note:
            lines.append(f"// {ANNOTATION_PREFIX}: " + " ".join(annotation_pairs(note)))
        lines.append(render_item(item))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _bracketed(value: str) -> str:
    return value.strip().replace("]", "\\]")


def render_item(item: Item) -> str:
    """One question as GIFT (title, stem, answer block, tail) without comments or category."""
    fmt = item.stem.format
    out = f"::{_escape(item.title)}::" if item.title else ""
    if item.type == "multianswer":
        return out + _cloze_stem(item)
    out += _field(item.stem, "moodle")
    if item.type == "description":
        return out
    out += (" " if out else "") + _answer_block(item)
    tail = _present(item.tail)
    if tail:
        out += ("" if tail.text[0] in ".,;:!?)\"'" else " ") + _field(tail, fmt)
    return out


def _cloze_stem(item: Item) -> str:
    """The stem with each blank written as an embedded answer (``{1:MC:~a~=b}``) in place."""
    text = item.stem
    tag = text.format != "moodle" or _RISKY_START.match(text.text) is not None
    joined = cloze.join(text.text, item.subquestions, _escape, "gift")
    return (f"[{text.format}]" if tag else "") + joined


def _answer_block(item: Item) -> str:
    fmt = item.stem.format
    general = item.general_feedback
    if item.type == "essay":
        return "{" + _general(general, fmt) + "}"
    if item.type == "truefalse":
        return "{" + _true_false_answer(item) + _general(general, fmt) + "}"
    choices = item.choices
    if item.type == "numerical":
        only = choices[0]
        if len(choices) == 1 and only.correct and only.weight is None and only.feedback is None:
            return "{#" + only.text.text + _general(general, fmt) + "}"
    if multiple_answers(item):
        lines = _multiple_answer_lines(item, fmt)
    else:
        lines = [_choice_line(item.type, choice, fmt) for choice in choices]
    if _present(general):
        lines.append("\t" + _general(general, fmt))
    opening = "{#\n" if item.type == "numerical" else "{\n"
    return opening + "".join(line + "\n" for line in lines) + "}"


def _choice_line(kind: str, choice: Choice, fmt: str) -> str:
    if kind == "matching":
        return f"\t={_field(choice.text, fmt)} -> {_escape(choice.match or '')}"
    weight = choice.weight
    if kind == "shortanswer":
        marker = "="
        weight = 0.0 if weight is None and not choice.correct else weight
    elif kind == "numerical" and not (choice.text.text == "*" and not choice.correct):
        # Moodle reads everything after a '~' of a numerical block as the feedback for any other
        # answer, so a partly right (or wrong) number is written '=%50%1822:2' ('=%0%' if wrong).
        marker = "="
        weight = 0.0 if weight is None and not choice.correct else weight
    else:
        marker = "=" if choice.correct else "~"
        # '=' is 100%: Moodle reads a weight after '=' in multiple choice as answer text.
        weight = None if kind == "multichoice" and choice.correct else weight
    line = "\t" + marker + ("" if weight is None else f"%{_number(weight)}%")
    if kind == "numerical":
        line += "" if choice.text.text == "*" and not choice.correct else choice.text.text
    else:
        line += _field(choice.text, fmt)
    feedback = _present(choice.feedback)
    return line + ("#" + _field(feedback, fmt) if feedback else "")


def _multiple_answer_lines(item: Item, fmt: str) -> list[str]:
    """A tick-all item in Moodle's multiple-answer form: every answer ``~%weight%``, never
    ``=`` (question/format/gift/format.php reads a block without ``=`` with single = 0, and
    qtype_multichoice needs the positive weights to add up to 100%). A right answer without a
    weight gets its share of 100%; a multichoiceset (all or nothing: 100 on each right answer)
    becomes equal shares, each wrong answer -100% so that ticking one scores nothing."""
    right = set(right_options(item))
    share = round(100 / len(right), 5) if right else 0.0
    lines = []
    for index, choice in enumerate(item.choices):
        weight = choice.weight
        if item.type == "multichoiceset":
            weight = share if index in right else -100.0
        elif weight is None and index in right:
            weight = share
        line = "\t~" + ("" if weight is None else f"%{_number(weight)}%")
        line += _field(choice.text, fmt)
        feedback = _present(choice.feedback)
        lines.append(line + ("#" + _field(feedback, fmt) if feedback else ""))
    return lines


def _true_false_answer(item: Item) -> str:
    """``TRUE#wrong#right``: Moodle's order, feedback for the wrong answer first."""
    true, false = item.choices
    right, wrong = (true, false) if true.correct else (false, true)
    fmt = item.stem.format
    out = "TRUE" if true.correct else "FALSE"
    wrong_feedback, right_feedback = _present(wrong.feedback), _present(right.feedback)
    if wrong_feedback or right_feedback:
        out += "#" + (_field(wrong_feedback, fmt) if wrong_feedback else "")
    return out + ("#" + _field(right_feedback, fmt) if right_feedback else "")


def _present(text: Text | None) -> Text | None:
    return text if text is not None and text.text else None


def _general(text: Text | None, fmt: str) -> str:
    text = _present(text)
    return "####" + _field(text, fmt) if text else ""


def _field(text: Text, default: str) -> str:
    """Escaped text, led by its ``[format]`` when that differs from ``default`` or when the text
    would otherwise be misread (a leading ``%``, ``//`` or format tag)."""
    tag = text.format != default or _RISKY_START.match(text.text) is not None
    return (f"[{text.format}]" if tag else "") + _escape(text.text)


def _escape(text: str) -> str:
    out = []
    for c in text.replace("\r\n", "\n").replace("\r", "\n"):
        if c == "\n":
            out.append("\\n")
        elif c in "\\~=#{}:":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def _number(value: float) -> str:
    if value == int(value):
        return str(int(value))
    shown = repr(value)
    return shown if "e" not in shown else f"{value:.12f}".rstrip("0").rstrip(".")
