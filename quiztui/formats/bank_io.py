"""Question banks in and out of every format: load, write, convert, and save edits in place.

The authoring formats (GIFT, Aiken, Moodle XML) read straight into a ``Bank``; the flat formats
(Quizaic, Open Trivia DB, CSV) read into a ``Quiz`` whose questions become bank items, each
with the span of the object or row it came from. Saving an edited question replaces only that
span, so every other byte of the file is kept; a copy of the old file is left beside it.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from quiztui.core.bank import Bank, Item, Skipped, question_item
from quiztui.errors import QuizFormatError, QuiztuiError
from quiztui.formats import (
    BANK_FORMATS,
    FORMATS,
    detect_format,
    format_module,
    load_quiz,
    quiz_title,
)
from quiztui.formats._source import legacy_encode, read_text

WRITE_FORMATS = ("quizaic", "opentdb", "csv", "gift", "aiken", "moodle_xml")
BACKUP_SUFFIX = ".bak"
# Extensions that name one output format (.json is Quizaic unless --to opentdb).
OUTPUT_EXTENSIONS = {
    ".json": "quizaic",
    ".jsonl": "quizaic",
    ".csv": "csv",
    ".gift": "gift",
    ".aiken": "aiken",
    ".xml": "moodle_xml",
}


def _detect(path: Path, text: str, shown: str) -> str:
    """The file's format; an unknown extension points at the flag ``convert`` (the one caller
    naming a format) has: ``--from``."""
    from quiztui.formats import unknown_format

    try:
        return detect_format(path, text, shown)
    except QuizFormatError:
        raise unknown_format(
            shown, path.suffix.lower(), "name the format with --from FORMAT"
        ) from None


def load_bank(
    path: str | Path,
    fmt: str | None = None,
    *,
    strict: bool = True,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> Bank:
    """Every item of a quiz file, with the file's text and each item's span in it.

    ``strict=False`` keeps the items that read well and lists the others in ``Bank.skipped``;
    their text stays in ``source_text``, so a save (which rewrites only edited spans) keeps it."""
    shown = str(path)
    path = Path(path)
    notes: list[str] = []
    text = read_text(path, shown, notes)
    detected = fmt or _detect(path, text, shown)
    if detected in BANK_FORMATS:
        bank: Bank = format_module(detected).parse_bank(
            text, shown, quiz_title(path), strict=strict
        )
        return replace(bank, notes=tuple(notes))
    quiz = load_quiz(path, None if detected == "json" else detected, strict=strict, columns=columns)
    name = quiz.format or detected
    spans = format_module(name).item_spans(text)
    aligned = len(spans) == len(quiz.questions)
    by_line = {} if aligned else _spans_by_line(text, spans)
    items = []
    for index, question in enumerate(quiz.questions):
        item = question_item(question)
        if aligned:
            item = replace(item, span=spans[index])
        elif question.source_line in by_line:  # items were skipped: find the row by its line
            item = replace(item, span=by_line[question.source_line])
        items.append(item)
    return Bank(
        items=tuple(items),
        format=name,
        title=quiz.title,
        source_path=shown,
        source_text=text,
        truth=dict(quiz.truth),
        skipped=tuple(Skipped(line) for line in quiz.skipped),
        notes=quiz.notes,
        columns={role: tuple(names) for role, names in columns.items()} if columns else None,
    )


def _spans_by_line(text: str, spans: Sequence[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Each span by the line it starts on, counting newlines once through the text (counting
    from the top for each span was quadratic: 8.7 s for a 25,000-question file)."""
    out: dict[int, tuple[int, int]] = {}
    line, at = 1, 0
    for start, end in sorted(spans):
        line += text.count("\n", at, start)
        at = start
        out[line] = (start, end)
    return out


def output_format(path: str | Path, to: str | None) -> str:
    if to is not None:
        if to not in WRITE_FORMATS:
            raise QuiztuiError(f"unknown output format {to!r} (known: {', '.join(WRITE_FORMATS)})")
        return to
    suffix = Path(path).suffix.lower()
    name = Path(path).name.lower()
    if name.endswith(".gift.txt"):
        return "gift"
    if name.endswith(".aiken.txt"):
        return "aiken"
    if suffix not in OUTPUT_EXTENSIONS:
        raise QuiztuiError(
            f"{path}: cannot tell the output format from {suffix or 'no extension'!r};"
            f" name it with --to ({', '.join(WRITE_FORMATS)})"
        )
    return OUTPUT_EXTENSIONS[suffix]


def unsupported_items(bank: Bank, fmt: str, *, gift_cloze: bool = False) -> list[tuple[int, str]]:
    """(index, reason) of every item format ``fmt`` cannot hold; ``gift_cloze``: GIFT holds
    cloze questions in quiztui's own extension."""
    module = format_module(fmt)
    options = {"cloze_extension": True} if fmt == "gift" and gift_cloze else {}
    out = []
    for index, item in enumerate(bank.items):
        reason = module.unsupported(item, **options)
        if reason is not None:
            out.append((index, reason))
    return out


def write_bank(
    bank: Bank,
    fmt: str,
    annotations: Mapping[int, Mapping[str, str]] | None = None,
    *,
    gift_cloze: bool = False,
) -> str:
    options = {"cloze_extension": True} if fmt == "gift" and gift_cloze else {}
    return format_module(fmt).write_bank(bank, annotations, **options)  # type: ignore[no-any-return]


def edited_text(bank: Bank, edits: Mapping[int, Item]) -> str:
    """The file's text with each edited item (by index) rewritten in place, nothing else."""
    text = bank.source_text
    if text is None:
        raise QuiztuiError("the quiz was not read from a file; nothing to save into")
    if not edits:
        return text
    module = format_module(bank.format)
    pieces: list[str] = []
    pos = 0
    for index in sorted(edits, key=lambda i: _span(bank, i)[0]):
        start, end = _span(bank, index)
        item = edits[index]
        if bank.format in BANK_FORMATS:
            replacement = module.render_item(item)
            if text.split("\n", 1)[0].endswith("\r"):  # the file's own line endings
                replacement = replacement.replace("\r\n", "\n").replace("\n", "\r\n")
        elif bank.columns and bank.format in ("csv", "quizaic"):  # read with --columns
            replacement = module.splice_item(text, (start, end), item, columns=bank.columns)
        else:
            replacement = module.splice_item(text, (start, end), item)
        pieces += [text[pos:start], replacement]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _span(bank: Bank, index: int) -> tuple[int, int]:
    span = bank.items[index].span
    if span is None:
        raise QuiztuiError(
            f"{bank.source_path}: cannot find question {index + 1} in the file to rewrite it"
        )
    return span


def save_edits(bank: Bank, edits: Mapping[int, Item]) -> tuple[Path, Path]:
    """Write the edited file over the original, keeping the old one as ``<file>.bak``.

    Returns (the file, the backup). The new text is written to a temporary file and renamed, so
    a failure leaves the original untouched."""
    if bank.source_path is None:
        raise QuiztuiError("the quiz was not read from a file; nothing to save into")
    path = Path(bank.source_path)
    new_text = edited_text(bank, edits)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    original = path.read_bytes()
    backup.write_bytes(original)
    temporary = path.with_name(f".{path.name}.quiztui-tmp")
    temporary.write_bytes(_encoded_like(new_text, original))
    os.replace(temporary, path)
    return path, backup


def _encoded_like(text: str, original: bytes) -> bytes:
    """``text`` in the original file's encoding: UTF-8 (with its byte order mark if it had
    one), or Windows-1252 for a legacy file read that way, so unedited bytes stay as they were."""
    try:
        original.decode("utf-8-sig")
    except UnicodeDecodeError:
        return legacy_encode(text)
    bom = codecs.BOM_UTF8 if original.startswith(codecs.BOM_UTF8) else b""
    return bom + text.encode("utf-8", "surrogatepass")


def known_input(fmt: str | None) -> str | None:
    if fmt is not None and fmt not in FORMATS:
        raise QuiztuiError(f"unknown input format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    return fmt
