"""Moodle GIFT: the format's API, and the reader that turns a GIFT file into a question bank.

Reading follows Moodle's own importer (``qformat_gift``): questions are separated by blank
lines; ``//`` lines are comments, and the comments just before a question give its
``[id:...]`` and ``[tag:...]``; ``$CATEGORY:`` sets the category of the questions after it;
the type comes from the answer block the way Moodle decides it (``#`` numerical, any ``~``
multiple choice, ``=`` with ``->`` matching, ``T``/``F``/``TRUE``/``FALSE`` true/false, else
short answer; ``{}`` essay; no block a description). Text after the block is the item's tail.

True/false feedback follows Moodle, not the GIFT-grammar-PEG.js project: in
``{TRUE#first#second}`` the first feedback is shown for the wrong answer and the second for
the right one, so each lands on the choice (True or False) that shows it. The True and False
choices and numerical answers (``1822:5``, ``1..5``; ``*`` for the ``~`` "any other answer") are
plain text, as the Moodle XML reader has them.

Text is decoded: escapes ``\\~ \\= \\# \\{ \\} \\: \\\\`` and ``\\n`` (a newline) are removed,
and in ``moodle`` text (GIFT's default) a line break between words becomes a space, as the
PEG.js grammar does; html, markdown and plain text keep their line breaks.

The writer (``render_item``, ``write_bank``, ``unsupported``) lives in ``gift_writer`` and is
re-exported here, so this module stays the whole GIFT API the format registry uses.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from quiztui.core.bank import (
    ANNOTATION_PREFIX,
    TEXT_FORMATS,
    Bank,
    Choice,
    Item,
    Skipped,
    SubQuestion,
    Text,
    lint_ignore_words,
)
from quiztui.core.lint_model import LintSettingsError, check_selectors
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats import cloze
from quiztui.formats.gift_writer import _NUMERICAL

# Re-exported: the format registry calls the writer through this module; tests read _TYPES here.
from quiztui.formats.gift_writer import _TYPES as _TYPES
from quiztui.formats.gift_writer import render_item as render_item
from quiztui.formats.gift_writer import unsupported as unsupported
from quiztui.formats.gift_writer import write_bank as write_bank

NAME = "gift"
EXTENSIONS = (".gift",)

_ESCAPES = {"\\": "\\", ":": ":", "~": "~", "=": "=", "#": "#", "{": "{", "}": "}", "n": "\n"}
_SPACE = " \t\n\r\f\v"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WEIGHT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
# Moodle's patterns: any non-control characters, a "]" escaped as "\]"; tags exclude < and >.
_ID = re.compile(r"\[id:((?:\\\]|[^\]\x00-\x1f\x7f])+)\]")
_TAG = re.compile(r"\[tag:((?:\\\]|[^\]<>\x00-\x1f\x7f])+)\]")
_TF = {"T": True, "TRUE": True, "F": False, "FALSE": False}
_TITLE = re.compile(r"[ \t]*::((?:\\.|[^:\\]|:(?!:))*)::", re.DOTALL)


# The longest question read, in characters (about 15,000 words). The reader decodes a question
# character by character; a hostile multi-megabyte line is refused at once instead of costing
# seconds, and no real question comes near the limit.
MAX_QUESTION_CHARS = 100_000


class _Ch(NamedTuple):
    """One decoded character with its source range; ``escaped`` ones are never syntax."""

    c: str
    start: int
    end: int
    escaped: bool = False

    def is_(self, chars: str) -> bool:
        return not self.escaped and self.c in chars


# --- reading -----------------------------------------------------------------------------------


def parse_bank(text: str, path: str, title: str, *, strict: bool = True) -> Bank:
    """Every question of a GIFT file, or a QuizFormatError listing every problem found.

    With ``strict=False`` the questions that read well are kept and each one that does not is a
    ``Skipped`` (the first problem's words, its title); the error is raised only when no
    question reads well."""
    reader = _Reader(text, path)
    items = reader.read()
    if not items and not reader.problems:
        message = "file is empty" if not text.strip() else "no questions found"
        reader.problems.append(QuizProblem(path, message, line=1, column=1))
    if reader.problems and (strict or not items):
        raise QuizFormatError(path, reader.problems)
    return Bank(
        items=tuple(items),
        format=NAME,
        title=title,
        source_path=path,
        source_text=text,
        skipped=tuple(reader.skipped),
    )


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.problems: list[QuizProblem] = []
        self.category: str | None = None
        self.failed = False
        self.skipped: list[Skipped] = []
        self.line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def problem(self, message: str, offset: int, field: str) -> None:
        line = bisect.bisect_right(self.line_starts, offset)
        column = offset - self.line_starts[line - 1] + 1
        self.problems.append(QuizProblem(self.path, message, line=line, column=column, field=field))
        self.failed = True

    def read(self) -> list[Item]:
        items: list[Item] = []
        block: list[tuple[int, int, int]] = []
        start = 1 if self.text.startswith("\ufeff") else 0
        for match in [*_LINE_BREAK.finditer(self.text, start), None]:
            end = match.start() if match else len(self.text)
            after = match.end() if match else end
            if self.text[start:end].strip(_SPACE):
                block.append((start, end, after))
            elif block:
                items += self._block(block)
                block = []
            start = after
        if block:
            items += self._block(block)
        return items

    def _block(self, lines: list[tuple[int, int, int]]) -> list[Item]:
        """The question of one blank-line separated block (with its category and comments)."""
        comments: list[str] = []
        for index, (start, end, _) in enumerate(lines):
            stripped = self.text[start:end].strip(_SPACE)
            if stripped.startswith("//"):
                comments.append(stripped)
            elif stripped.startswith("$CATEGORY:"):
                self.category = stripped[len("$CATEGORY:") :].strip(_SPACE)
                comments = []
            else:
                self.failed = False
                before = len(self.problems)
                size = lines[-1][1] - start
                if size > MAX_QUESTION_CHARS:
                    message = (
                        f"the question is {size:,} characters long; GIFT questions are read up to "
                        f"{MAX_QUESTION_CHARS:,} characters"
                    )
                    self.problem(message, start, "question")
                    self._skip(lines[index], lines[-1], self.problems[before:])
                    return []
                item = self._question(self._chars(lines[index:]), comments)
                if self.failed or item is None:
                    self._skip(lines[index], lines[-1], self.problems[before:])
                    return []
                return [item]
        return []

    def _skip(
        self, first: tuple[int, int, int], last: tuple[int, int, int], found: list[QuizProblem]
    ) -> None:
        """Note a question that did not read: its first problem, title and source span."""
        start, end = first[0], last[1]
        named = _TITLE.match(self.text, start, end)
        title = " ".join(re.sub(r"\\(.)", r"\1", named.group(1)).split()) if named else None
        problem = found[0] if found else QuizProblem(self.path, "unreadable question")
        more = len(found) - 1
        words = str(problem) + (
            f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        )
        self.skipped.append(Skipped(words, line=problem.line, title=title, span=(start, end)))

    def _chars(self, lines: Sequence[tuple[int, int, int]]) -> list[_Ch]:
        """The question's characters, escapes decoded, comment lines left out."""
        text = self.text
        out: list[_Ch] = []
        for start, end, after in lines:
            if not text[start:end].lstrip(_SPACE).startswith("//"):
                i = start
                if text.find("\\", start, end) < 0:  # no escapes: one character per source char
                    out += map(_Ch, text[start:end], range(start, end), range(start + 1, end + 1))
                    i = end
                while i < end:
                    c = text[i]
                    if c == "\\" and i + 1 < end and text[i + 1] in _ESCAPES:
                        out.append(_Ch(_ESCAPES[text[i + 1]], i, i + 2, True))
                        i += 2
                    else:
                        out.append(_Ch(c, i, i + 1))
                        i += 1
            out.append(_Ch("\n", end, after))
        return out

    def _question(self, chars: list[_Ch], comments: list[str]) -> Item | None:
        chars = _strip(chars)
        start, end = chars[0].start, chars[-1].end
        title: str | None = None
        if _starts(chars, "::"):
            close = _find_seq(chars, "::", 2)
            if close is None:
                self.problem("'::' opens a title that is never closed by '::'", start, "title")
                return None
            title = _join(_strip(chars[2:close]), collapse=True) or None
            chars = _strip(chars[close + 2 :])
        brace = _find(chars, "{}")
        if brace is not None and cloze.START.match(self.text, chars[brace].start):
            return self._cloze(chars, title, comments, start, end)
        if brace is None:
            stem = _rich(chars, "moodle")
            if not stem.text and title is None:
                self.problem("a question needs text or an answer block", start, "stem")
                return None
            return self._item("description", stem, (), None, None, title, comments, start, end)
        if chars[brace].c == "}":
            self.problem("'}' without an opening '{'", chars[brace].start, "answers")
            return None
        close = _find(chars, "{}", brace + 1)
        if close is None or chars[close].c == "{":
            self.problem("'{' is never closed by '}'", chars[brace].start, "answers")
            return None
        stem = _rich(chars[:brace], "moodle")
        tail_chars = _strip(chars[close + 1 :])
        stray = _find(tail_chars, "{}")
        if stray is not None:
            self.problem(
                f"'{tail_chars[stray].c}' after the answer block: one block per question"
                " (separate questions with a blank line)",
                tail_chars[stray].start,
                "answers",
            )
            return None
        tail = _rich(tail_chars, stem.format) if tail_chars else None
        answers = self._answers(chars[brace + 1 : close], stem.format, chars[brace].start)
        if answers is None:
            return None
        kind, choices, feedback = answers
        end = tail_chars[-1].end if tail_chars else chars[close].end
        item = self._item(kind, stem, choices, feedback, tail, title, comments, start, end)
        block = chars[brace + 1 : close]
        general = _find_seq(block, "####")
        if kind == "multichoice" and _find(block[:general], "=") is None:
            # question/format/gift/format.php: "Multiple answers are enabled if no single
            # answer is 100% correct" -- a block without '=' is read with single = 0.
            item = replace(item, extra=(("single", "false"),))
        return item

    def _cloze(
        self, chars: list[_Ch], title: str | None, comments: list[str], start: int, end: int
    ) -> Item | None:
        """A question whose text holds embedded answers (``{1:SA:=word}``): one item, each
        blank a sub-question, the stem holding ``{#k}`` where blank k was (see ``cloze``)."""
        pieces: list[_Ch] = []
        subs: list[SubQuestion] = []
        i = 0
        while (brace := _find(chars, "{}", i)) is not None:
            at = chars[brace].start
            match = cloze.START.match(self.text, at) if chars[brace].c == "{" else None
            if match is None:
                self.problem(
                    f"'{chars[brace].c}' in a question with embedded answers: every '{{' must"
                    " open one such as {1:SA:=word} or {1:MC:~wrong~=right}",
                    at,
                    "answers",
                )
                return None
            close = _find(chars, "{}", brace + 1)
            if close is None or chars[close].c == "{":
                self.problem("'{' is never closed by '}'", at, "answers")
                return None
            kind, mark = match.group(2), match.group(1)
            try:
                sub = cloze.sub_question(kind, mark, self.text, match.end(), chars[close].start)
            except cloze.ClozeError as exc:
                self.problem(exc.message, exc.offset, "answers")
                return None
            subs.append(sub)
            pieces += chars[i:brace] + [_Ch(c, at, at, True) for c in f"{{#{len(subs)}}}"]
            i = close + 1
        pieces += chars[i:]
        item = self._item(
            "multianswer", _rich(pieces, "moodle"), (), None, None, title, comments, start, end
        )
        return replace(item, subquestions=tuple(subs))

    def _item(
        self,
        kind: str,
        stem: Text,
        choices: tuple[Choice, ...],
        feedback: Text | None,
        tail: Text | None,
        title: str | None,
        comments: list[str],
        start: int,
        end: int,
    ) -> Item:
        ident, tags = _ident_and_tags(comments)
        self._check_lint_ignore(comments, start)
        return Item(
            comments=_own_comments(comments),
            type=kind,
            stem=stem,
            choices=choices,
            title=title,
            ident=ident,
            tags=tags,
            category=self.category,
            general_feedback=feedback,
            tail=tail,
            line=bisect.bisect_right(self.line_starts, start),
            span=(start, end),
        )

    def _check_lint_ignore(self, comments: list[str], start: int) -> None:
        """A ``// quiztui: ignore`` line naming an unknown code is a problem of the question."""
        for comment in comments:
            words = lint_ignore_words(comment)
            if words is None:
                continue
            try:
                if not check_selectors(words):
                    raise LintSettingsError("names no lint code or category")
            except LintSettingsError as exc:
                self.problem(f"'// quiztui: ignore': {exc}", start, "lint_ignore")

    def _answers(
        self, chars: list[_Ch], fmt: str, at: int
    ) -> tuple[str, tuple[Choice, ...], Text | None] | None:
        """(type, choices, general feedback) of an answer block's inside, typed as Moodle does."""
        chars = _strip(chars)
        feedback = None
        general = _find_seq(chars, "####")
        if general is not None:
            feedback = _optional(_rich(chars[general + 4 :], fmt))
            chars = _strip(chars[:general])
        if not chars:
            return "essay", (), feedback
        if chars[0].is_("#"):
            return "numerical", self._numerical(chars[1:], fmt, at), feedback
        if _find(chars, "~") is not None:
            return "multichoice", self._choices(chars, fmt, at), feedback
        if _find(chars, "=") is not None and _arrow(chars) is not None:
            return "matching", self._matching(chars, fmt, at), feedback
        parts = _split(chars, "#", 2)
        head = _join(_strip(parts[0]), collapse=True)
        if head in _TF:
            return "truefalse", _true_false(_TF[head], parts, fmt), feedback
        return "shortanswer", self._choices(chars, fmt, at), feedback

    def _choices(self, chars: list[_Ch], fmt: str, at: int) -> tuple[Choice, ...]:
        """Multiple-choice (``=`` right, ``~`` wrong) or short-answer (all right) choices."""
        multiple = _find(chars, "~") is not None
        chunks = _chunks(chars)
        if multiple:
            chunks = _tilde_equals(chunks)
        choices = []
        for marker, body in chunks:
            if marker is None and multiple:
                self.problem(
                    f"unknown answer marker {body[0].c!r}: an answer starts with '=' (right)"
                    " or '~' (wrong)",
                    body[0].start,
                    "answers",
                )
                continue
            where = (marker or body[0]).start  # a chunk without a marker is never blank
            weight, body = self._weight(body)
            parts = _split(body, "#", 1)
            text = _rich(parts[0], fmt)
            if not text.text:
                self.problem("empty answer", where, "answers")
            feedback = _optional(_rich(parts[1], fmt)) if len(parts) > 1 else None
            right = not multiple or (marker is not None and marker.c == "=")
            choices.append(Choice(text=text, correct=right, weight=weight, feedback=feedback))
        if multiple and len(choices) < 2 and not self.failed:
            self.problem("a multiple-choice question needs at least two answers", at, "answers")
        return tuple(choices)

    def _weight(self, body: list[_Ch]) -> tuple[float | None, list[_Ch]]:
        """A leading ``%50%`` of an answer, reported when it is not a percentage."""
        body = _strip(body)
        if not body or not body[0].is_("%"):
            return None, body
        limit = _find(body, "#")
        close = _find(body, "%", 1, len(body) if limit is None else limit)
        if close is None:
            self.problem("weight is not closed by '%' (write it as %50%)", body[0].start, "weight")
            return None, body[1:]
        raw = _join(body[1:close], collapse=False)
        if not _WEIGHT.fullmatch(raw):
            self.problem(
                f"bad weight '%{raw}%': expected a percentage such as %50% or %-33.33333%",
                body[0].start,
                "weight",
            )
            return None, body[close + 1 :]
        value = float(raw)
        if not -100 <= value <= 100:
            self.problem(f"weight '%{raw}%' is outside -100..100", body[0].start, "weight")
        return value, body[close + 1 :]

    def _numerical(self, chars: list[_Ch], fmt: str, at: int) -> tuple[Choice, ...]:
        choices = []
        for marker, body in _chunks(chars):
            weight, body = (None, _strip(body)) if marker is None else self._weight(body)
            parts = _split(body, "#", 1)
            spec_chars = _strip(parts[0])
            spec = _join(spec_chars, collapse=True)
            wrong = marker is not None and marker.c == "~"
            if wrong and not spec:
                spec = "*"
            if not _NUMERICAL.fullmatch(spec):
                shown = f"bad numerical answer {spec!r}" if spec else "missing numerical answer"
                where = spec_chars[0].start if spec_chars else (marker.start if marker else at)
                self.problem(
                    f"{shown}: expected a number, number:tolerance or min..max", where, "answers"
                )
            feedback = _optional(_rich(parts[1], fmt)) if len(parts) > 1 else None
            choices.append(
                Choice(Text(spec, "plain"), correct=not wrong, weight=weight, feedback=feedback)
            )
        if not choices and not self.failed:
            self.problem("a numerical question needs an answer after '#'", at, "answers")
        return tuple(choices)

    def _matching(self, chars: list[_Ch], fmt: str, at: int) -> tuple[Choice, ...]:
        choices = []
        for marker, body in _chunks(chars):
            if marker is None:
                self.problem(
                    f"unknown answer marker {body[0].c!r}: a matching pair starts with '='",
                    body[0].start,
                    "answers",
                )
                continue
            arrow = _arrow(body)
            if arrow is None:
                self.problem(
                    "matching pair without '->' between the question and its answer",
                    marker.start,
                    "answers",
                )
                continue
            match = _join(_strip(body[arrow + 2 :]), collapse=True)
            if not match:
                self.problem("matching pair with nothing after '->'", body[arrow].start, "answers")
            choices.append(Choice(text=_rich(body[:arrow], fmt), match=match))
        if len(choices) < 2 and not self.failed:
            self.problem("a matching question needs at least two pairs", at, "answers")
        return tuple(choices)


def _true_false(is_true: bool, parts: list[list[_Ch]], fmt: str) -> tuple[Choice, ...]:
    """True then False; Moodle shows the first feedback for the wrong answer, the second for the
    right one."""
    wrong, right = (_optional(_rich(parts[i], fmt)) if len(parts) > i else None for i in (1, 2))
    return (
        Choice(Text("True", "plain"), correct=is_true, feedback=right if is_true else wrong),
        Choice(Text("False", "plain"), correct=not is_true, feedback=wrong if is_true else right),
    )


def _own_comments(comments: list[str]) -> tuple[str, ...]:
    """The comment lines kept with the question: all but annotations and lines holding only
    ``[id:...]`` / ``[tag:...]`` (the writer writes those from the item)."""
    kept = []
    for line in comments:
        body = line[2:].strip()
        if body.startswith(ANNOTATION_PREFIX + ":") and lint_ignore_words(line) is None:
            continue
        if body and not _TAG.sub("", _ID.sub("", body)).strip():
            continue
        kept.append(line)
    return tuple(kept)


def _ident_and_tags(comments: list[str]) -> tuple[str | None, tuple[str, ...]]:
    notes = "\n".join(c for c in comments if not c[2:].lstrip().startswith(ANNOTATION_PREFIX + ":"))
    found = _ID.search(notes)
    ident = found.group(1).strip().replace("\\]", "]") if found else None
    tags = tuple(t.strip().replace("\\]", "]") for t in _TAG.findall(notes))
    return ident or None, tuple(t for t in tags if t)


# --- character helpers -------------------------------------------------------------------------


def _strip(chars: list[_Ch]) -> list[_Ch]:
    lo, hi = 0, len(chars)
    while lo < hi and chars[lo].is_(_SPACE):
        lo += 1
    while hi > lo and chars[hi - 1].is_(_SPACE):
        hi -= 1
    return chars[lo:hi]


def _find(chars: list[_Ch], targets: str, lo: int = 0, hi: int | None = None) -> int | None:
    for i in range(lo, len(chars) if hi is None else hi):
        if chars[i].is_(targets):
            return i
    return None


def _starts(chars: list[_Ch], seq: str, at: int = 0) -> bool:
    return len(chars) - at >= len(seq) and all(chars[at + k].is_(c) for k, c in enumerate(seq))


def _find_seq(chars: list[_Ch], seq: str, lo: int = 0) -> int | None:
    for i in range(lo, len(chars) - len(seq) + 1):
        if _starts(chars, seq, i):
            return i
    return None


def _arrow(chars: list[_Ch]) -> int | None:
    return _find_seq(chars, "->")


def _split(chars: list[_Ch], sep: str, times: int) -> list[list[_Ch]]:
    """Split at the first ``times`` unescaped ``sep`` characters."""
    parts: list[list[_Ch]] = [[]]
    for ch in chars:
        if len(parts) <= times and ch.is_(sep):
            parts.append([])
        else:
            parts[-1].append(ch)
    return parts


def _chunks(chars: list[_Ch]) -> list[tuple[_Ch | None, list[_Ch]]]:
    """(marker, text) of each answer: split at every unescaped ``=`` and ``~``; leading text
    before the first marker comes with marker None (Moodle reads it as a right answer)."""
    out: list[tuple[_Ch | None, list[_Ch]]] = []
    marker: _Ch | None = None
    body: list[_Ch] = []
    for ch in [*chars, None]:
        if ch is None or ch.is_("=~"):
            if marker is not None or _strip(body):
                out.append((marker, _strip(body) if marker is None else body))
            marker, body = ch, []
        else:
            body.append(ch)
    return out


def _tilde_equals(chunks: list[tuple[_Ch | None, list[_Ch]]]) -> list[tuple[_Ch | None, list[_Ch]]]:
    """``{~It ~=There}``: a ``~`` with nothing before the ``=`` that follows it is dropped.

    Moodle (qformat_gift::readquestion, multichoice) turns every ``=`` into ``~=`` and splits the
    block at ``~``, so ``~=There`` leaves an empty answer before ``=There``; the multiple-choice
    question type skips blank answers when it saves them, so ``~=`` means ``=``."""
    out = []
    for index, (marker, body) in enumerate(chunks):
        following = chunks[index + 1][0] if index + 1 < len(chunks) else None
        empty_tilde = marker is not None and marker.c == "~" and not _strip(body)
        if empty_tilde and following is not None and following.c == "=":
            continue
        out.append((marker, body))
    return out


def _join(chars: list[_Ch], *, collapse: bool) -> str:
    """The decoded text; with ``collapse`` a run of spaces holding a line break is one space."""
    out: list[str] = []
    run: list[_Ch] = []
    for ch in [*chars, None]:
        if ch is not None and ch.is_(_SPACE):
            run.append(ch)
            continue
        if run:
            broken = collapse and any(r.c in "\n\r" for r in run)
            out.append(" " if broken else "".join(r.c for r in run))
            run = []
        if ch is not None:
            out.append(ch.c)
    return "".join(out)


def _rich(chars: list[_Ch], default: str) -> Text:
    """Text with an optional leading ``[format]`` tag; untagged text takes ``default``."""
    chars = _strip(chars)
    fmt = default
    if chars and chars[0].is_("["):
        close = _find(chars, "]", 1, min(len(chars), 11))
        name = "".join(c.c for c in chars[1:close]) if close is not None else ""
        if close is not None and name in TEXT_FORMATS and not any(c.escaped for c in chars[:close]):
            fmt, chars = name, _strip(chars[close + 1 :])
    return Text(_join(chars, collapse=fmt == "moodle"), fmt)


def _optional(text: Text) -> Text | None:
    return text if text.text else None
