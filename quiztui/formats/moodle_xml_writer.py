"""Moodle XML writing: one ``<question>`` element per item, and a whole bank as a ``<quiz>`` file.

``quiztui.formats.moodle_xml`` holds the reader and re-exports ``render_item``, ``write_bank``,
``unsupported`` and ``MODELLED`` from here, so the format registry reaches them through that
module. This module also holds the tables the reader shares (modelled types, text formats, the
extras written after the answers, the number pattern).

Items kept verbatim (``Item.raw``) are written back as they were read, re-serialised only when
annotations change their tags. A modelled item is written with its extras in the places the
reader found them (see the reader's docstring), a ``<name>`` made from the stem when it has no
title, and a GIFT tail joined to the stem after a ``_____`` blank; a numerical ``a..b`` becomes its
middle with half the width as tolerance. A text holding markup characters is written as
CDATA unless it holds ``]]>`` or a carriage return (then it is escaped). A category question
is written whenever the category changes (as it was read, with its ``<info>`` description and
``<idnumber>``, when the bank read one), and annotations become ``quiztui:`` tags.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

from quiztui.core.bank import ANNOTATION_PREFIX, Bank, Item, Text, annotation_pairs
from quiztui.errors import QuiztuiError
from quiztui.formats import cloze

MODELLED = (
    "multichoice",
    "multichoiceset",  # qtype_multichoiceset: all or nothing, every right answer fraction 100
    "truefalse",
    "shortanswer",
    "numerical",
    "essay",
    "description",
    "matching",
    "cloze",  # read as a "multianswer" item (embedded answers), written back as type="cloze"
)
_FORMAT_IN = {
    "html": "html",
    "moodle_auto_format": "moodle",
    "plain_text": "plain",
    "markdown": "markdown",
}
_FORMAT_OUT = {v: k for k, v in _FORMAT_IN.items()}
_HEADER = ("defaultgrade", "penalty", "hidden")  # written before <idnumber>, as Moodle does
_AFTER_ANSWERS = ("hint",)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _is_number(value: str) -> bool:
    return _NUMBER.fullmatch(value) is not None


_INDENT = "    "


def _escape(value: str) -> str:
    """Element content escaped; a carriage return as a reference, which XML would otherwise
    turn into a line feed."""
    escaped = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("\r", "&#13;")


def _attribute(value: str) -> str:
    return _escape(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def _content(value: str) -> str:
    """A text as element content: CDATA when it holds markup characters, else escaped."""
    if "\r" in value or "]]>" in value or not re.search(r"[<>&]", value):
        return _escape(value)
    return f"<![CDATA[{value}]]>"


def _number(value: float) -> str:
    shown = repr(float(value))
    return shown[:-2] if shown.endswith(".0") else shown


def _text_element(
    tag: str, text: Text | None, children: list[str], indent: str, attributes: str = ""
) -> list[str]:
    if text is None and not children:
        return []
    fmt = _FORMAT_OUT.get(text.format, "html") if text is not None else "html"
    lines = [f'{indent}<{tag}{attributes} format="{fmt}">']
    lines.append(f"{indent}  <text>{_content(text.text if text is not None else '')}</text>")
    lines += [f"{indent}  {child}" for child in children]
    lines.append(f"{indent}</{tag}>")
    return lines


def _extra_element(name: str, value: str, indent: str) -> str:
    if value.startswith("<"):
        return indent + value
    if not value:
        return f"{indent}<{name}/>"
    return f"{indent}<{name}>{_content(value)}</{name}>"


def _children(item: Item, key: str) -> list[str]:
    """The kept XML of elements found inside the element at ``key`` (see the module docstring)."""
    prefix = key + "/"
    found = []
    for name, value in item.extra:
        if name.startswith(prefix) and "/" not in name[len(prefix) :]:
            found.append(_extra_element(name[len(prefix) :], value, ""))
    return found


def _default_name(item: Item) -> str:
    """A question needs a name in Moodle: the stem, shortened, when the item has no title."""
    plain = item.stem.plain() or f"{item.type} question"
    return plain if len(plain) <= 80 else plain[:79] + "…"


def _stem(item: Item) -> Text:
    """The question text; a GIFT answer set inside the sentence becomes a ``_____`` blank, and
    embedded answers are written back in place of their ``{#k}``."""
    if item.type == "multianswer":
        return replace(item.stem, text=cloze.join(item.stem.text, item.subquestions))
    if item.tail is None or not item.tail.text.strip():
        return item.stem
    head, tail = item.stem.text.rstrip(), item.tail.text.lstrip()
    gap = "" if tail[:1] in tuple(".,;:!?)") else " "
    return replace(item.stem, text=f"{head} _____{gap}{tail}")


def _numerical(text: str) -> tuple[str, str]:
    """A numerical choice's text -> (answer, tolerance); ``a..b`` becomes its middle and half."""
    if ":" in text:
        value, tolerance = text.rsplit(":", 1)
        if _is_number(tolerance.strip()):
            return value.strip(), tolerance.strip()
    low, sep, high = text.partition("..")
    if sep and _is_number(low.strip()) and _is_number(high.strip()):
        a, b = Decimal(low.strip()), Decimal(high.strip())
        return format((a + b) / 2, "f"), format(abs(b - a) / 2, "f")
    return text, "0"


def _answers(item: Item) -> list[str]:
    lines: list[str] = []
    inner = _INDENT + "  "
    if item.type == "truefalse":
        for index, (choice, label) in enumerate(
            zip(item.choices, ("true", "false"), strict=True), 1
        ):
            fraction = "100" if choice.correct else "0"
            lines.append(f'{_INDENT}<answer fraction="{fraction}" format="moodle_auto_format">')
            lines.append(f"{inner}<text>{label}</text>")
            lines += _text_element(
                "feedback", choice.feedback, _children(item, f"answer[{index}]/feedback"), inner
            )
            lines += [inner + c for c in _children(item, f"answer[{index}]")]
            lines.append(f"{_INDENT}</answer>")
        return lines
    if item.type == "matching":
        for index, choice in enumerate(item.choices, 1):
            key = f"subquestion[{index}]"
            fmt = _FORMAT_OUT.get(choice.text.format, "html")
            lines.append(f'{_INDENT}<subquestion format="{fmt}">')
            lines.append(f"{inner}<text>{_content(choice.text.text)}</text>")
            lines.append(f"{inner}<answer>")
            lines.append(f"{inner}  <text>{_content(choice.match or '')}</text>")
            lines += [f"{inner}  {c}" for c in _children(item, f"{key}/answer")]
            lines.append(f"{inner}</answer>")
            lines += [inner + c for c in _children(item, key)]
            lines.append(f"{_INDENT}</subquestion>")
        return lines
    for index, choice in enumerate(item.choices, 1):
        key = f"answer[{index}]"
        fraction = ""
        if choice.weight is not None:
            fraction = f' fraction="{_number(choice.weight)}"'
        elif choice.correct:
            fraction = ' fraction="100"'
        text, tolerance = choice.text, None
        if item.type == "numerical":
            value, tolerance = _numerical(choice.text.text)
            text = replace(choice.text, text=value)
        lines += _text_element("answer", text, [], _INDENT, fraction)[:-1]
        lines += _text_element(
            "feedback", choice.feedback, _children(item, f"{key}/feedback"), inner
        )
        if tolerance is not None:
            lines.append(f"{inner}<tolerance>{_escape(tolerance)}</tolerance>")
        lines += [inner + c for c in _children(item, key)]
        lines.append(f"{_INDENT}</answer>")
    return lines


def _single(item: Item) -> str:
    """Moodle's ``<single>`` for a multichoice that does not say: one 100% answer or several."""
    # One answer worth 100% is single-answer even beside partly right ones (GIFT "=a ~%25%b").
    right = [c for c in item.choices if c.correct or c.weight == 100]
    return "true" if len(right) == 1 else "false"


def _render(item: Item, tags: tuple[str, ...]) -> str:
    if item.raw is not None:
        return item.raw if tags == item.tags else _retag(item.raw, tags)
    inner = _INDENT + "  "
    kind = "cloze" if item.type == "multianswer" else item.type
    lines = [f'<question type="{_attribute(kind)}">']
    lines += [
        f"{_INDENT}<name>",
        f"{inner}<text>{_content(item.title or _default_name(item))}</text>",
    ]
    lines.append(f"{_INDENT}</name>")
    lines += _text_element("questiontext", _stem(item), _children(item, "questiontext"), _INDENT)
    lines += _text_element(
        "generalfeedback", item.general_feedback, _children(item, "generalfeedback"), _INDENT
    )
    top = [(k, v) for k, v in item.extra if "/" not in k and k not in _AFTER_ANSWERS]
    ident = [f"{_INDENT}<idnumber>{_content(item.ident)}</idnumber>"] if item.ident else []
    for name, value in top:
        if ident and name not in _HEADER:
            lines += ident
            ident = []
        lines.append(_extra_element(name, value, _INDENT))
    lines += ident
    if item.type == "multichoice" and item.extra_value("single") is None:
        lines.append(f"{_INDENT}<single>{_single(item)}</single>")
    lines += _answers(item)
    lines += [_extra_element(k, v, _INDENT) for k, v in item.extra if k in _AFTER_ANSWERS]
    if tags:
        lines.append(f"{_INDENT}<tags>")
        lines += [f"{inner}<tag><text>{_content(tag)}</text></tag>" for tag in tags]
        lines.append(f"{_INDENT}</tags>")
    lines.append("  </question>")
    return "\n".join(lines)


def _retag(raw: str, tags: tuple[str, ...]) -> str:
    """A verbatim question with its tags replaced (re-serialised: only annotations need this)."""
    element = ET.fromstring(raw)
    for old in element.findall("tags"):
        element.remove(old)
    if tags:
        holder = ET.SubElement(element, "tags")
        for tag in tags:
            ET.SubElement(ET.SubElement(holder, "tag"), "text").text = tag
    return ET.tostring(element, encoding="unicode")


def unsupported(item: Item) -> str | None:
    """None when the item can be written as Moodle XML, else why not."""
    if item.raw is not None:
        if not item.raw.lstrip().startswith("<question"):
            return f"a {item.type} question kept verbatim from another format"
        return None
    if item.type == "multianswer":
        reason = cloze.problem(item.subquestions, item.stem.text)
        if reason is not None:
            return reason
    elif item.type not in MODELLED or item.type == "cloze":
        return f"{item.type} questions have no Moodle XML form here"
    if item.type == "truefalse" and len(item.choices) != 2:
        return "a truefalse question without its True and False answers"
    texts = [item.stem.text, item.title or "", item.ident or "", item.category or "", *item.tags]
    for text in (item.general_feedback, item.tail):
        texts.append(text.text if text is not None else "")
    for choice in (*item.choices, *(c for sub in item.subquestions for c in sub.choices)):
        texts += [choice.text.text, choice.match or ""]
        texts.append(choice.feedback.text if choice.feedback is not None else "")
    if any(_NOT_XML.search(text) for text in texts):
        return "a text holds control characters that XML 1.0 cannot carry"
    return None


def render_item(item: Item) -> str:
    """One ``<question>`` element, from ``<question`` to ``</question>``; verbatim for raw items."""
    reason = unsupported(item)
    if reason is not None:
        raise QuiztuiError(f"cannot write this question as Moodle XML: {reason}")
    return _render(item, item.tags)


def _category(path: str) -> str:
    return "\n".join(
        [
            '  <question type="category">',
            f"{_INDENT}<category>",
            f"{_INDENT}  <text>{_content(path)}</text>",
            f"{_INDENT}</category>",
            "  </question>",
        ]
    )


def write_bank(bank: Bank, annotations: Mapping[int, Mapping[str, str]] | None = None) -> str:
    """The whole bank as a Moodle XML file.

    A category question is written whenever the category changes (an item without a category
    after one with a category stays in it: Moodle XML cannot return to "no category").
    ``annotations`` (by item index, 0-based) become tags ``quiztui:badge=poor``, ...; tags already
    starting with ``quiztui:`` are dropped first."""
    refused = [(i, r) for i, item in enumerate(bank.items) if (r := unsupported(item)) is not None]
    if refused:
        listed = "; ".join(f"q{i + 1}: {reason}" for i, reason in refused[:5])
        more = f" (and {len(refused) - 5} more)" if len(refused) > 5 else ""
        raise QuiztuiError(
            f"{len(refused)} question(s) cannot be written as Moodle XML: {listed}{more}"
        )
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<quiz>"]
    category: str | None = None
    for index, item in enumerate(bank.items):
        if item.category is not None and item.category != category:
            source = bank.categories.get(item.category)
            out.append("  " + source if source is not None else _category(item.category))
            category = item.category
        tags = item.tags
        if annotations and index in annotations:
            prefix = f"{ANNOTATION_PREFIX}:"
            kept = tuple(t for t in tags if not t.startswith(prefix))
            tags = kept + tuple(prefix + pair for pair in annotation_pairs(annotations[index]))
        out.append("  " + _render(item, tags))
    out.append("</quiz>")
    return "\n".join(out) + "\n"
