"""Moodle embedded answers (Cloze, ``qtype_multianswer``): the blanks inside a question's text.

A blank is ``{N:TYPE:alternatives}`` (Moodle's ANSWER_START_REGEX ``\\{([0-9]*):(TYPE):``;
``N`` is the blank's mark, may be left out, and ``TYPE`` is one of ``CLOZE_TYPES``, upper case
as Moodle requires). Alternatives are separated by ``~`` (a leading ``~`` before the first one is
a separator too, as Moodle's ``~?`` alternative loop reads it); each is an optional fraction,
``=`` (right, 100%) or ``%50%`` (``%-25%``, ``%33,3%``: Moodle's
ANSWER_ALTERNATIVE_FRACTION_REGEX), then the answer, then ``#feedback``. A numerical answer is a
number with an optional ``:tolerance`` (NUMERICAL_ALTERNATIVE_REGEX) or ``*``.

Both GIFT text and Moodle XML ``<question type="cloze">`` carry blanks the same way, so both
read them here: ``split`` turns a text into the stem (blank k replaced by ``{#k}``, Moodle's own
placeholder) and the ``SubQuestion``s; ``render`` / ``join`` write them back. A backslash
escapes ``\\ ~ # { } = : %`` and ``\\n`` is a newline (GIFT's escapes, a superset of the
``\\}`` and ``\\#`` Moodle's Cloze reader knows); the writer escapes what would be misread.
Checks follow Moodle's qtype_multianswer_validate_question: a multiple-choice blank needs two
answers, any other one answer, and a numerical answer must be a number or ``*``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from quiztui.core.bank import BLANK, CLOZE_TYPES, Choice, SubQuestion, Text

START = re.compile(r"\{([0-9]*):(" + "|".join(sorted(CLOZE_TYPES, key=len, reverse=True)) + r"):")
_FRACTION = re.compile(r"%(-?[0-9]+(?:[.,][0-9]*)?)%")
_NUMBER = r"-?(?:[0-9]+[.,]?[0-9]*|[.,][0-9]+)(?:[eE][-+]?[0-9]+)?"
_NUMERICAL = re.compile(rf"\*|{_NUMBER}(?::{_NUMBER})?")
_ESCAPABLE = "\\~#{}=:%"
# An answer is read as plain text with entities: Moodle stores Cloze answers as HTML.
_ANSWER_FORMAT = "html"


class ClozeError(Exception):
    """A blank that cannot be read; ``offset`` is where in the text."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def closing(text: str, start: int) -> int | None:
    """Index of the first unescaped ``}`` at or after ``start``, or None."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "}":
            return i
        i += 1
    return None


def split(text: str) -> tuple[str, tuple[SubQuestion, ...]]:
    """(stem with ``{#k}`` placeholders, blanks) of a text holding blanks; ``ClozeError``."""
    pieces: list[str] = []
    subs: list[SubQuestion] = []
    pos = 0
    for match in START.finditer(text):
        if match.start() < pos or _escaped(text, match.start()):
            continue
        end = closing(text, match.end())
        if end is None:
            raise ClozeError("embedded answer '{' is never closed by '}'", match.start())
        subs.append(sub_question(match.group(2), match.group(1), text, match.end(), end))
        pieces += [text[pos : match.start()], "{#" + str(len(subs)) + "}"]
        pos = end + 1
    pieces.append(text[pos:])
    return "".join(pieces), tuple(subs)


def _escaped(text: str, index: int) -> bool:
    """True when an odd run of backslashes comes just before ``text[index]``."""
    run = 0
    while index - run - 1 >= 0 and text[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def sub_question(kind: str, mark: str, text: str, start: int, end: int) -> SubQuestion:
    """The blank whose alternatives are ``text[start:end]`` (escapes still in)."""
    family = CLOZE_TYPES[kind]
    alternatives = _alternatives(text, start, end)
    choices = tuple(_choice(family, raw, offset) for raw, offset in alternatives)
    least = 2 if family in ("multichoice", "multiresponse") else 1
    if len(choices) < least:
        what = "two answers" if least == 2 else "an answer"
        raise ClozeError(f"embedded answer {kind} needs at least {what}", start)
    return SubQuestion(kind=kind, choices=choices, mark=mark)


def _alternatives(text: str, start: int, end: int) -> list[tuple[str, int]]:
    """Each ``~``-separated alternative (raw) with its offset; one leading ``~`` is dropped."""
    if text.startswith("~", start):
        start += 1
    out: list[tuple[str, int]] = []
    begin = i = start
    while i < end:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "~":
            out.append((text[begin:i], begin))
            begin = i + 1
        i += 1
    out.append((text[begin:end], begin))
    return out


def _choice(family: str, raw: str, offset: int) -> Choice:
    body = raw.lstrip()
    correct, weight = False, None
    if body.startswith("="):
        correct, body = True, body[1:]
    else:
        fraction = _FRACTION.match(body)
        if fraction is not None:
            weight = float(fraction.group(1).replace(",", "."))
            correct = weight == 100
            body = body[fraction.end() :]
    answer, feedback = _unescape_split(body)
    answer, feedback = answer.strip(), feedback.strip() if feedback is not None else None
    if not answer:
        raise ClozeError("empty answer in an embedded answer", offset)
    if family == "numerical":
        if not _NUMERICAL.fullmatch(answer):
            raise ClozeError(
                f"bad numerical answer {answer!r}: expected a number, number:tolerance or *",
                offset,
            )
        text = Text(answer, "plain")
    else:
        text = Text(answer, _ANSWER_FORMAT)
    return Choice(
        text=text,
        correct=correct,
        weight=weight,
        feedback=Text(feedback, _ANSWER_FORMAT) if feedback else None,
    )


def _unescape_split(body: str) -> tuple[str, str | None]:
    """(answer, feedback or None): split at the first unescaped ``#``, escapes decoded."""
    parts: list[list[str]] = [[]]
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and (body[i + 1] in _ESCAPABLE or body[i + 1] == "n"):
            parts[-1].append("\n" if body[i + 1] == "n" else body[i + 1])
            i += 2
            continue
        if c == "#" and len(parts) == 1:
            parts.append([])
        else:
            parts[-1].append(c)
        i += 1
    answer = "".join(parts[0])
    return answer, "".join(parts[1]) if len(parts) > 1 else None


# --- writing -----------------------------------------------------------------------------------


def render(sub: SubQuestion) -> str:
    """``{mark:KIND:alternatives}``, read back by ``split`` as the same blank."""
    alternatives = []
    for choice in sub.choices:
        if choice.weight is not None:
            prefix = f"%{_number(choice.weight)}%"
        else:
            prefix = "=" if choice.correct else ""
        answer = choice.text.text
        written = answer if sub.family == "numerical" else _escape(answer)
        if not prefix and written.startswith(("=", "%")):
            written = "\\" + written
        feedback = choice.feedback.text if choice.feedback is not None else ""
        alternatives.append(prefix + written + ("#" + _escape(feedback) if feedback else ""))
    return "{" + sub.mark + ":" + sub.kind + ":" + "~".join(alternatives) + "}"


def join(stem: str, subs: Sequence[SubQuestion], escape: Callable[[str], str] | None = None) -> str:
    """The stem with each ``{#k}`` replaced by blank k written out; ``escape`` escapes the text
    between blanks for the enclosing format."""

    def outside(part: str) -> str:
        return escape(part) if escape is not None else part

    out: list[str] = []
    pos = 0
    for match in BLANK.finditer(stem):
        k = int(match.group(1))
        if not 1 <= k <= len(subs):
            continue
        out += [outside(stem[pos : match.start()]), render(subs[k - 1])]
        pos = match.end()
    out.append(outside(stem[pos:]))
    return "".join(out)


def problem(subs: Sequence[SubQuestion], stem: str) -> str | None:
    """Why an embedded-answers item cannot be written (None when it can)."""
    if not subs:
        return "embedded answers without a blank"
    numbers = [int(m.group(1)) for m in BLANK.finditer(stem)]
    if sorted(numbers) != list(range(1, len(subs) + 1)):
        return "embedded answers whose stem does not hold each blank {#k} once"
    for sub in subs:
        if sub.kind not in CLOZE_TYPES or not re.fullmatch(r"[0-9]*", sub.mark):
            return f"embedded answer of unknown type {sub.kind!r}"
        least = 2 if sub.family in ("multichoice", "multiresponse") else 1
        if len(sub.choices) < least or any(not c.text.text.strip() for c in sub.choices):
            return f"embedded answer {sub.kind} with too few or empty answers"
        if sub.family == "numerical" and any(
            not _NUMERICAL.fullmatch(c.text.text) for c in sub.choices
        ):
            return "embedded numerical answer that is not a number, number:tolerance or *"
    return None


def _escape(text: str) -> str:
    out = []
    for c in text:
        if c in "\\~#{}":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        else:
            out.append(c)
    return "".join(out)


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)
