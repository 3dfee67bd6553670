"""Moodle XML: a ``<quiz>`` of ``<question type="...">`` elements, read into a question bank.

Modelled types: multichoice, truefalse, shortanswer, numerical, essay, description, matching.
Any other type (calculated, ordering, gapselect, cloze/multianswer, ...) keeps its name, its
header (name, text, idnumber, tags) for listing, and its exact source text in ``Item.raw``, which
is written back verbatim. ``<question type="category">`` sets the category of the items after it.

Reading mirrors Moodle's importer (question/format/xml/format.php): texts are trimmed; a missing
``format`` is ``html`` for the question text and the question text's format for the rest
(``plain`` for short-answer and numerical answers, which Moodle reads as plain text); an unknown
format is ``html``. Mapping: ``<name>`` -> title, ``<idnumber>`` -> ident, ``<tags>`` -> tags,
``fraction`` -> weight (a percentage; None when absent) and ``correct`` = fraction 100. A
true/false item has the True then False choices (weight None: Moodle reads only "fraction is
100"). A numerical choice is ``value`` or ``value:tolerance`` (the tolerance is left out when it is
zero or absent). A matching choice is the sub-question, ``match`` its answer. Empty feedback,
name or idnumber is None.

Every other element of a question (defaultgrade, penalty, shuffleanswers, single, hints, combined
feedback, units, ...) is kept in ``Item.extra`` as (element name, value): its text when it is a
plain element without attributes or children, else its exact source XML. Elements found inside a
text or an answer (``<file>`` images, calculated tolerances, ...) are kept the same way under a
path, ``questiontext/file`` or ``answer[2]/file``, and written back inside that element. Extras
are ordered as the writer emits them, so a write and a read give the same item.

Safety: expat (Python 3.11) refuses entity-expansion bombs, and any ``<!ENTITY`` declared in a
DOCTYPE is refused with its own problem before parsing.
"""

from __future__ import annotations

import bisect
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from xml.parsers import expat

from quiztui.core.bank import ANNOTATION_PREFIX, Bank, Choice, Item, Text, annotation_pairs
from quiztui.errors import QuizFormatError, QuizProblem, QuiztuiError

NAME = "moodle_xml"
EXTENSIONS = (".xml",)

MODELLED = (
    "multichoice",
    "truefalse",
    "shortanswer",
    "numerical",
    "essay",
    "description",
    "matching",
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
_TRIM = " \t\n\r"  # what PHP's trim() removes (Moodle trims every text it reads)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_PROLOG = re.compile(
    r"\A\ufeff?\s*(?:<\?.*?\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>\s*)*<quiz[\s/>]",
    re.DOTALL,
)
_START_TAG = re.compile(r"""<([^\s/>]+)(?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*(/?)>""")
_END_TAG = re.compile(r"</([^\s>]+)\s*>")
_BREAK = re.compile(r"\r\n|\r|\n")


def sniff(text: str) -> bool:
    """True when the document's root element is ``<quiz>``."""
    return _PROLOG.match(text) is not None


# --- Locating elements in the source ---------------------------------------------------------


@dataclass
class _Located:
    name: str
    start: int
    end: int = -1


def _skip_declaration(text: str, start: int) -> int:
    """The end of a ``<!DOCTYPE ...>`` (or other ``<!...>``) starting at ``start``."""
    pos, depth, length = start + 2, 0, len(text)
    while pos < length:
        char = text[pos]
        if char in "\"'":
            close = text.find(char, pos + 1)
            pos = length if close < 0 else close + 1
            continue
        if text.startswith("<!--", pos):
            close = text.find("-->", pos + 4)
            pos = length if close < 0 else close + 3
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == ">" and depth <= 0:
            return pos + 1
        pos += 1
    return length


def _scan(text: str) -> list[_Located] | None:
    """Every element of a well-formed document in document order, with its [start, end) range.

    Skips comments, CDATA, processing instructions and the DOCTYPE. None if the text does not
    scan (it was parsed by expat first, so that would be a bug here, not in the file)."""
    elements: list[_Located] = []
    stack: list[_Located] = []
    pos = 0
    while (lt := text.find("<", pos)) >= 0:
        for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")):
            if text.startswith(opener, lt):
                close = text.find(closer, lt + len(opener))
                if close < 0:
                    return None
                pos = close + len(closer)
                break
        else:
            if text.startswith("<!", lt):
                pos = _skip_declaration(text, lt)
            elif text.startswith("</", lt):
                end_match = _END_TAG.match(text, lt)
                if end_match is None or not stack:
                    return None
                stack.pop().end = end_match.end()
                pos = end_match.end()
            else:
                start_match = _START_TAG.match(text, lt)
                if start_match is None:
                    return None
                element = _Located(start_match.group(1), lt)
                elements.append(element)
                if start_match.group(2):
                    element.end = start_match.end()
                else:
                    stack.append(element)
                pos = start_match.end()
    return None if stack else elements


def _entity_declaration(text: str) -> int | None:
    """Offset of an ``<!ENTITY`` declared in the document's DOCTYPE, if any."""
    pos = 0
    while True:
        while pos < len(text) and (text[pos].isspace() or text[pos] == "\ufeff"):
            pos += 1
        if text.startswith("<?", pos):
            close = text.find("?>", pos)
            pos = len(text) if close < 0 else close + 2
        elif text.startswith("<!--", pos):
            close = text.find("-->", pos)
            pos = len(text) if close < 0 else close + 3
        elif text.startswith("<!DOCTYPE", pos):
            found = text.find("<!ENTITY", pos, _skip_declaration(text, pos))
            return None if found < 0 else found
        else:
            return None


class _Lines:
    """Offsets to 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def byte_column(self, line: int, column: int) -> int:
        """expat's 0-based byte column on a line -> 1-based character column."""
        if not 1 <= line <= len(self.starts):
            return column + 1
        start = self.starts[line - 1]
        stop = self.starts[line] if line < len(self.starts) else len(self.text)
        encoded = self.text[start:stop].encode("utf-8", "surrogatepass")
        return len(encoded[:column].decode("utf-8", "ignore")) + 1


# --- Reading ---------------------------------------------------------------------------------


def parse_bank(text: str, path: str, title: str) -> Bank:
    """Every question of a Moodle XML file, or a QuizFormatError listing every problem."""
    lines = _Lines(text)
    entity = _entity_declaration(text)
    if entity is not None:
        line, column = lines.at(entity)
        message = (
            "the DOCTYPE declares an XML entity (<!ENTITY ...>); Moodle XML never needs one and "
            "entity declarations are refused (they can expand without bound)"
        )
        raise QuizFormatError(path, [QuizProblem(path, message, line=line, column=column)])
    try:
        parser = ET.XMLParser(encoding="utf-8")
        parser.feed(text.encode("utf-8", "surrogatepass"))
        root = parser.close()
    except ET.ParseError as exc:
        line, byte_column = exc.position
        message = f"not well-formed XML: {expat.ErrorString(exc.code)}"
        problem = QuizProblem(path, message, line=line, column=lines.byte_column(line, byte_column))
        raise QuizFormatError(path, [problem]) from None
    if root.tag != "quiz":
        message = f"the root element is <{root.tag}>, not <quiz>: not a Moodle XML question file"
        raise QuizFormatError(path, [QuizProblem(path, message, line=1)])
    reader = _Reader(path, text, lines, root)
    items = tuple(reader.items())
    if reader.problems:
        raise QuizFormatError(path, reader.problems)
    return Bank(items, format=NAME, title=title, source_path=path, source_text=text)


def _strip(value: str | None) -> str:
    return (value or "").strip(_TRIM)


def _format(name: str | None, default: str) -> str:
    if name is None:
        return default
    return _FORMAT_IN.get(name.strip(), "html")


def _is_number(value: str) -> bool:
    return _NUMBER.fullmatch(value) is not None


class _Reader:
    """One parse: the located elements, the problems found and the extras of the item in hand."""

    def __init__(self, path: str, text: str, lines: _Lines, root: ET.Element) -> None:
        self.path = path
        self.text = text
        self.lines = lines
        self.problems: list[QuizProblem] = []
        self.where: dict[int, _Located] = {}
        located = _scan(text)
        elements = list(root.iter())
        if located is not None and len(located) == len(elements):
            if all(_local(e.tag) == _local(p.name) for e, p in zip(elements, located, strict=True)):
                self.where = {id(e): p for e, p in zip(elements, located, strict=True)}
        self.root = root
        self.extras: dict[str, list[tuple[str, str]]] = {}
        self.stem_format = "html"  # the format of the question in hand's text: the default

    def position(self, element: ET.Element) -> tuple[int | None, int | None]:
        located = self.where.get(id(element))
        return self.lines.at(located.start) if located else (None, None)

    def problem(self, element: ET.Element, message: str, fld: str) -> None:
        line, column = self.position(element)
        self.problems.append(QuizProblem(self.path, message, line=line, column=column, field=fld))

    def source(self, element: ET.Element) -> str:
        """The element's exact source text (re-serialised if it could not be located)."""
        located = self.where.get(id(element))
        if located is not None and located.end >= 0:
            return self.text[located.start : located.end]
        copy = ET.Element(element.tag, element.attrib)
        copy.text, copy[:] = element.text, list(element)
        return ET.tostring(copy, encoding="unicode")

    def value(self, element: ET.Element) -> str:
        """An extra's value: the text of a plain element, else its source XML."""
        text = _strip(element.text)
        if element.attrib or len(element) or text.startswith("<"):
            return self.source(element)
        return text

    def keep(self, group: str, key: str, element: ET.Element) -> None:
        self.extras.setdefault(group, []).append((key, self.value(element)))

    def items(self) -> Iterator[Item]:
        category: str | None = None
        for element in self.root:
            if element.tag != "question":
                continue
            kind = _strip(element.get("type"))
            if not kind:
                self.problem(element, "a <question> without a type attribute", "type")
            elif kind == "category":
                path = element.find("category/text")
                if path is None:
                    self.problem(
                        element, "a category question without <category><text>", "category"
                    )
                else:
                    category = _strip(path.text) or None
            else:
                yield self.item(element, kind, category)

    def item(self, element: ET.Element, kind: str, category: str | None) -> Item:
        self.extras = {}
        question_text = element.find("questiontext")
        self.stem_format = _format(
            question_text.get("format") if question_text is not None else None, "html"
        )
        line, _ = self.position(element)
        located = self.where.get(id(element))
        span = (located.start, located.end) if located is not None else None
        modelled = {"name", "questiontext", "generalfeedback", "idnumber", "tags"}
        seen: set[str] = set()
        title = ident = None
        stem = Text("", "html")
        general_feedback: Text | None = None
        tags: tuple[str, ...] = ()
        answers: list[ET.Element] = []
        answer_tag = {"matching": "subquestion"}.get(kind, "answer")
        for child in element:
            tag = child.tag
            if isinstance(tag, str) and tag in modelled and tag not in seen:
                seen.add(tag)
                if tag == "name":
                    title = _strip(child.findtext("text")) or None
                elif tag == "questiontext":
                    stem = self.text_of(child, "questiontext", "html", group="questiontext")
                elif tag == "generalfeedback":
                    general_feedback = self.optional_text(
                        child, "generalfeedback", "generalfeedback"
                    )
                elif tag == "idnumber":
                    ident = _strip(child.text) or None
                else:
                    found = (_strip(t.findtext("text")) for t in child.findall("tag"))
                    tags = tuple(t for t in found if t)
            elif kind in MODELLED and tag == answer_tag and kind not in ("essay", "description"):
                answers.append(child)
            elif isinstance(tag, str):
                group = "after" if tag in _AFTER_ANSWERS else "top"
                self.keep(group, tag, child)
        base = Item(
            type=kind,
            stem=stem,
            title=title,
            ident=ident,
            tags=tags,
            category=category,
            general_feedback=general_feedback,
            line=line,
            span=span,
        )
        if kind not in MODELLED:
            return replace(base, raw=self.source(element))
        choices = self.choices(element, kind, answers)
        order = ("questiontext", "generalfeedback", "top", "answers", "after")
        extra = tuple(pair for group in order for pair in self.extras.get(group, []))
        return replace(base, choices=choices, extra=extra)

    def text_of(
        self, element: ET.Element, key: str, default: str, *, group: str, skip: tuple[str, ...] = ()
    ) -> Text:
        """A text element's ``<text>`` and format; its other children are kept as extras."""
        value: str | None = None
        for child in element:
            if not isinstance(child.tag, str) or child.tag in skip:
                continue
            if child.tag == "text" and value is None:
                value = _strip(child.text)
            else:
                self.keep(group, f"{key}/{child.tag}", child)
        return Text(value or "", _format(element.get("format"), default))

    def optional_text(self, element: ET.Element | None, key: str, group: str) -> Text | None:
        """Feedback: None when absent or empty (its extra children are still kept)."""
        if element is None:
            return None
        text = self.text_of(element, key, self.stem_format, group=group)
        return text if text.text else None

    def fraction(self, answer: ET.Element) -> float | None:
        raw = answer.get("fraction")
        if raw is None:
            return None
        value = raw.strip()
        if not _is_number(value):
            self.problem(answer, f"fraction must be a number (got {raw!r})", "fraction")
            return None
        return float(value)

    def choices(
        self, element: ET.Element, kind: str, answers: list[ET.Element]
    ) -> tuple[Choice, ...]:
        if kind in ("essay", "description"):
            return ()
        if kind == "matching":
            if not answers:
                self.problem(
                    element, "a matching question needs <subquestion> elements", "subquestion"
                )
            return tuple(self.subquestion(sub, i) for i, sub in enumerate(answers, start=1))
        if not answers:
            self.problem(element, f"a {kind} question needs at least one <answer>", "answer")
            return ()
        if kind == "truefalse":
            return self.true_false(element, answers)
        default = self.stem_format if kind == "multichoice" else "plain"
        return tuple(self.answer(a, i, kind, default) for i, a in enumerate(answers, start=1))

    def answer(self, answer: ET.Element, index: int, kind: str, default: str) -> Choice:
        key = f"answer[{index}]"
        weight = self.fraction(answer)
        skip = ("feedback", "tolerance") if kind == "numerical" else ("feedback",)
        text = self.text_of(answer, key, default, group="answers", skip=skip)
        feedback = self.optional_text(answer.find("feedback"), f"{key}/feedback", "answers")
        if kind == "numerical":
            text = replace(text, text=self.numerical(answer, text.text))
        correct = weight is not None and abs(weight - 100) < 1e-9
        return Choice(text, correct=correct, weight=weight, feedback=feedback)

    def numerical(self, answer: ET.Element, value: str) -> str:
        tolerance_element = answer.find("tolerance")
        tolerance = _strip(tolerance_element.text) if tolerance_element is not None else "0"
        tolerance = tolerance or "0"
        if not _is_number(tolerance):
            where = tolerance_element if tolerance_element is not None else answer
            self.problem(where, f"tolerance must be a number (got {tolerance!r})", "tolerance")
            return value
        if float(tolerance) == 0 and ":" not in value and ".." not in value:
            return value
        return f"{value}:{tolerance}"

    def true_false(self, element: ET.Element, answers: list[ET.Element]) -> tuple[Choice, ...]:
        by_text: dict[str, list[ET.Element]] = {}
        for answer in answers:
            by_text.setdefault(_strip(answer.findtext("text")).lower(), []).append(answer)
        if (
            len(answers) != 2
            or len(by_text.get("true", [])) != 1
            or len(by_text.get("false", [])) != 1
        ):
            got = ", ".join(repr(_strip(a.findtext("text"))) for a in answers)
            self.problem(
                element,
                f"a truefalse question needs one answer 'true' and one 'false' (got {got})",
                "answer",
            )
            return ()
        pair = (by_text["true"][0], by_text["false"][0])
        weights = [self.fraction(a) for a in pair]
        right = [w is not None and abs(w - 100) < 1e-9 for w in weights]
        if right.count(True) != 1:
            self.problem(
                element, "exactly one of the true/false answers must have fraction 100", "fraction"
            )
        choices = []
        for index, (answer, label) in enumerate(zip(pair, ("True", "False"), strict=True), 1):
            key = f"answer[{index}]"
            self.text_of(answer, key, "moodle", group="answers", skip=("feedback",))
            feedback = self.optional_text(answer.find("feedback"), f"{key}/feedback", "answers")
            choices.append(
                Choice(Text(label, "plain"), correct=right[index - 1], feedback=feedback)
            )
        return tuple(choices)

    def subquestion(self, sub: ET.Element, index: int) -> Choice:
        key = f"subquestion[{index}]"
        text = self.text_of(sub, key, self.stem_format, group="answers", skip=("answer",))
        answer = sub.find("answer")
        match = ""
        if answer is not None:
            match = self.text_of(answer, f"{key}/answer", "plain", group="answers").text
        return Choice(text, match=match)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


# --- Writing ---------------------------------------------------------------------------------

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
    """The question text; a GIFT answer set inside the sentence becomes a ``_____`` blank."""
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
    right = [c for c in item.choices if c.correct or (c.weight is not None and c.weight > 0)]
    return "true" if len(right) == 1 and right[0].correct else "false"


def _render(item: Item, tags: tuple[str, ...]) -> str:
    if item.raw is not None:
        return item.raw if tags == item.tags else _retag(item.raw, tags)
    inner = _INDENT + "  "
    lines = [f'<question type="{_attribute(item.type)}">']
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
    if item.type not in MODELLED:
        return f"{item.type} questions have no Moodle XML form here"
    if item.type == "truefalse" and len(item.choices) != 2:
        return "a truefalse question without its True and False answers"
    texts = [item.stem.text, item.title or "", item.ident or "", item.category or "", *item.tags]
    for text in (item.general_feedback, item.tail):
        texts.append(text.text if text is not None else "")
    for choice in item.choices:
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
            out.append(_category(item.category))
            category = item.category
        tags = item.tags
        if annotations and index in annotations:
            prefix = f"{ANNOTATION_PREFIX}:"
            kept = tuple(t for t in tags if not t.startswith(prefix))
            tags = kept + tuple(prefix + pair for pair in annotation_pairs(annotations[index]))
        out.append("  " + _render(item, tags))
    out.append("</quiz>")
    return "\n".join(out) + "\n"
