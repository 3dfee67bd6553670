"""Marked-answer files as exports publish them (issue 21 item 3: "any CSV or JSON Lines of
(question, reference answer, candidate answer, human score)").

SemEval-2013-style short-answer exports come as ``answer,correct,question,reference_answer,id``:
``answer`` is the student's answer, ``correct`` its 0/1 mark, and ``id`` the *question's* id,
repeated on every answer. Such a file used to be refused whole ("id '0' appears twice"), and
without ``--columns`` its student answers were read as the references. The rows below are
written here, in that shape; none is copied from the dataset.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.errors import QuizFormatError
from quiztui.formats.answers import load_answers, parse_columns
from quiztui.formats.marked import Scale, load_marked

ROWS = [
    # answer, correct, question, reference_answer, id (of the question)
    (
        "The magnet pulls the iron filings out.",
        "1",
        "How can you separate iron from sand?",
        "Use a magnet to attract the iron.",
        "7",
    ),
    (
        "you shake it",
        "0",
        "How can you separate iron from sand?",
        "Use a magnet to attract the iron.",
        "7",
    ),
    (
        "A magnet attracts iron but not sand",
        "1",
        "How can you separate iron from sand?",
        "Use a magnet to attract the iron.",
        "7",
    ),
    (
        "sand is heavier",
        "0",
        "How can you separate iron from sand?",
        "Use a magnet to attract the iron.",
        "7",
    ),
    (
        "It dissolves in the water.",
        "1",
        "What happens to salt stirred into water?",
        "The salt dissolves.",
        "8",
    ),
    (
        "it sinks to the bottom",
        "0",
        "What happens to salt stirred into water?",
        "The salt dissolves.",
        "8",
    ),
    (
        "The salt dissolves and you can't see it",
        "1",
        "What happens to salt stirred into water?",
        "The salt dissolves.",
        "8",
    ),
    ("it melts", "0", "What happens to salt stirred into water?", "The salt dissolves.", "8"),
]


def write(path: Path, rows: list[tuple[str, ...]] = ROWS) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["answer", "correct", "question", "reference_answer", "id"])
        w.writerows(rows)
    return path


def test_a_semeval_style_export_reads_without_columns(tmp_path: Path) -> None:
    items = load_answers(write(tmp_path / "seb.csv"))
    assert [i.id for i in items] == [f"g{n}" for n in range(1, 9)]  # the repeated id: numbered
    assert items[0].reference == "Use a magnet to attract the iron."
    assert items[0].candidate == "The magnet pulls the iron filings out."
    assert [i.human for i in items] == [float(r[1]) for r in ROWS]


def test_the_export_fits_graders_with_kfold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_DATA_DIR", str(tmp_path / "data"))
    path = write(tmp_path / "seb.csv")
    args = ["grade", "--benchmark", str(path), "--scale", "0-1", "--grader", "lexical"]
    assert main([*args, "--folds", "2", "--format", "json"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 8 and out["k"] == 2


def test_a_mapped_id_column_must_be_unique_and_a_repeat_costs_only_its_row(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "seb.csv")
    columns = parse_columns("id=id")
    with pytest.raises(QuizFormatError) as caught:
        load_answers(path, columns=columns)
    first = str(caught.value.problems[0])
    assert first == f"{path}: line 3: field 'id': id '7' appears twice (first at line 2)"
    skipped: list[str] = []
    items = load_answers(path, strict=False, skipped=skipped, columns=columns)
    assert [i.id for i in items] == ["7", "8"]  # each question's first answer
    assert len(skipped) == 6 and all("appears twice" in s for s in skipped)


def test_folds_follow_the_numbered_ids(tmp_path: Path) -> None:
    path = tmp_path / "seb.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["answer", "correct", "question", "reference_answer", "id", "term"])
        w.writerows(row + (("A", "B")[n % 2],) for n, row in enumerate(ROWS))
    marked = load_marked(path, Scale(0, 1), parse_columns("fold=term"))
    assert [i.id for i in marked.items] == [f"g{n}" for n in range(1, 9)]
    assert marked.folds == {f"g{n + 1}": ("A", "B")[n % 2] for n in range(8)}


def test_a_marked_file_with_bad_rows_loads_the_rest_unless_strict(tmp_path: Path) -> None:
    rows = list(ROWS)
    rows[1] = (*rows[1][:1], "n/a", *rows[1][2:])  # not a number
    rows[5] = (*rows[5][:1], "3", *rows[5][2:])  # outside --scale 0-1
    path = write(tmp_path / "seb.csv", rows)
    with pytest.raises(QuizFormatError):
        load_marked(path, Scale(0, 1))
    skipped: list[str] = []
    marked = load_marked(path, Scale(0, 1), strict=False, skipped=skipped)
    assert len(marked.items) == 6
    assert skipped == [
        f"{path}: line 3: field 'correct': must be a number (got 'n/a')",
        f"{path}: line 7: field 'score': 3 is outside the scale 0-1 (give --scale LO-HI)",
    ]


def test_grade_benchmark_file_skips_bad_rows_and_strict_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_DATA_DIR", str(tmp_path / "data"))
    rows = list(ROWS)
    rows[1] = (*rows[1][:1], "n/a", *rows[1][2:])
    path = write(tmp_path / "seb.csv", rows)
    args = ["grade", "--benchmark", str(path), "--scale", "0-1", "--grader", "lexical"]
    assert main([*args, "--folds", "2", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["n"] == 7
    assert "quiztui: loaded 7 of 8 items" in captured.err
    assert f"{path}: line 3: field 'correct': must be a number (got 'n/a')" in captured.err
    assert main([*args, "--strict"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert f"{path}: line 3: field 'correct'" in captured.err
