"""Moodle embedded answers (Cloze, ``qtype_multianswer``): the blanks inside a question's text.

A blank is ``{N:TYPE:alternatives}`` (Moodle's ANSWER_START_REGEX ``\\{([0-9]*):(TYPE):``;
``N`` is the blank's mark, may be left out, and ``TYPE`` is one of ``CLOZE_TYPES``, upper case
as Moodle requires). Alternatives are separated by ``~`` (a leading ``~`` before the first one is
a separator too, as Moodle's ``~?`` alternative loop reads it); each is an optional fraction,
``=`` (right, 100%) or ``%50%`` (``%-25%``, ``%33,3%``: Moodle's
ANSWER_ALTERNATIVE_FRACTION_REGEX), then the answer, then ``#feedback``. A numerical answer is a
number with an optional ``:tolerance`` (NUMERICAL_ALTERNATIVE_REGEX) or ``*``.

Two dialects share the blank model. Moodle XML ``<question type="cloze">`` follows Moodle's own
reader (question/type/multianswer/questiontype.php, ``qtype_multianswer_extract_question``):
``split`` applies Moodle's ANSWER_REGEX as Moodle writes it, an answer ending at the first ``~``,
``#`` or ``}`` not just after a backslash (nor, for ``#``, after ``&`` or ``&amp;``: an entity),
a feedback at the first ``~`` or ``}`` not just after a backslash; only ``\\}`` and ``\\#`` are
decoded (a backslash before anything else is text: ``C:\\Windows`` stays as written) and a line
break inside a blank is text. ``render(..., dialect="moodle")`` writes what that reader reads
back as the same blank, and each blank keeps its source (``SubQuestion.raw``), written back
byte for byte while its content is unchanged. GIFT has no embedded answers: quiztui's own GIFT
extension reads blanks with GIFT's escapes (a backslash escapes ``\\ ~ # { } = : %``, ``\\n`` is
a newline) through ``sub_question`` and writes them with ``dialect="gift"``.
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


# Moodle's regular expressions (question/type/multianswer/questiontype.php), as Moodle writes
# them; PHP's one lookbehind ``(?<!\\\\|&|&amp;)`` is three here (Python's lookbehinds have one
# width each).
_M_FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"  # ANSWER_ALTERNATIVE_FRACTION_REGEX
_M_ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"  # ANSWER_ALTERNATIVE_ANSWER_REGEX
_M_FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"  # ANSWER_ALTERNATIVE_FEEDBACK_REGEX
_M_ALTERNATIVE = f"({_M_FRACTION})?({_M_ANSWER})(#({_M_FEEDBACK}))?"  # ANSWER_ALTERNATIVE_REGEX
_M_TYPES = "|".join(sorted(CLOZE_TYPES, key=len, reverse=True))  # ANSWER_TYPE_DEF_REGEX
_M_PLAIN_ALTERNATIVE = _M_ALTERNATIVE.replace("(", "(?:").replace("(?:?", "(?")
_M_BLANK = re.compile(  # ANSWER_REGEX
    r"\{([0-9]*):("
    + _M_TYPES
    + r"):("
    + _M_PLAIN_ALTERNATIVE
    + "(?:~"
    + _M_PLAIN_ALTERNATIVE
    + r")*)\}",
    re.DOTALL,
)
_M_EACH = re.compile("~?" + _M_ALTERNATIVE, re.DOTALL)
_M_NUMERICAL = re.compile(rf"({_NUMBER})(:{_NUMBER})?", re.DOTALL)  # NUMERICAL_ALTERNATIVE_REGEX


def split(text: str) -> tuple[str, tuple[SubQuestion, ...]]:
    """(stem with ``{#k}`` placeholders, blanks) of a Moodle cloze question text, read as
    ``qtype_multianswer_extract_question`` reads it: the first blank Moodle's ANSWER_REGEX
    finds becomes ``{#1}``, and so on; ``ClozeError`` for a blank Moodle would refuse."""
    subs: list[SubQuestion] = []
    while (match := _M_BLANK.search(text)) is not None:
        subs.append(_moodle_blank(match, len(subs) + 1))
        text = text[: match.start()] + "{#" + str(len(subs)) + "}" + text[match.end() :]
    return text, tuple(subs)


def _moodle_blank(match: re.Match[str], number: int) -> SubQuestion:
    kind, mark, remaining = match.group(2), match.group(1), match.group(3)
    family = CLOZE_TYPES[kind]
    choices: list[Choice] = []
    while (alt := _M_EACH.search(remaining)) is not None:
        fraction, percent, answer, feedback = alt.group(1), alt.group(2), alt.group(3), alt.group(5)
        correct, weight = fraction == "=", None
        if percent:
            weight = float(percent.replace(",", "."))
            correct = weight == 100
        if not answer.strip():
            raise ClozeError(f"empty answer in embedded answer {number}", match.start())
        if family == "numerical":
            numbers = _M_NUMERICAL.fullmatch(answer)
            if numbers is None and answer.strip() != "*":
                raise ClozeError(
                    f"bad numerical answer {answer!r} in embedded answer {number}: expected a"
                    " number, number:tolerance or *",
                    match.start(),
                )
            text = Text(answer if numbers is not None else answer.strip(), "plain")
        else:
            text = Text(_moodle_decode(answer), _ANSWER_FORMAT)
        shown = _moodle_decode(feedback) if feedback else ""
        choices.append(
            Choice(text, correct, weight, Text(shown, _ANSWER_FORMAT) if shown else None)
        )
        remaining = remaining.split(alt.group(0), 1)[1]
    least = 2 if family in ("multichoice", "multiresponse") else 1
    if len(choices) < least:
        what = "two answers" if least == 2 else "an answer"
        raise ClozeError(f"embedded answer {number} ({kind}) needs at least {what}", match.start())
    return SubQuestion(kind=kind, choices=tuple(choices), mark=mark, raw=match.group(0))


def _moodle_decode(text: str) -> str:
    """Moodle decodes ``\\}`` and ``\\#`` in an answer or feedback, nothing else (entities are
    kept: the text is html, decoded when shown)."""
    return text.replace("\\}", "}").replace("\\#", "#")


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


def render(sub: SubQuestion, dialect: str = "moodle") -> str:
    """``{mark:KIND:alternatives}``: read back as the same blank by Moodle's reader (``split``)
    for ``dialect="moodle"`` (the blank's own source while its content is unchanged), or by
    quiztui's GIFT extension (``sub_question``) for ``dialect="gift"``."""
    if dialect == "moodle" and sub.raw is not None:
        kept = _M_BLANK.fullmatch(sub.raw)
        if kept is not None:
            try:
                if _moodle_blank(kept, 1) == sub:
                    return sub.raw
            except ClozeError:
                pass
    alternatives = []
    for choice in sub.choices:
        if choice.weight is not None:
            prefix = f"%{_number(choice.weight)}%"
        else:
            prefix = "=" if choice.correct else ""
        answer = choice.text.text
        feedback = choice.feedback.text if choice.feedback is not None else ""
        if dialect == "gift":
            written = answer if sub.family == "numerical" else _escape(answer)
            if not prefix and written.startswith(("=", "%")):
                written = "\\" + written
            alternatives.append(prefix + written + ("#" + _escape(feedback) if feedback else ""))
            continue
        written = answer if sub.family == "numerical" else _moodle_escape(answer, ends="&")
        if not prefix and (written.startswith("=") or _FRACTION.match(written)):
            prefix = "%0%"  # else Moodle reads the answer's start as its fraction
        alternatives.append(prefix + written + ("#" + _moodle_escape(feedback) if feedback else ""))
    return "{" + sub.mark + ":" + sub.kind + ":" + "~".join(alternatives) + "}"


def _moodle_escape(text: str, ends: str = "") -> str:
    """An answer or feedback as Moodle's reader reads it back (see ``split``): ``}`` and ``#``
    escaped (a ``#`` just after ``&`` stays: Moodle reads it as an entity's), a ``~`` as an
    entity unless a backslash already keeps it, a final backslash as an entity (it would keep
    the blank open), and, with ``ends="&"`` (an answer), a final ``&`` or ``&amp;`` too (Moodle's
    answer cannot end just after one)."""
    out: list[str] = []
    for c in text:
        done = "".join(out[-5:])
        if c == "}":
            out.append("\\}")
        elif c == "#":
            out.append("#" if done.endswith(("&", "&amp;")) else "\\#")
        elif c == "~":
            out.append("~" if done.endswith("\\") else "&#126;")
        else:
            out.append(c)
    if out and out[-1] in "\\\n":  # a final backslash escapes the end; "\n" is PCRE's "$"
        out[-1] = "&#92;" if out[-1] == "\\" else "&#10;"
    written = "".join(out)
    if ends and written.endswith("&amp;"):
        return written[:-5] + "&#38;"
    if ends and written.endswith("&"):
        return written[:-1] + "&#38;"
    return written


def join(
    stem: str,
    subs: Sequence[SubQuestion],
    escape: Callable[[str], str] | None = None,
    dialect: str = "moodle",
) -> str:
    """The stem with each ``{#k}`` replaced by blank k written out (see ``render``); ``escape``
    escapes the text between blanks for the enclosing format."""

    def outside(part: str) -> str:
        return escape(part) if escape is not None else part

    out: list[str] = []
    pos = 0
    for match in BLANK.finditer(stem):
        k = int(match.group(1))
        if not 1 <= k <= len(subs):
            continue
        out += [outside(stem[pos : match.start()]), render(subs[k - 1], dialect)]
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
