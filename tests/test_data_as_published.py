"""Issue 27 item 2: data read as published. A dataset hub's options list with an integer answer
is an index, always; an answer column named Correct/Answer/Key is found without --columns; an
unknown format's message names what helps on that command; a missing file is "not found"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.errors import QuizFormatError
from quiztui.formats import load_quiz


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_hub_csv_options_list_with_digit_options_reads_the_answer_as_an_index(
    tmp_path: Path,
) -> None:
    # As the hub's CSV export of MMLU writes it: options 1..4, answer 1 is the second option.
    path = _write(
        tmp_path / "hub.csv",
        "question,subject,choices,answer\n"
        "\"How many roots has x^2 = 4 in Z_5?\",math,\"['1', '2', '3', '4']\",1\n"
        '"Pick the second",math,"[""a"", ""b""]",1\n',
    )
    quiz = load_quiz(path)
    assert [q.key for q in quiz.questions] == [1, 1]
    assert quiz.questions[0].options[quiz.questions[0].key] == "2"


def test_a_hub_json_lines_integer_answer_is_an_index_over_digit_options(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "hub.jsonl",
        json.dumps({"question": "1 + 1?", "choices": ["1", "2", "3", "4"], "answer": 1}) + "\n",
    )
    question = load_quiz(path).questions[0]
    assert question.options[question.key] == "2"


@pytest.mark.parametrize("name", ["Correct", "ANSWER", "key", "Correct Answer"])
def test_an_answer_column_named_as_people_name_it_is_found(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / "q.csv", f"Question,A,B,C,D,{name}\nWhat is 2+2?,3,4,5,6,B\n")
    question = load_quiz(path).questions[0]
    assert question.options[question.key] == "4"


def test_a_missing_file_is_not_found_whatever_its_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["lint"], ["vet", "--judge", "simulated"], ["convert"]):
        args = [*command, str(tmp_path / "bio.gfit")]
        if command == ["convert"]:
            args.append(str(tmp_path / "out.gift"))
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "bio.gfit: file not found" in err and "unknown quiz format" not in err


def test_an_unknown_format_names_what_helps_on_that_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "bio.gfit", "::Q:: 2+2? {=4 ~3}\n")
    assert main(["lint", str(path)]) == 2
    err = capsys.readouterr().err
    # lint has no format flag: a known extension, or convert's --from
    assert "unknown quiz format" in err and "quiztui convert FILE --from FORMAT" in err
    assert err.count("\n") == 1
    assert main(["convert", str(path), str(tmp_path / "out.gift")]) == 2
    err = capsys.readouterr().err
    assert "name the format with --from FORMAT" in err and "Traceback" not in err
    with pytest.raises(QuizFormatError, match="unknown quiz format"):
        load_quiz(path)
