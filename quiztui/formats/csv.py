"""CSV with a header row: ``question,correct,distractor1,distractor2,...``.

Distractor columns are those whose header starts with "distractor", "incorrect" or "wrong"
(any number; empty cells are ignored). Optional "category" and "difficulty" columns are read by
name; other columns (an id, notes) are ignored. Options are the correct answer plus the
distractors in a deterministic order seeded by the question text. Problems name the physical
line the row starts on.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING

from quiztui.core.bank import Bank, Item, flat, refuse_annotations, why_not_judged
from quiztui.core.quiz import Quiz
from quiztui.errors import QuiztuiError
from quiztui.formats._validate import QuizBuilder, RawItem

if TYPE_CHECKING:
    import _csv

NAME = "csv"
_DISTRACTOR_PREFIXES = ("distractor", "incorrect", "wrong")
_DELIMITERS = ",;\t"
_SNIFF_CHARS = 4096


def delimiter(text: str) -> str:
    """Comma, semicolon or tab: what ``csv.Sniffer`` makes of the first lines, if the header row
    has it; else the first of the three the header has; else comma.

    The sample is small on purpose: the sniffer's quote heuristic is quadratic in its length.
    """
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]  # whole lines only
    header = text.split("\n", 1)[0]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:  # the sniffer could not decide
        sniffed = ""
    if sniffed and sniffed in header:
        return sniffed
    return next((d for d in _DELIMITERS if d in header), ",")


def parse(text: str, path: str, title: str, *, strict: bool = True) -> Quiz:
    builder = QuizBuilder(path, NAME)
    if not text.strip():
        builder.problem("file is empty")
        raise builder.error()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter(text))
    try:
        _read(reader, builder)
    except csv.Error as exc:
        builder.problem(f"invalid CSV: {exc}", line=reader.line_num)
    return builder.build(title, strict=strict)


def _read(reader: _csv.Reader, builder: QuizBuilder) -> None:
    header = [name.strip().casefold() for name in next(reader)]
    columns: dict[str, int] = {}
    for index, name in enumerate(header):
        if name and name in columns:
            builder.problem(f"column {name!r} appears twice in the header", line=1, field=name)
        columns.setdefault(name, index)
    for required in ("question", "correct"):
        if required not in columns:
            builder.problem(f"missing column {required!r} in the header", line=1, field=required)
    distractors = [i for i, name in enumerate(header) if name.startswith(_DISTRACTOR_PREFIXES)]
    if not distractors:
        builder.problem(
            "no distractor columns in the header (expected distractor1, distractor2, ...)",
            line=1,
            field="distractor1",
        )
    if builder.problems:
        return
    last_line = reader.line_num
    for row in reader:
        line, last_line = last_line + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        cells = row + [""] * (len(header) - len(row))
        for extra in range(len(header), len(row)):
            if cells[extra].strip():
                builder.problem(
                    "cell beyond the last header column", line=line, field=f"column {extra + 1}"
                )
        options = [cells[columns["correct"]]]
        fields = ["correct"]
        for index in distractors:
            if cells[index].strip():
                options.append(cells[index])
                fields.append(header[index])
        builder.add(
            RawItem(
                text=cells[columns["question"]],
                options=options,
                correct=cells[columns["correct"]],
                option_fields=fields,
                line=line,
                options_field=header[distractors[0]],
                category=_cell(cells, columns, "category"),
                difficulty=_cell(cells, columns, "difficulty"),
                shuffle=True,
            )
        )


def _cell(cells: list[str], columns: dict[str, int], name: str) -> str | None:
    index = columns.get(name)
    return cells[index] if index is not None and cells[index].strip() else None


# --- writing ------------------------------------------------------------------------------------


def unsupported(item: Item) -> str | None:
    reason = why_not_judged(item)
    return None if reason is None else f"{reason} (CSV holds one-key multiple choice)"


def write_bank(bank: Bank, annotations: Mapping[int, Mapping[str, str]] | None = None) -> str:
    refuse_annotations(NAME, annotations)
    rows = [flat(item) for item in bank.items]
    width = max((len(options) - 1 for _, options, _ in rows), default=1)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "question",
            "correct",
            *(f"distractor{i + 1}" for i in range(width)),
            "category",
            "difficulty",
        ]
    )
    for item, (text, options, key) in zip(bank.items, rows, strict=True):
        wrong = [o for i, o in enumerate(options) if i != key]
        wrong += [""] * (width - len(wrong))
        difficulty = item.extra_value("difficulty") or ""
        writer.writerow([text, options[key], *wrong, item.category or "", difficulty])
    return out.getvalue()


def _dialect(text: str) -> tuple[str, str]:
    first_line = text.split("\n", 1)[0]
    return delimiter(text), "\r\n" if first_line.endswith("\r") else "\n"


def item_spans(text: str) -> list[tuple[int, int]]:
    """Each non-blank data row's characters (a quoted cell may span lines), without its newline."""
    delimiter, _ = _dialect(text)
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    next(reader, None)
    spans: list[tuple[int, int]] = []
    last = reader.line_num
    for row in reader:
        first, last = last, reader.line_num  # physical lines first+1 .. last (1-based)
        if not any(cell.strip() for cell in row):
            continue
        start = starts[first]
        end = starts[last] - 1 if last < len(starts) else len(text)
        while end > start and text[end - 1] in "\r\n":
            end -= 1
        spans.append((start, end))
    return spans


def splice_item(text: str, span: tuple[int, int], item: Item) -> str:
    """The edited row in the file's own columns; other cells (an id, notes) are kept."""
    delimiter, newline = _dialect(text)
    header_row = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header = [name.strip().casefold() for name in header_row]
    row = next(csv.reader(io.StringIO(text[span[0] : span[1]], newline=""), delimiter=delimiter))
    row += [""] * (len(header) - len(row))
    question, options, key = flat(item)
    columns = {name: i for i, name in reversed(list(enumerate(header)))}
    distractors = [i for i, name in enumerate(header) if name.startswith(_DISTRACTOR_PREFIXES)]
    wrong = [o for i, o in enumerate(options) if i != key]
    if len(wrong) > len(distractors):
        raise QuiztuiError(
            f"the CSV has {len(distractors)} distractor columns; the edited question has"
            f" {len(wrong)} wrong options"
        )
    row[columns["question"]] = question
    row[columns["correct"]] = options[key]
    for index, column in enumerate(distractors):
        row[column] = wrong[index] if index < len(wrong) else ""
    out = io.StringIO(newline="")
    csv.writer(out, delimiter=delimiter, lineterminator=newline).writerow(row)
    return out.getvalue()[: -len(newline)]
