"""The question bank: every question of an authoring format, judged or not, with what it needs
to be written back (weights, feedback, categories, tags, ids, text formats, source spans).

A ``Bank`` is what the GIFT, Aiken and Moodle XML readers return and what every writer takes;
``bank_quiz`` turns it into the ``Quiz`` the vet pipeline judges. Items the pipeline cannot judge
(essays, matching, numerical, short answer, several right answers, ...) stay in the bank and come
out of ``bank_quiz`` as ``Unjudged`` rows, so nothing is lost on the way back out.

Conventions every format follows:

- ``Item.type`` is Moodle's type name: ``multichoice``, ``truefalse``, ``shortanswer``,
  ``numerical``, ``matching``, ``essay``, ``description``, ``multianswer`` (embedded answers,
  Cloze: ``subquestions``, one per blank, the stem holding ``{#k}`` where blank k is); a Moodle
  XML type this model does not
  describe (``calculated``, ``ordering``, ``gapselect``, ...) keeps its name and its source text in
  ``Item.raw`` and is written back verbatim by its own format.
- A true/false item has exactly two choices, ``True`` then ``False``; the right one is
  ``correct``; each carries the feedback shown when it is chosen.
- A numerical choice's text is the answer as GIFT writes it: ``1822``, ``3.1415:0.0005`` (value
  and tolerance) or ``3.141..3.142`` (a range).
- A matching choice's text is the sub-question and ``match`` its answer.
- ``weight`` is a percentage (100, 50, -33.33333) or None when the file gave none; ``correct`` is
  what the file marks as right (GIFT ``=``, Aiken ``ANSWER:``, Moodle fraction 100).
- Text is stored decoded (GIFT escapes removed) with its format: ``moodle`` (GIFT's default),
  ``html``, ``markdown`` or ``plain``.
- ``span`` is the item's [start, end) character range in ``Bank.source_text``: a save rewrites
  only the spans of edited items and keeps every other byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field, replace

from quiztui.core.quiz import Question, Quiz, Unjudged, load_report
from quiztui.core.records import record
from quiztui.errors import QuiztuiError

TEXT_FORMATS = ("moodle", "html", "markdown", "plain")


@record(frozen=True)
class Text:
    text: str
    format: str = "moodle"

    def plain(self, *, layout: bool = False) -> str:
        return plain_text(self.text, self.format, layout=layout)


@record(frozen=True)
class Choice:
    text: Text
    correct: bool = False
    weight: float | None = None
    feedback: Text | None = None
    match: str | None = None  # matching: the answer paired with this sub-question


# Moodle's embedded-answer (Cloze) sub-question types, as qtype_multianswer spells them
# (ANSWER_TYPE_DEF_REGEX, case-sensitive), each with the family it is read as.
CLOZE_TYPES: dict[str, str] = {
    **dict.fromkeys(("NUMERICAL", "NM"), "numerical"),
    **dict.fromkeys(
        (
            *("MULTICHOICE", "MC", "MULTICHOICE_V", "MCV", "MULTICHOICE_H", "MCH"),
            *("MULTICHOICE_S", "MCS", "MULTICHOICE_VS", "MCVS", "MULTICHOICE_HS", "MCHS"),
        ),
        "multichoice",
    ),
    **dict.fromkeys(("SHORTANSWER", "SA", "MW", "SHORTANSWER_C", "SAC", "MWC"), "shortanswer"),
    **dict.fromkeys(("REGEXP", "RX", "REGEXP_C", "RXC"), "regexp"),
    **dict.fromkeys(
        (
            *("MULTIRESPONSE", "MR", "MULTIRESPONSE_H", "MRH"),
            *("MULTIRESPONSE_S", "MRS", "MULTIRESPONSE_HS", "MRHS"),
        ),
        "multiresponse",
    ),
}
# Where sub-question k sits in an embedded-answers stem: Moodle's own placeholder, ``{#k}``.
BLANK = re.compile(r"\{#(\d+)\}")


@record(frozen=True)
class SubQuestion:
    """One blank of an embedded-answers (Cloze) item: ``{2:MC:~a~=b}`` is kind ``MC`` (as
    written), mark ``2`` (the grade; "" when left out, which Moodle reads as 1)."""

    kind: str
    choices: tuple[Choice, ...]
    mark: str = ""
    # The blank as read from Moodle XML, written back byte for byte while the blank's content
    # is unchanged (not part of equality: two blanks are the same when their content is).
    raw: str | None = field(default=None, compare=False)

    @property
    def family(self) -> str:
        """multichoice, multiresponse, shortanswer, numerical or regexp."""
        return CLOZE_TYPES[self.kind]


@record(frozen=True)
class Item:
    type: str
    stem: Text
    choices: tuple[Choice, ...] = ()
    title: str | None = None
    ident: str | None = None  # GIFT [id:...], Moodle XML <idnumber>
    tags: tuple[str, ...] = ()
    category: str | None = None
    general_feedback: Text | None = None
    # GIFT: the stem text after an answer block set inside the sentence ("Two plus two {=4} is.")
    tail: Text | None = None
    # Format details carried through a round trip unchanged (Moodle XML <shuffleanswers>, ...).
    extra: tuple[tuple[str, str], ...] = ()
    raw: str | None = None  # source text of a type kept verbatim (see the module docstring)
    # multianswer (embedded answers, Cloze): the blanks, in order; the stem holds ``{#k}``.
    subquestions: tuple[SubQuestion, ...] = ()
    # A spreadsheet's or dataset's other columns (id, notes, ...): shown, not written by formats.
    metadata: tuple[tuple[str, str], ...] = ()
    # GIFT: the author's own ``//`` comment lines just before the question, written back with it
    # (not the [id:]/[tag:] lines, which the writer makes from ident/tags, nor annotations).
    comments: tuple[str, ...] = ()
    line: int | None = None  # 1-based line where the item starts in the source
    span: tuple[int, int] | None = None

    def extra_value(self, name: str) -> str | None:
        return dict(self.extra).get(name)

    def content(self) -> Item:
        """The item without where it came from: what "the same question" compares."""
        return replace(self, line=None, span=None)


@record(frozen=True)
class Skipped:
    """An item a non-strict load left out, and why: ``problem`` is the line the strict load's
    error gives for it (file, line, field, message), ``title`` the item's own title if any.
    Its text stays in ``Bank.source_text``: a save rewrites only edited items' spans."""

    problem: str
    line: int | None = None
    title: str | None = None
    span: tuple[int, int] | None = None

    def __str__(self) -> str:
        return self.problem + (f" (item {self.title!r})" if self.title else "")


@record(frozen=True)
class Bank:
    items: tuple[Item, ...]
    format: str
    title: str
    source_path: str | None = None
    source_text: str | None = None  # the file as read, for saves that keep unedited bytes
    truth: Mapping[str, int] = field(default_factory=dict)
    skipped: tuple[Skipped, ...] = ()  # items a non-strict load left out (see ``Skipped``)
    notes: tuple[str, ...] = ()  # warnings about how the file was read (an encoding guessed)
    # Moodle XML: a category question's own source (with its <info> description and
    # <idnumber>) by category path, written back when that category is written.
    categories: Mapping[str, str] = field(default_factory=dict)
    # Which column or field holds what (``--columns``, ``[import]``) when the file was read with
    # them: an edit is written back into the same columns.
    columns: Mapping[str, tuple[str, ...]] | None = None

    def load_report(self) -> list[str]:
        """Warnings, then ``loaded N of M items (K skipped: …)`` and a line per skipped item."""
        notes = [f"warning: {note}" for note in self.notes]
        return notes + load_report(len(self.items), [str(s) for s in self.skipped])


# --- Annotations written back by ``quiztui convert --annotate`` -------------------------------

ANNOTATION_PREFIX = "quiztui"


# A GIFT comment line above a question that accepts lint findings for it: ``// quiztui: ignore
# L106`` (codes or categories, comma- or space-separated). Not an annotation: it is kept.
_LINT_IGNORE = re.compile(r"^//\s*quiztui\s*:\s*ignore(?:\s+(.*)|\s*)$", re.IGNORECASE)


def lint_ignore_words(comment: str) -> list[str] | None:
    """The rules of a ``// quiztui: ignore ...`` comment line, as written; None for any other."""
    m = _LINT_IGNORE.match(comment.strip())
    if m is None:
        return None
    return (m.group(1) or "").replace(",", " ").split()


def lint_ignore_of(comments: Sequence[str]) -> tuple[str, ...]:
    """Every rule the item's ``// quiztui: ignore`` lines name (checked when the file is read)."""
    words = [w for c in comments for w in (lint_ignore_words(c) or ())]
    return tuple(dict.fromkeys(words))


def annotation_pairs(annotation: Mapping[str, str]) -> list[str]:
    """``{"badge": "poor", "confidence": "0.93"}`` -> ``["badge=poor", "confidence=0.93"]``."""
    return [f"{k}={' '.join(str(v).split())}" for k, v in annotation.items()]


def refuse_annotations(fmt: str, annotations: Mapping[int, Mapping[str, str]] | None) -> None:
    if annotations:
        raise QuiztuiError(
            f"--annotate: {fmt} has nowhere to keep annotations; write GIFT or Moodle XML"
        )


# --- Bank -> Quiz ------------------------------------------------------------------------------


def question_id(index: int) -> str:
    """The quiz id of the bank's ``index``-th item (0-based): q1, q2, ... over every item."""
    return f"q{index + 1}"


def item_index(question_id_: str) -> int:
    """The bank index of a quiz id: ``q3`` and the blanks of an embedded-answers item,
    ``q3.1``, ``q3.2``, are all item 2."""
    return int(question_id_[1:].split(".", 1)[0]) - 1


def blank_number(question_id_: str) -> int | None:
    """``q3.2`` -> 2 (blank 2 of an embedded-answers item); ``q3`` -> None."""
    _, dot, blank = question_id_.partition(".")
    return int(blank) if dot else None


def multiple_answers(item: Item) -> bool:
    """A tick-all-that-apply item: a ``multichoiceset`` (qtype_multichoiceset, all or nothing)
    or a multichoice whose ``<single>`` Moodle reads as false (question/format/xml/format.php,
    ``trans_single``: "false", "0" or empty; the GIFT reader sets it for a block without ``=``,
    as question/format/gift/format.php does)."""
    if item.type == "multichoiceset":
        return True
    single = item.extra_value("single")
    return (
        item.type == "multichoice" and single is not None and single.strip() in ("false", "0", "")
    )


def right_options(item: Item) -> list[int]:
    """The options Moodle scores as right: marked right, else those with a positive weight."""
    return _right_choices(item)


def why_not_judged(item: Item) -> str | None:
    """None when the vet pipeline can judge the item, else the type shown as "not judged (…)".
    A tick-all item (``multiple_answers``) is "multi-answer" here: ``bank_quiz`` judges each of
    its options on its own instead."""
    if multiple_answers(item):
        return "multi-answer"
    if item.type == "truefalse":
        return None if len(item.choices) == 2 else "truefalse without two answers"
    if item.type != "multichoice":
        return item.type
    if len(item.choices) < 2:
        return "fewer than two options"
    right = _right_choices(item)
    if len(right) != 1:
        return "multi-answer" if right else "no key"
    # A repeated option is judged like any other (each choice is its own assertion, the key is
    # the marked choice): lint reports the repeat as L116, as for every other format.
    if any(not c.text.plain().strip() for c in item.choices):
        return "an empty option"
    return None


def _right_choices(item: Item) -> list[int]:
    marked = [i for i, c in enumerate(item.choices) if c.correct]
    positive = [i for i, c in enumerate(item.choices) if c.weight is not None and c.weight > 0]
    if marked and not (multiple_answers(item) and set(marked) < set(positive)):
        return marked
    return positive


def item_question(item: Item, index: int) -> Question:
    """The judged question for a judgeable item (see ``why_not_judged``)."""
    if item.type == "truefalse":
        is_true = item.choices[0].correct
        return Question(
            id=question_id(index),
            text=item.stem.plain(),
            options=("True", "False"),
            key=0 if is_true else 1,
            category=item.category,
            kind="boolean",
            source_line=item.line,
        )
    return Question(
        id=question_id(index),
        text=stem_plain(item) + partial_note(item),
        options=tuple(c.text.plain(layout=True) for c in item.choices),
        key=_right_choices(item)[0],
        category=item.category,
        kind="multiple",
        source_line=item.line,
    )


def partial_note(item: Item) -> str:
    """`` (Option 3 earns partial credit: 50%.)`` for a single-answer item whose other options
    carry a positive weight, so the judge is told they are partly right, not plain distractors;
    "" otherwise."""
    if item.type != "multichoice" or multiple_answers(item):
        return ""
    key = _right_choices(item)[:1]
    partial = [
        f"Option {i + 1} earns partial credit: {_percent(c.weight)}."
        for i, c in enumerate(item.choices)
        if i not in key and c.weight is not None and 0 < c.weight < 100
    ]
    return (" (" + " ".join(partial) + ")") if partial else ""


def _percent(weight: float | None) -> str:
    value = weight or 0.0
    return f"{value:g}%"


def stem_plain(item: Item) -> str:
    stem = item.stem.plain()
    if item.tail is not None and item.tail.text.strip():
        stem = f"{stem} _____ {item.tail.plain()}".strip()
    return stem


def why_blank_not_judged(sub: SubQuestion) -> str | None:
    """None when a blank is judged like a multiple-choice question, else why not: short-answer,
    numerical and regular-expression blanks are "short answer"."""
    family = sub.family
    if family == "multiresponse":
        return "multi-answer"
    if family != "multichoice":
        return "short answer"
    return why_not_judged(Item(type="multichoice", stem=Text(""), choices=sub.choices))


def blank_context(item: Item, number: int) -> str:
    """The stem as plain text with blank ``number`` shown as ``___`` and every other blank
    filled with its first right answer (``___`` when it has none)."""

    def fill(match: re.Match[str]) -> str:
        k = int(match.group(1))
        if k == number or not 1 <= k <= len(item.subquestions):
            return "___"
        sub = item.subquestions[k - 1]
        right = [c for c in sub.choices if c.correct] or [
            c for c in sub.choices if c.weight is not None and c.weight > 0
        ]
        if not right:
            return "___"
        shown = right[0].text.plain()
        return shown.split(":", 1)[0] if sub.family == "numerical" else shown

    return BLANK.sub(fill, item.stem.plain())


def _blank_rows(item: Item, index: int) -> tuple[list[Question], list[Unjudged]]:
    """The judged questions and unjudged rows of an embedded-answers item, one per blank."""
    questions: list[Question] = []
    unjudged: list[Unjudged] = []
    for number, sub in enumerate(item.subquestions, start=1):
        qid = f"{question_id(index)}.{number}"
        text = blank_context(item, number)
        reason = why_blank_not_judged(sub)
        if reason is not None:
            unjudged.append(Unjudged(id=qid, text=text, type=reason, source_line=item.line))
            continue
        choices = Item(type="multichoice", stem=Text(""), choices=sub.choices)
        questions.append(
            Question(
                id=qid,
                text=text,
                options=tuple(c.text.plain() for c in sub.choices),
                key=_right_choices(choices)[0],
                category=item.category,
                kind="multiple",
                source_line=item.line,
            )
        )
    return questions, unjudged


OPTION_STATEMENT = (
    "{stem} (Several answers may be right.) Is this one of the right answers: {option}"
)


def _option_rows(item: Item, index: int) -> tuple[list[Question], list[Unjudged]]:
    """A tick-all item judged option by option: ``q3.k`` is the true/false question "is option
    k one of the right answers", keyed True when Moodle scores option k as right; the item's
    key is the set of its options keyed True."""
    right = set(_right_choices(item))
    stem = stem_plain(item)
    if len(item.choices) < 2 or any(not c.text.plain().strip() for c in item.choices):
        row = Unjudged(id=question_id(index), text=stem, type="multi-answer", source_line=item.line)
        return [], [row]
    questions = [
        Question(
            id=f"{question_id(index)}.{number}",
            text=OPTION_STATEMENT.format(stem=stem, option=choice.text.plain(layout=True)),
            options=("True", "False"),
            key=0 if number - 1 in right else 1,
            category=item.category,
            kind="boolean",
            source_line=item.line,
        )
        for number, choice in enumerate(item.choices, start=1)
    ]
    return questions, []


def bank_quiz(bank: Bank) -> Quiz:
    questions: list[Question] = []
    unjudged: list[Unjudged] = []
    for index, item in enumerate(bank.items):
        ignore = {"lint_ignore": lint_ignore_of(item.comments)} if item.comments else {}
        if item.type == "multianswer" and item.subquestions:
            judged, kept = _blank_rows(item, index)
            questions += [q.model_copy(update=ignore) for q in judged]
            unjudged += [u.model_copy(update=ignore) for u in kept]
            continue
        if multiple_answers(item):
            judged, kept = _option_rows(item, index)
            questions += judged
            unjudged += kept
            continue
        reason = why_not_judged(item)
        if reason is None:
            questions.append(item_question(item, index).model_copy(update=ignore))
        else:
            unjudged.append(
                Unjudged(
                    id=question_id(index),
                    text=stem_plain(item) or (item.title or ""),
                    type=reason,
                    source_line=item.line,
                    **ignore,
                )
            )
    return Quiz(
        title=bank.title,
        questions=tuple(questions),
        unjudged=tuple(unjudged),
        source_path=bank.source_path,
        format=bank.format,
        truth=dict(bank.truth),
        skipped=tuple(str(s) for s in bank.skipped),
        loaded=len(bank.items),
    )


def apply_edit(
    item: Item, text: str, options: Sequence[str], key: int, *, blank: int | None = None
) -> Item:
    """The item after the TUI editor changed its stem, options or key.

    Unchanged texts keep their format and feedback; a changed text is stored in the item's stem
    format (HTML-escaped when that format is html). Choice feedback follows its choice by
    position; the key moves the ``correct`` mark (and a 100 weight, when weights were given).
    For an embedded-answers item, ``blank`` (``blank_number`` of the question id) names the
    blank whose options and key changed; the text shown around it is not the item's to edit.
    """
    if multiple_answers(item) and blank is not None:
        return _edit_option_truth(item, blank, key == 0)
    if item.type == "multianswer":
        if blank is None or not 1 <= blank <= len(item.subquestions):
            raise QuiztuiError("edit one blank of an embedded-answers question at a time")
        sub = item.subquestions[blank - 1]
        alone = Item(type="multichoice", stem=Text(""), choices=sub.choices)
        edited = replace(sub, choices=apply_edit(alone, "", options, key).choices)
        subs = tuple(edited if i == blank - 1 else s for i, s in enumerate(item.subquestions))
        return replace(item, subquestions=subs)
    if item.type == "truefalse":
        is_true = key == 0
        choices = tuple(replace(c, correct=(i == 0) == is_true) for i, c in enumerate(item.choices))
        return replace(item, stem=_edited_text(item.stem, text), choices=choices)
    new_choices: list[Choice] = []
    weighted = any(c.weight is not None for c in item.choices)
    for i, option in enumerate(options):
        old = item.choices[i] if i < len(item.choices) else None
        base = old.text if old is not None else Text("", item.stem.format)
        choice_text = _edited_text(base, option)
        right = i == key
        weight = (100.0 if right else 0.0) if weighted else None
        if old is not None and weighted and not right and old.weight is not None:
            # A negative weight is kept; a partial one while the option's text is unchanged.
            partial = old.weight < 100 and choice_text is old.text
            weight = old.weight if old.weight < 0 or partial else 0.0
        new_choices.append(
            Choice(
                text=choice_text,
                correct=right,
                weight=weight,
                feedback=old.feedback if old is not None else None,
            )
        )
    note = partial_note(item)
    if note and text.endswith(note):  # the note shown to the judge is not the stem's text
        text = text[: -len(note)]
    stem = _edited_text(item.stem, text) if item.tail is None else item.stem
    if item.tail is not None and text != stem_plain(item):
        stem, tail = _edited_text(item.stem, text), None
        return replace(item, stem=stem, tail=tail, choices=tuple(new_choices))
    return replace(item, stem=stem, choices=tuple(new_choices))


def _edit_option_truth(item: Item, number: int, right: bool) -> Item:
    """A tick-all item with option ``number`` (1-based) made right or wrong: the right options
    share 100% (Moodle requires it of a multiple-answer multichoice), wrong ones keep a
    negative weight or get 0."""
    if not 1 <= number <= len(item.choices):
        raise QuiztuiError(f"option {number} is not one of the question's options")
    rights = set(_right_choices(item)) - {number - 1} | ({number - 1} if right else set())
    share = round(100 / len(rights), 5) if rights else 0.0
    choices = []
    for i, c in enumerate(item.choices):
        if i in rights:
            weight = 100.0 if item.type == "multichoiceset" else share
            choices.append(replace(c, correct=weight == 100, weight=weight))
        else:
            weight = c.weight if c.weight is not None and c.weight < 0 else 0.0
            choices.append(replace(c, correct=False, weight=weight))
    return replace(item, choices=tuple(choices))


def _edited_text(old: Text, new_plain: str) -> Text:
    if old.plain() == new_plain or old.plain(layout=True) == new_plain:
        return old
    if old.format == "html":
        import html  # its entity table: loaded for HTML text only

        return Text(html.escape(new_plain, quote=False), "html")
    return Text(new_plain, old.format)


# --- Images ------------------------------------------------------------------------------------

_IMAGE = re.compile(r"<img\b[^>]*>|!\[[^\]\n]*\]\([^)\n]*\)", re.IGNORECASE)
IMAGE_MARK = "[image]"


def _unpictured(text: Text | None) -> Text | None:
    if text is None or text.format == "plain":
        return text
    return replace(text, text=_IMAGE.sub(IMAGE_MARK, text.text))


def _choices_unpictured(choices: tuple[Choice, ...]) -> tuple[Choice, ...]:
    return tuple(
        replace(c, text=_unpictured(c.text) or c.text, feedback=_unpictured(c.feedback))
        for c in choices
    )


def without_images(bank: Bank) -> tuple[Bank, list[int]]:
    """The bank with every image (an HTML ``<img>``, a Markdown ``![..](..)``) replaced by
    ``[image]`` and embedded files (Moodle XML ``<file>``) dropped, for a format that cannot
    carry them; and the indices of the items that had one."""
    items: list[Item] = []
    pictured: list[int] = []
    for index, item in enumerate(bank.items):
        files = [(k, v) for k, v in item.extra if k == "file" or k.endswith("/file")]
        new = replace(
            item,
            stem=_unpictured(item.stem) or item.stem,
            tail=_unpictured(item.tail),
            general_feedback=_unpictured(item.general_feedback),
            choices=_choices_unpictured(item.choices),
            subquestions=tuple(
                replace(sub, choices=_choices_unpictured(sub.choices), raw=None)
                if _choices_unpictured(sub.choices) != sub.choices
                else sub
                for sub in item.subquestions
            ),
            extra=tuple(pair for pair in item.extra if pair not in files),
        )
        if new != item:
            pictured.append(index)
        items.append(new)
    return replace(bank, items=tuple(items)), pictured


# --- Plain text for the judge ------------------------------------------------------------------

_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_BREAK = re.compile(r"<\s*(br|/p|/div|/li)\s*/?>", re.IGNORECASE)
_LINE_BREAK = re.compile(r"<\s*br\s*/?>", re.IGNORECASE)
_PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre\s*>", re.IGNORECASE | re.DOTALL)
_CODE = re.compile(r"<code\b[^>]*>(.*?)</code\s*>", re.IGNORECASE | re.DOTALL)
# How layout that tells options apart is kept in one-line plain text (the judge's prompt and
# lint see one line): a line break as " ↵ ", a code line's indentation as "·" per space, code
# (``<pre>``, ``<code>``) between backticks.
NEWLINE_MARK = " ↵ "
INDENT_MARK = "·"


def _pre_text(match: re.Match[str]) -> str:
    lines = _TAG.sub("", _LINE_BREAK.sub("\n", match.group(1))).strip("\r\n").splitlines()
    kept = [INDENT_MARK * (len(ln) - len(ln.lstrip(" "))) + ln.strip() for ln in lines]
    return " `" + NEWLINE_MARK.join(kept) + "` "


def _code_text(match: re.Match[str]) -> str:
    return "`" + match.group(1) + "`"


def plain_text(text: str, fmt: str = "moodle", *, layout: bool = False) -> str:
    """What a reader sees: HTML tags dropped and entities decoded for html/moodle text. Code
    keeps its layout, between backticks (``<pre>`` line breaks and indentation, see
    ``NEWLINE_MARK``); with ``layout``, a ``<br>`` is a line break too (options: "P<br>R" is
    not "P R")."""
    if fmt in ("html", "moodle"):
        if fmt == "html" or "<" in text:
            text = _PRE.sub(_pre_text, text)
            text = _CODE.sub(_code_text, text)
            if layout:
                text = _LINE_BREAK.sub(NEWLINE_MARK, text)
            text = _BREAK.sub(" ", text)
            text = _TAG.sub("", text)
        import html

        text = html.unescape(text)
    return " ".join(text.split())


def flat(item: Item) -> tuple[str, tuple[str, ...], int]:
    """(stem, options, key) of a judgeable item, as plain text: what the flat formats hold."""
    question = item_question(item, 0)
    return question.text, question.options, question.key


def question_item(question: Question) -> Item:
    """The bank item of a judged question read from a flat format (Quizaic, Open Trivia, CSV)."""
    choices: tuple[Choice, ...]
    if question.kind == "boolean" and question.options == ("True", "False"):
        choices = (
            Choice(Text("True", "plain"), correct=question.key == 0),
            Choice(Text("False", "plain"), correct=question.key == 1),
        )
        kind = "truefalse"
    else:
        choices = tuple(
            Choice(Text(o, "plain"), correct=i == question.key)
            for i, o in enumerate(question.options)
        )
        kind = "multichoice"
    details = [("difficulty", question.difficulty), ("context", question.context)]
    # The lint rules the question accepts travel as GIFT's own ``// quiztui: ignore`` line, which
    # the GIFT writer keeps and the JSON writers read back (``bank_quiz``).
    ignore = " ".join(question.lint_ignore)
    return Item(
        type=kind,
        stem=Text(question.text, "plain"),
        choices=choices,
        category=question.category,
        extra=tuple((k, v) for k, v in details if v),
        metadata=question.metadata,
        line=question.source_line,
        comments=(f"// {ANNOTATION_PREFIX}: ignore {ignore}",) if ignore else (),
    )
