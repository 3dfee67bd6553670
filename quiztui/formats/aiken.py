"""Aiken: single-answer multiple choice, one question per block of lines.

    The Moodle project was started by:
    A) Petr Skoda
    B) Martin Dougiamas
    ANSWER: B

Reading follows Moodle's importer (question/format/aiken/format.php): lines are trimmed and lines
shorter than two characters skipped; ``X)`` or ``X.`` (space optional) starts an option and its
text is the rest of the line, trimmed; ``ANSWER:`` ends the question; any other line starts one.
Texts are plain (Moodle escapes them into HTML). Every problem Moodle reports is reported here,
at the line Moodle names: an option or ``ANSWER:`` before any question ("question not started"),
fewer than two options (at the ``ANSWER:`` line), a question still open when the next begins (at
the next question's line). Where Moodle would silently drop or misread a question, it is an error
too: a question open at the end of the file, an ``ANSWER:`` that is not one option letter, option
letters out of order (Moodle numbers options by position, so ``A) C)`` would key the wrong one).

A file with any problem is refused as a whole (``QuizFormatError`` listing every problem with its
line, exit 2), unlike Moodle, which imports the good questions and skips the broken ones: a
vetting tool must not judge a bank with questions silently missing.

Writing keeps the stem, the options and the key; feedback, titles, tags, categories and weights
have no place in Aiken and are dropped. Only single-answer multiple choice can be written (as
Moodle's exporter does): a true/false item is refused rather than turned into a two-option
multiple choice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from quiztui.core.bank import (
    Bank,
    Choice,
    Item,
    Skipped,
    Text,
    multiple_answers,
    refuse_annotations,
)
from quiztui.errors import QuizFormatError, QuizProblem, QuiztuiError

NAME = "aiken"
EXTENSIONS = (".aiken",)

_OPTION = re.compile(r"[A-Z][).]")
_ANSWER = "ANSWER:"
_LINE = re.compile(r"[^\r\n]*")
_MAX_OPTIONS = 26


def sniff(text: str) -> bool:
    """True when some ``ANSWER: X`` line follows option lines such as ``A) ...``."""
    seen_option = False
    for line in text.splitlines():
        line = line.strip()
        if _OPTION.match(line):
            seen_option = True
        elif seen_option and re.match(r"ANSWER:\s*[A-Z]\b", line):
            return True
    return False


@dataclass
class _Open:
    """A question being read: its stem line and the options met so far."""

    stem: str
    line: int
    start: int
    options: list[str] = field(default_factory=list)
    problems: int = 0  # how many problems the file had when this question started


def _lines(text: str) -> list[tuple[int, int]]:
    """[start, end) of every line, without its line break (\\n, \\r\\n or \\r)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos <= len(text):
        match = _LINE.match(text, pos)
        assert match is not None
        end = match.end()
        spans.append((pos, end))
        if end >= len(text):
            break
        pos = end + (2 if text.startswith("\r\n", end) else 1)
    return spans


def parse_bank(text: str, path: str, title: str, *, strict: bool = True) -> Bank:
    """Every question of an Aiken file, or a QuizFormatError listing every problem.

    With ``strict=False`` a question with a problem (and a stray option or ANSWER: line) is a
    ``Skipped`` and the rest load; the error is raised only when no question reads well."""
    problems: list[QuizProblem] = []
    items: list[Item] = []
    skipped: list[Skipped] = []
    current: _Open | None = None

    def problem(message: str, line: int, fld: str | None) -> None:
        problems.append(QuizProblem(path, message, line=line, field=fld))

    def skip(first: int, start: int, end: int) -> None:
        found = problems[first:]
        if found:
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            skipped.append(Skipped(str(found[0]) + more, line=found[0].line, span=(start, end)))

    for number, (start, end) in enumerate(_lines(text), start=1):
        line = text[start:end].strip()
        if len(line) < 2:
            continue
        if _OPTION.match(line):
            if current is None:
                problem(
                    f"option {line[:2]} outside a question: no question line before it",
                    number,
                    None,
                )
                skip(len(problems) - 1, start, end)
                continue
            letter = line[0]
            expected = chr(ord("A") + len(current.options))
            if letter != expected:
                problem(
                    f"option {letter}{line[1]} is out of order (expected {expected}): Aiken "
                    "numbers options by position, so the ANSWER letter would name another one",
                    number,
                    "option",
                )
            current.options.append(line[2:].strip())
        elif line.startswith(_ANSWER):
            if current is None:
                problem("ANSWER: line outside a question: no question line before it", number, None)
                skip(len(problems) - 1, start, end)
                continue
            item = _finish(current, line, number, end, problem)
            if item is not None and len(problems) == current.problems:
                items.append(item)
            else:
                skip(current.problems, current.start, end)
            current = None
        else:
            if current is not None:
                problem(
                    f"the question on line {current.line} has no ANSWER: line before the next "
                    "question starts here",
                    number,
                    "ANSWER",
                )
                skip(current.problems, current.start, start)
            current = _Open(stem=line, line=number, start=start, problems=len(problems))
    if current is not None:
        problem(
            "the question has no ANSWER: line before the end of the file", current.line, "ANSWER"
        )
        skip(current.problems, current.start, len(text))
    if problems and (strict or not items):
        raise QuizFormatError(path, problems)
    return Bank(
        tuple(items),
        format=NAME,
        title=title,
        source_path=path,
        source_text=text,
        skipped=tuple(skipped),
    )


_Report = Callable[[str, int, str | None], None]


def _finish(current: _Open, line: str, number: int, end: int, problem: _Report) -> Item | None:
    count = len(current.options)
    if count < 2:
        problem(f"a question needs at least 2 options (got {count})", number, "ANSWER")
        return None
    letters = f"A-{chr(ord('A') + count - 1)}"
    key = line[len(_ANSWER) :].strip()
    if len(key) != 1 or not "A" <= key <= chr(ord("A") + count - 1):
        shown = key or "nothing"
        problem(
            f"ANSWER must be one capital option letter {letters} (got {shown!r})", number, "ANSWER"
        )
        return None
    right = ord(key) - ord("A")
    choices = tuple(
        Choice(Text(option, "plain"), correct=i == right)
        for i, option in enumerate(current.options)
    )
    return Item(
        type="multichoice",
        stem=Text(current.stem, "plain"),
        choices=choices,
        line=current.line,
        span=(current.start, end),
    )


# --- Writing -----------------------------------------------------------------------------------


def _one_line(text: Text) -> str:
    """The text as one Aiken line: plain text (HTML dropped), line breaks as spaces, trimmed."""
    value = text.text if text.format == "plain" else text.plain()
    if "\n" in value or "\r" in value:
        value = " ".join(value.split())
    return value.strip()


def _key(item: Item) -> int | None:
    """The one right option, or None when there is not exactly one."""
    marked = [i for i, c in enumerate(item.choices) if c.correct]
    if not marked:
        marked = [i for i, c in enumerate(item.choices) if c.weight is not None and c.weight > 0]
    return marked[0] if len(marked) == 1 else None


def unsupported(item: Item) -> str | None:
    """None when the item can be written as Aiken, else why not."""
    if item.type != "multichoice" or multiple_answers(item):
        kind = "tick-all multichoice" if item.type == "multichoice" else item.type
        return f"Aiken holds only single-answer multiple choice (this is {kind})"
    count = len(item.choices)
    if not 2 <= count <= _MAX_OPTIONS:
        return f"Aiken needs 2 to {_MAX_OPTIONS} options (this has {count})"
    key = _key(item)
    if key is None:
        return "Aiken needs exactly one right option"
    if any(c.weight is not None and c.weight > 0 for i, c in enumerate(item.choices) if i != key):
        return "Aiken has no partial credit"
    stem = _one_line(item.stem)
    if len(stem) < 2:
        return "the stem is too short for an Aiken question line (2 characters at least)"
    if _OPTION.match(stem) or stem.startswith(_ANSWER):
        return f"the stem would read back as an option or ANSWER line ({stem[:8]!r}...)"
    return None


def render_item(item: Item) -> str:
    """The stem line, one line per option and the ANSWER line (no trailing line break)."""
    reason = unsupported(item)
    if reason is not None:
        raise QuiztuiError(f"cannot write this question as Aiken: {reason}")
    key = _key(item)
    assert key is not None
    lines = [_one_line(item.stem)]
    for i, choice in enumerate(item.choices):
        lines.append(f"{chr(ord('A') + i)}) {_one_line(choice.text)}".rstrip())
    lines.append(f"{_ANSWER} {chr(ord('A') + key)}")
    return "\n".join(lines)


def write_bank(bank: Bank, annotations: Mapping[int, Mapping[str, str]] | None = None) -> str:
    """The whole bank as an Aiken file; Aiken has no comments, so annotations are refused."""
    refuse_annotations("Aiken", annotations)
    refused = [(i, r) for i, item in enumerate(bank.items) if (r := unsupported(item)) is not None]
    if refused:
        listed = "; ".join(f"q{i + 1}: {reason}" for i, reason in refused[:5])
        more = f" (and {len(refused) - 5} more)" if len(refused) > 5 else ""
        raise QuiztuiError(f"{len(refused)} question(s) cannot be written as Aiken: {listed}{more}")
    return "".join(render_item(item) + "\n\n" for item in bank.items).removesuffix("\n")
