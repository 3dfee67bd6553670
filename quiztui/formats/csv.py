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
from typing import TYPE_CHECKING

from quiztui.core.quiz import Quiz
from quiztui.formats._validate import QuizBuilder, RawItem

if TYPE_CHECKING:
    import _csv

NAME = "csv"
_DISTRACTOR_PREFIXES = ("distractor", "incorrect", "wrong")


def parse(text: str, path: str, title: str) -> Quiz:
    builder = QuizBuilder(path, NAME)
    if not text.strip():
        builder.problem("file is empty")
        raise builder.error()
    first_line = text.split("\n", 1)[0]
    delimiter = next((d for d in ",;\t" if d in first_line), ",")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        _read(reader, builder)
    except csv.Error as exc:
        builder.problem(f"invalid CSV: {exc}", line=reader.line_num)
    return builder.build(title)


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
