"""Moodle XML: a ``<quiz>`` of ``<question type="...">`` elements, read into a question bank.

Modelled types: multichoice, truefalse, shortanswer, numerical, essay, description, matching,
and cloze (embedded answers), read as a ``multianswer`` item whose blanks are parsed from the
question text as Moodle's qtype_multianswer does (``cloze``) and written back as type="cloze".
Any other type (calculated, ordering, gapselect, ...) keeps its name, its
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

Safety: the document is parsed with defusedxml's parser, so any entity declaration or external
reference is refused by expat itself as it meets it (no pre-scan of the DOCTYPE to slip past), and
nesting deeper than ``MAX_DEPTH`` is refused at the first start tag past it.

This module holds the reader and the format's API. Element positions and line/column mapping
come from ``_xml_scan``; the writer (``render_item``, ``write_bank``, ``unsupported``) lives in
``moodle_xml_writer`` and is re-exported here, as is ``MODELLED``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from xml.parsers import expat

from defusedxml.ElementTree import (
    DefusedXMLParser,
    EntitiesForbidden,
    ExternalReferenceForbidden,
)

from quiztui.core.bank import Bank, Choice, Item, Skipped, Text
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats import cloze
from quiztui.formats._xml_scan import Lines, Located, scan
from quiztui.formats.moodle_xml_writer import _AFTER_ANSWERS, _FORMAT_IN, MODELLED, _is_number

# The writer, re-exported: the format registry calls it through this module.
from quiztui.formats.moodle_xml_writer import render_item as render_item
from quiztui.formats.moodle_xml_writer import unsupported as unsupported
from quiztui.formats.moodle_xml_writer import write_bank as write_bank

NAME = "moodle_xml"
EXTENSIONS = (".xml",)

_TRIM = " \t\n\r"  # what PHP's trim() removes (Moodle trims every text it reads)
_PROLOG = re.compile(
    r"\A\ufeff?\s*(?:<\?.*?\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>\s*)*<quiz[\s/>]",
    re.DOTALL,
)


def sniff(text: str) -> bool:
    """True when the document's root element is ``<quiz>``."""
    return _PROLOG.match(text) is not None


# --- Reading ---------------------------------------------------------------------------------


def parse_bank(text: str, path: str, title: str, *, strict: bool = True) -> Bank:
    """Every question of a Moodle XML file, or a QuizFormatError listing every problem.

    With ``strict=False`` a ``<question>`` with a problem is a ``Skipped`` and the rest load (a
    document that is not well-formed XML still fails whole); the error is raised only when no
    question reads well."""
    lines = Lines(text)
    parser = _SafeParser()
    try:
        parser.feed(text.encode("utf-8", "surrogatepass"))
        root = parser.close()
    except (EntitiesForbidden, ExternalReferenceForbidden, _TooDeep) as exc:
        line, byte_column = parser.position()
        column = lines.byte_column(line, byte_column)
        if isinstance(
            exc, EntitiesForbidden
        ):  # expat stops at the declaration's end: name its start
            start = lines.starts[line - 1] if line <= len(lines.starts) else 0
            found = text.rfind("<!ENTITY", start, start + column)
            column = column if found < 0 else found - start + 1
        problem = QuizProblem(path, _refusal(exc), line=line, column=column)
        raise QuizFormatError(path, [problem]) from None
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
    if reader.problems and (strict or not items):
        raise QuizFormatError(path, reader.problems)
    return Bank(
        items,
        format=NAME,
        title=title,
        source_path=path,
        source_text=text,
        skipped=tuple(reader.skipped),
        categories=reader.categories,
    )


# A Moodle question nests about six elements deep (quiz/question/answer/feedback/text); HTML in a
# text is character data. Far deeper nesting is not a question file, and refusing it early keeps a
# hostile 1,000,000-deep document from costing more than its first few hundred start tags.
MAX_DEPTH = 256


class _TooDeep(Exception):
    pass


class _SafeParser(DefusedXMLParser):  # type: ignore[misc]
    """defusedxml's parser (no entity declarations or external references, whatever the DOCTYPE
    looks like: expat itself reports them) that also refuses nesting deeper than ``MAX_DEPTH``."""

    def __init__(self) -> None:
        super().__init__(target=ET.TreeBuilder(), encoding="utf-8", forbid_dtd=False)
        self.depth = 0

    def _start(self, tag: str, attr_list: list[str]) -> ET.Element:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep
        return super()._start(tag, attr_list)  # type: ignore[no-any-return]

    def _end(self, tag: str) -> ET.Element:
        self.depth -= 1
        return super()._end(tag)  # type: ignore[no-any-return]

    def position(self) -> tuple[int, int]:
        """expat's line and byte column where the parse stopped."""
        return self.parser.CurrentLineNumber, self.parser.CurrentColumnNumber


def _refusal(exc: Exception) -> str:
    if isinstance(exc, _TooDeep):
        return f"elements nested deeper than {MAX_DEPTH} levels: not a Moodle question file"
    if isinstance(exc, ExternalReferenceForbidden):
        return "the document refers to an external entity; Moodle XML never needs one"
    return (
        "the DOCTYPE declares an XML entity (<!ENTITY ...>); Moodle XML never needs one and "
        "entity declarations are refused (they can expand without bound)"
    )


def _strip(value: str | None) -> str:
    return (value or "").strip(_TRIM)


def _format(name: str | None, default: str) -> str:
    if name is None:
        return default
    return _FORMAT_IN.get(name.strip(), "html")


class _Reader:
    """One parse: the located elements, the problems found and the extras of the item in hand."""

    def __init__(self, path: str, text: str, lines: Lines, root: ET.Element) -> None:
        self.path = path
        self.text = text
        self.lines = lines
        self.problems: list[QuizProblem] = []
        self.skipped: list[Skipped] = []
        self.where: dict[int, Located] = {}
        located = scan(text)
        elements = list(root.iter())
        if located is not None and len(located) == len(elements):
            if all(_local(e.tag) == _local(p.name) for e, p in zip(elements, located, strict=True)):
                self.where = {id(e): p for e, p in zip(elements, located, strict=True)}
        self.root = root
        self.categories: dict[str, str] = {}  # path -> the category question's source
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
                    if category is not None and any(c.tag != "category" for c in element):
                        self.categories.setdefault(category, self.source(element))
            else:
                before = len(self.problems)
                item = self.item(element, kind, category)
                if len(self.problems) == before:
                    yield item
                    continue
                found = self.problems[before:]
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                self.skipped.append(
                    Skipped(str(found[0]) + more, found[0].line, item.title, item.span)
                )

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
        order = ("questiontext", "generalfeedback", "top", "answers", "after")
        if kind == "cloze":
            extra = tuple(pair for group in order for pair in self.extras.get(group, []))
            return self.cloze(replace(base, extra=extra), question_text)
        choices = self.choices(element, kind, answers)
        extra = tuple(pair for group in order for pair in self.extras.get(group, []))
        return replace(base, choices=choices, extra=extra)

    def cloze(self, base: Item, question_text: ET.Element | None) -> Item:
        """Embedded answers: the blanks of the question text, read as Moodle's
        qtype_multianswer_extract_question reads them (see ``cloze``)."""
        try:
            stem, subs = cloze.split(base.stem.text)
        except cloze.ClozeError as exc:
            where = question_text if question_text is not None else self.root
            self.problem(where, exc.message, "questiontext")
            return replace(base, type="multianswer")
        if not subs:
            where = question_text if question_text is not None else self.root
            self.problem(where, "a cloze question without an embedded answer", "questiontext")
        return replace(
            base, type="multianswer", stem=replace(base.stem, text=stem), subquestions=subs
        )

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
        default = self.stem_format if kind in ("multichoice", "multichoiceset") else "plain"
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
        if kind == "multichoiceset":  # its importer: right is any fraction above 0
            correct = weight is not None and weight > 0
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
