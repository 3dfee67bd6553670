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
import json
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from quiztui.core.bank import Bank, Item, flat, refuse_annotations, why_not_judged
from quiztui.core.quiz import Quiz
from quiztui.core.records import record
from quiztui.core.terminal import csv_row, csv_unquote
from quiztui.errors import QuiztuiError
from quiztui.formats import _dataset
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


def parse(
    text: str,
    path: str,
    title: str,
    *,
    strict: bool = True,
    columns: _dataset.Columns | None = None,
) -> Quiz:
    builder = QuizBuilder(path, NAME)
    if not text.strip():
        builder.problem("file is empty")
        raise builder.error()
    sep = delimiter(text)
    first = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        if not columns and _is_distractor_header(first):
            _read(reader, builder)
        else:
            _read_option_columns(reader, builder, first, columns)
    except csv.Error as exc:
        builder.problem(f"invalid CSV: {exc}", line=reader.line_num)
    return builder.build(title, strict=strict)


def _headerless(first: list[str]) -> bool:
    """True when the first row is a question, not a header: no column name quiztui knows, at
    least a question, two options and an answer, and an answer-like last cell (MMLU's files)."""
    if _is_distractor_header(first) or _dataset.find(first, _dataset.QUESTION_NAMES):
        return False
    last = first[-1].strip() if first else ""
    answer_like = (len(last) == 1 and last.upper() in _LETTERS) or last.isdecimal()
    return len(first) >= 4 and answer_like


def _is_distractor_header(first: list[str]) -> bool:
    """quiztui's own shape: a ``correct`` column and distractor columns."""
    names = [name.strip().casefold() for name in first]
    if any(n.startswith(_DISTRACTOR_PREFIXES) for n in names):
        return True
    option_columns = any(_dataset.option_position(n) is not None for n in names)
    listed = _dataset.find(names, _dataset.LIST_NAMES) is not None
    return "correct" in names and not option_columns and not listed


def _rows(reader: _csv.Reader) -> list[tuple[int, list[str]]]:
    """(physical line the row starts on, cells) of every non-blank row."""
    rows = []
    last = reader.line_num
    for row in reader:
        line, last = last + 1, reader.line_num
        if any(cell.strip() for cell in row):
            rows.append((line, [csv_unquote(cell) for cell in row]))  # our formula marks
    return rows


def _read_option_columns(
    reader: _csv.Reader,
    builder: QuizBuilder,
    first: list[str],
    given: _dataset.Columns | None = None,
) -> None:
    """One column per option (``question,A,B,C,D,answer``, ``option1``..., ``choices`` holding
    a list), with or without a header; the answer a letter, an index or the option's text."""
    question_name = _dataset.find(
        first, _dataset.wanted("question", given, _dataset.QUESTION_NAMES)
    )
    rows = _rows(reader)
    if given:
        present = {_dataset.canonical(n) for n in first}
        for role, wanted in given.items():
            for name in wanted:
                if _dataset.canonical(name) not in present:
                    builder.problem(
                        f"--columns {role}={name}: no such column in the header", line=1, field=name
                    )
        if builder.problems:
            return
    if question_name is None:  # no header: question, the options, the answer last (MMLU)
        if not _headerless(first):
            builder.problem(
                "missing column 'question' in the header (question,A,B,C,D,answer or"
                " question,correct,distractor1,...; a file without a header has the question,"
                " its options and the answer letter on each row)",
                line=1,
                field="question",
            )
            return
        width = len(first)
        columns = _Columns(
            question=0,
            options=list(range(1, width - 1)),
            answer=width - 1,
            names=["question", *(_option_name(i) for i in range(width - 2)), "answer"],
        )
    else:
        names = [name.strip() for name in first]
        found = _columns(names, builder, given)
        if found is None:
            return
        columns = found
        rows = rows[1:]
    answers = [cells[columns.answer].strip() for _, cells in rows if columns.answer < len(cells)]
    listed = columns.choices is not None and not columns.options
    one_based = "0" not in answers and not listed  # a hub's options list: a 0-based index
    letters = _dataset.letter_answers(answers)
    for line, row in rows:
        cells = row + [""] * (len(columns.names) - len(row))
        options, fields = _row_options(cells, columns)
        answer = cells[columns.answer]
        correct = _dataset.resolve_answer(
            answer, options, one_based=one_based, letters=letters, hub_index=listed
        )
        if not answer.strip():
            correct = ""
        category = cells[columns.category] if columns.category is not None else None
        builder.add(
            RawItem(
                text=cells[columns.question],
                options=options,
                correct=correct,
                option_fields=fields,
                line=line,
                question_field=columns.names[columns.question],
                correct_field=columns.names[columns.answer],
                options_field=fields[0] if fields else "options",
                category=category if category and category.strip() else None,
                metadata=tuple(
                    (columns.names[i], cells[i]) for i in columns.metadata if i < len(cells)
                ),
            )
        )


_LETTERS = "ABCDEFGHIJ"


def _option_name(index: int) -> str:
    """A headerless file's option column: A-J, then option11, option12, … (a wide row)."""
    return _LETTERS[index] if index < len(_LETTERS) else f"option{index + 1}"


@record
class _Columns:
    question: int
    options: list[int]
    answer: int
    names: list[str]
    choices: int | None = None  # a column holding the options as one list
    category: int | None = None
    metadata: list[int] = field(default_factory=list)


def _columns(
    names: list[str], builder: QuizBuilder, given: _dataset.Columns | None = None
) -> _Columns | None:
    """Which header column holds what (``given``: the user's ``--columns``); reports what is
    missing."""

    def named(role: str, defaults: tuple[str, ...]) -> str | None:
        return _dataset.find(names, _dataset.wanted(role, given, defaults))

    question = names.index(named("question", _dataset.QUESTION_NAMES) or "")
    answer_name = named("answer", _dataset.ANSWER_NAMES)
    list_name = named("choices", _dataset.LIST_NAMES if not (given or {}).get("options") else ())
    category_name = named("category", _dataset.CATEGORY_NAMES)
    taken = {question}
    answer = names.index(answer_name) if answer_name is not None else None
    choices = names.index(list_name) if list_name is not None else None
    category = names.index(category_name) if category_name is not None else None
    taken |= {i for i in (answer, choices, category) if i is not None}
    positions = [
        (position, i)
        for i, name in enumerate(names)
        if i not in taken and (position := _dataset.option_position(name)) is not None
    ]
    options = [i for _, i in sorted(positions)]
    if given and given.get("options"):
        by_name = {_dataset.canonical(n): i for i, n in reversed(list(enumerate(names)))}
        options = [by_name[_dataset.canonical(n)] for n in given["options"]]
    if answer is None:
        builder.problem(
            "missing answer column in the header (answer, answerKey, correct_answer, correct,"
            " key, label; or name it with --columns answer=NAME)",
            line=1,
            field="answer",
        )
    if not options and choices is None:
        builder.problem(
            "no option columns in the header (A, B, C, D or option1, option2, ...; or a"
            " choices column holding a list)",
            line=1,
            field="options",
        )
    if answer is None or (not options and choices is None):
        return None
    used = taken | set(options)
    return _Columns(
        question=question,
        options=options,
        answer=answer,
        names=names,
        choices=choices,
        category=category,
        metadata=[i for i in range(len(names)) if i not in used and names[i]],
    )


def _row_options(cells: list[str], columns: _Columns) -> tuple[list[str], list[str]]:
    """The row's options in their written order (trailing empty option cells left out)."""
    if columns.choices is not None and not columns.options:
        listed = _dataset.cell_list(cells[columns.choices])
        name = columns.names[columns.choices]
        if listed is None:
            return [cells[columns.choices]], [name]
        return listed, [name] * len(listed)
    pairs = [(cells[i], columns.names[i]) for i in columns.options]
    while pairs and not pairs[-1][0].strip():
        pairs.pop()
    return [p[0] for p in pairs], [p[1] for p in pairs]


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
        row = [csv_unquote(cell) for cell in row]  # the ' quiztui puts before a formula
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
        # Spreadsheet-safe: a cell starting with = + - @ gets a leading ' (read back without).
        writer.writerow(csv_row([text, options[key], *wrong, item.category or "", difficulty]))
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
    header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])
    if not _headerless(header):
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


def splice_item(
    text: str, span: tuple[int, int], item: Item, *, columns: _dataset.Columns | None = None
) -> str:
    """The edited row in the file's own columns (``columns``: the ``--columns`` it was read
    with); other cells (an id, notes) are kept."""
    delimiter, newline = _dialect(text)
    header_row = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header = [name.strip().casefold() for name in header_row]
    row = next(csv.reader(io.StringIO(text[span[0] : span[1]], newline=""), delimiter=delimiter))
    row += [""] * (len(header) - len(row))
    question, options, key = flat(item)
    if columns or not _is_distractor_header(header_row):
        row = _option_row(text, row, header_row, delimiter, question, options, key, columns)
        out = io.StringIO(newline="")
        csv.writer(out, delimiter=delimiter, lineterminator=newline).writerow(csv_row(row))
        return out.getvalue()[: -len(newline)]
    at = {name: i for i, name in reversed(list(enumerate(header)))}
    distractors = [i for i, name in enumerate(header) if name.startswith(_DISTRACTOR_PREFIXES)]
    wrong = [o for i, o in enumerate(options) if i != key]
    if len(wrong) > len(distractors):
        raise QuiztuiError(
            f"the CSV has {len(distractors)} distractor columns; the edited question has"
            f" {len(wrong)} wrong options"
        )
    row[at["question"]] = question
    row[at["correct"]] = options[key]
    for index, column in enumerate(distractors):
        row[column] = wrong[index] if index < len(wrong) else ""
    out = io.StringIO(newline="")
    csv.writer(out, delimiter=delimiter, lineterminator=newline).writerow(csv_row(row))
    return out.getvalue()[: -len(newline)]


def _option_row(
    text: str,
    row: list[str],
    header_row: list[str],
    delimiter: str,
    question: str,
    options: tuple[str, ...],
    key: int,
    given: _dataset.Columns | None = None,
) -> list[str]:
    """An edited row of a one-column-per-option CSV: the options in their columns, the answer
    written the way the file writes answers (a letter, an index or the option's text)."""
    names = [name.strip() for name in header_row]
    question_names = _dataset.wanted("question", given, _dataset.QUESTION_NAMES)
    if _dataset.find(names, question_names) is None:  # no header
        width = len(names)
        columns: _Columns | None = _Columns(0, list(range(1, width - 1)), width - 1, names)
    else:
        columns = _columns(names, QuizBuilder("", NAME), given)
    if columns is None:
        raise QuiztuiError("cannot tell which CSV column holds what, to write the edit into")
    row = row + [""] * (len(names) - len(row))
    row[columns.question] = question
    if columns.choices is not None and not columns.options:
        row[columns.choices] = json.dumps(list(options), ensure_ascii=False)
    else:
        if len(options) > len(columns.options):
            raise QuiztuiError(
                f"the CSV has {len(columns.options)} option columns; the edited question has"
                f" {len(options)} options"
            )
        for index, column in enumerate(columns.options):
            row[column] = options[index] if index < len(options) else ""
    old = row[columns.answer].strip()
    if len(old) == 1 and old.upper() in _LETTERS:
        letter = _LETTERS[key]
        row[columns.answer] = letter if old.isupper() else letter.lower()
    elif old.isdecimal():
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        answers = [r[columns.answer].strip() for r in reader if columns.answer < len(r)]
        row[columns.answer] = str(key if "0" in answers else key + 1)
    else:
        row[columns.answer] = options[key]
    return row
