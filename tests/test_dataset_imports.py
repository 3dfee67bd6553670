"""Spreadsheets and dataset exports as people have them: one column per option (MMLU's
``question,A,B,C,D,answer``, with or without a header), a ``choices`` list column, ``;`` and
tab delimiters, Windows-1252 files, and JSON Lines with ``choices``/``answer`` and variants.
Option order is kept as written; extra columns stay with the question as metadata."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.cli._quiz import quiz_columns
from quiztui.config import load_config
from quiztui.errors import QuizFormatError
from quiztui.formats import load_quiz
from quiztui.formats.bank_io import load_bank

MMLU = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mmlu_val"
MMLU_ALL = MMLU / "mmlu_val_all.csv"


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_mmlu_shape_with_header_keeps_order_subject_and_extra_columns(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "biology.csv",
        "id,subject,question,A,B,C,D,answer,notes\n"
        "b-1,biology,Which organelle makes ATP?,Nucleus,Mitochondrion,Ribosome,Golgi,B,\n"
        'b-2,biology,"Which is a base, not a sugar?",Ribose,Deoxyribose,Adenine,Glucose,C,'
        "check wording\n",
    )
    quiz = load_quiz(path)
    first, second = quiz.questions
    assert first.options == ("Nucleus", "Mitochondrion", "Ribosome", "Golgi") and first.key == 1
    assert second.text == "Which is a base, not a sugar?" and second.key == 2
    assert first.category == "biology"
    assert first.metadata == (("id", "b-1"),)
    assert second.metadata == (("id", "b-2"), ("notes", "check wording"))
    bank = load_bank(path)
    assert bank.items[1].metadata == second.metadata and bank.items[1].span is not None


def test_mmlu_rows_without_header(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "astronomy_val.csv",
        "What is the closest star to Earth?,Proxima Centauri,The Sun,Sirius,Vega,B\n"
        "Which planet has the most moons?,Earth,Mars,Saturn,Venus,C\n",
    )
    quiz = load_quiz(path)
    assert [q.key for q in quiz.questions] == [1, 2]
    assert quiz.questions[0].options == ("Proxima Centauri", "The Sun", "Sirius", "Vega")


def test_semicolon_cp1252_file_loads_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a French spreadsheet saves "CSV (séparateur: point-virgule)": ';' and Windows-1252.
    path = _write(
        tmp_path / "histoire.csv",
        "question;A;B;C;D;réponse;answer\r\n"
        "Qui a écrit « Les Misérables » ?;Zola;Hugo;Balzac;Flaubert;;B\r\n"
        "L’année de la prise de la Bastille ?;1789;1815;1848;1871;;A\r\n",
        encoding="cp1252",
    )
    quiz = load_quiz(path)
    assert quiz.questions[0].text == "Qui a écrit « Les Misérables » ?"
    assert quiz.questions[1].text.startswith("L’année") and quiz.questions[1].key == 0
    assert len(quiz.notes) == 1 and "read as Windows-1252" in quiz.notes[0]
    assert main(["lint", str(path), "--fail-on", "never"]) == 0
    assert "quiztui: warning: " in capsys.readouterr().err


def test_tab_separated_index_and_text_answers(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "capitals.tsv.csv",
        "Question\tOption 1\tOption 2\tOption 3\tCorrect Answer\n"
        "Capital of Spain?\tMadrid\tLisbon\tRome\t1\n"
        "Capital of Peru?\tQuito\tLima\tBogotá\tLima\n",
    )
    quiz = load_quiz(path)
    assert [q.key for q in quiz.questions] == [0, 1]  # '1' is the first option: 1-based


def test_choices_column_holding_a_list_and_zero_based_index(tmp_path: Path) -> None:
    # As a dataset hub's CSV export writes a list column: JSON or a Python literal.
    path = _write(
        tmp_path / "hub.csv",
        "question,choices,answer\n"
        "\"2 + 2 = ?\",\"['3', '4', '5']\",1\n"
        '"Colour of the sky?","[""green"", ""blue""]",1\n'
        '"First letter?","[""a"", ""b""]",0\n',
    )
    quiz = load_quiz(path)
    assert quiz.questions[0].options == ("3", "4", "5") and quiz.questions[0].key == 1
    assert quiz.questions[1].options == ("green", "blue") and quiz.questions[1].key == 1
    assert quiz.questions[2].key == 0


def test_crlf_and_quoted_multiline_cells(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "multi.csv",
        'question,A,B,answer\r\n"Read this:\r\nWhich word is a verb?",run,blue,A\r\n'
        "Second?,x,y,B\r\n",
    )
    quiz = load_quiz(path)
    assert quiz.questions[0].text.splitlines() == ["Read this:", "Which word is a verb?"]
    assert [q.source_line for q in quiz.questions] == [2, 4]


def test_bad_answer_names_the_row_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.csv", "question,A,B,C,D,answer\nQ?,a,b,c,d,E\n")
    with pytest.raises(QuizFormatError, match="line 2: field 'answer': key 'E' is not among"):
        load_quiz(path)
    path = _write(tmp_path / "cols.csv", "question,A,B\nQ?,a,b\n")
    with pytest.raises(QuizFormatError, match="missing answer column"):
        load_quiz(path)


def test_json_lines_dataset_variants(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "hub.jsonl",
        '{"question": "2+2?", "choices": ["3", "4", "5"], "answer": 1, "subject": "math",'
        ' "id": "m-1"}\n'
        '{"question": "Capital of France?", "options": ["Lyon", "Paris"], "answerKey": "B"}\n'
        '{"question": {"stem": "Which is a mammal?", "choices": [{"text": "Shark", "label": "1"},'
        ' {"text": "Whale", "label": "2"}]}, "answerKey": "2"}\n'
        '{"question": "Sky?", "choices": {"text": ["green", "blue"], "label": ["A", "B"]},'
        ' "answerKey": "B"}\n'
        '{"question": "Largest planet?", "options": ["Mars", "Jupiter"], "correct_answer":'
        ' "Jupiter"}\n'
        '{"question": "Bad?", "choices": ["a", "b"], "label": 5}\n',
    )
    with pytest.raises(QuizFormatError, match="line 6: field 'label': key '5'"):
        load_quiz(path)
    quiz = load_quiz(path, strict=False)
    assert [q.key for q in quiz.questions] == [1, 1, 1, 1, 1]
    assert quiz.questions[0].options == ("3", "4", "5")
    assert quiz.questions[0].category == "math" and quiz.questions[0].metadata == (("id", "m-1"),)
    assert quiz.questions[2].options == ("Shark", "Whale")
    assert len(quiz.skipped) == 1


def test_mmlu_validation_sample_loads_in_order() -> None:
    if not MMLU_ALL.exists():
        pytest.skip(f"absent: {MMLU_ALL}")
    with MMLU_ALL.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    header, data = rows[0], rows[1:]
    quiz = load_quiz(MMLU_ALL)
    assert len(quiz.questions) == len(data)
    column = {name: i for i, name in enumerate(header)}
    for question, row in list(zip(quiz.questions, data, strict=True))[:5]:
        assert question.options == tuple(row[column[c]] for c in "ABCD")
        assert question.key == "ABCD".index(row[column["answer"]])
        assert question.category == row[column["subject"]]


def test_detail_view_shows_the_extra_columns(tmp_path: Path) -> None:
    from quiztui.tui.screens.detail import summary_text
    from quiztui.tui.state import QuestionRecord

    path = _write(
        tmp_path / "bio.csv",
        "id,subject,question,A,B,answer,notes\nb-7,biology,Which is a cell?,Neuron,Rock,A,easy\n",
    )
    question = load_quiz(path).questions[0]
    shown = summary_text(QuestionRecord(1, question), 1).plain
    assert "biology" in shown and "id: b-7" in shown and "notes: easy" in shown


def test_columns_name_what_quiztui_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path / "unit3.csv",
        "Nr;Frage;Antwort1;Antwort2;Antwort3;Lösung;Einheit\n"
        "1;Which word is a noun?;run;table;quickly;2;Unit 3\n"
        "2;Which word is a verb?;swim;blue;slowly;1;Unit 3\n",
    )
    with pytest.raises(QuizFormatError, match="missing column 'question'"):
        load_quiz(path)
    columns = {
        "question": ("Frage",),
        "answer": ("Lösung",),
        "options": ("Antwort1", "Antwort2", "Antwort3"),
    }
    quiz = load_quiz(path, columns={**columns, "category": ("Einheit",)})
    assert [(q.options, q.key, q.category) for q in quiz.questions] == [
        (("run", "table", "quickly"), 1, "Unit 3"),
        (("swim", "blue", "slowly"), 0, "Unit 3"),
    ]
    assert quiz.questions[0].metadata == (("Nr", "1"),)
    spec = "question=Frage,answer=Lösung,options=Antwort1+Antwort2+Antwort3,category=Einheit"
    assert main(["lint", str(path), "--columns", spec, "--fail-on", "never"]) == 0
    out = tmp_path / "unit3.gift"
    assert main(["convert", str(path), str(out), "--columns", spec]) == 0
    assert "$CATEGORY: Unit 3" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", str(path), "--columns", "stem=Frage"]) == 2
    assert "--columns: 'stem=Frage' is not ROLE=NAME" in capsys.readouterr().err
    assert main(["lint", str(path), "--columns", "question=Prompt"]) == 2
    assert "--columns question=Prompt: no such column" in capsys.readouterr().err


def test_columns_for_json_lines_fields(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "export.jsonl",
        '{"q": "2+2?", "alts": ["3", "4"], "gold_idx": 1}\n'
        '{"q": "3+3?", "alts": ["6", "7"], "gold_idx": 0}\n',
    )
    columns = {"question": ("q",), "choices": ("alts",), "answer": ("gold_idx",)}
    quiz = load_quiz(path, columns=columns)
    assert [(q.options, q.key) for q in quiz.questions] == [(("3", "4"), 1), (("6", "7"), 0)]


@pytest.mark.parametrize(
    ("text", "edited_row"),
    [
        (
            "id,question,A,B,C,D,answer\n"
            "q-1,Capital of Spain?,Lisbon,Madrid,Rome,Paris,B\n"
            "q-2,Capital of Peru?,Quito,Lima,Bogotá,Caracas,B\n",
            "q-2,Capital of Peru?,Quito,Cusco,Bogotá,Caracas,A",
        ),
        (
            "Capital of Spain?;Lisbon;Madrid;Rome;Paris;2\r\n"
            "Capital of Peru?;Quito;Lima;Bogotá;Caracas;2\r\n",
            "Capital of Peru?;Quito;Cusco;Bogotá;Caracas;1",
        ),
    ],
)
def test_saving_an_edit_keeps_the_file_shape(tmp_path: Path, text: str, edited_row: str) -> None:
    from dataclasses import replace

    from quiztui.core.bank import apply_edit
    from quiztui.formats.bank_io import save_edits

    path = _write(tmp_path / "capitals.csv", text)
    bank = load_bank(path)
    item = bank.items[1]
    edited = apply_edit(item, "Capital of Peru?", ["Quito", "Cusco", "Bogotá", "Caracas"], 0)
    save_edits(bank, {1: replace(edited, span=item.span)})
    saved = path.read_bytes().decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    assert saved.count(newline) == text.count(newline)  # the file's own line endings
    assert saved.splitlines()[:-1] == text.splitlines()[:-1]
    assert saved.splitlines()[-1] == edited_row


UNIT3 = (
    "Nr;Frage;Antwort1;Antwort2;Antwort3;Lösung;Einheit\n"
    "1;Which word is a noun?;run;table;quickly;2;Unit 3\n"
    "2;Which word is a verb?;swim;blue;slowly;1;Unit 3\n"
)


def test_an_import_table_in_the_config_maps_the_columns_for_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A teacher's spreadsheet export with German headers, mapped once in the config file.
    path = _write(tmp_path / "unit3.csv", UNIT3)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[store]\npath = "{tmp_path / "runs.db"}"\n'
        '[import]\nquestion = "Frage"\nanswer = "Lösung"\n'
        'options = ["Antwort1", "Antwort2", "Antwort3"]\ncategory = "Einheit"\n',
        encoding="utf-8",
    )
    assert main(["lint", str(path), "--config", str(config), "--fail-on", "never"]) == 0
    report = tmp_path / "report.json"
    argv = ["vet", str(path), "--config", str(config), "--no-tui", "--judge", "simulated"]
    assert main([*argv, "--fail-on", "never", "-o", str(report)]) == 0
    body = json.loads(report.read_text(encoding="utf-8"))
    assert [q["options"] for q in body["questions"]] == [
        ["run", "table", "quickly"],
        ["swim", "blue", "slowly"],
    ]
    assert main(["review", str(path), "--config", str(config), "--judge", "simulated"]) == 0
    capsys.readouterr()
    # --columns wins role by role: the rest of the table still applies.
    merged = quiz_columns(load_config(config), "question=Nr")
    assert merged is not None and (merged["question"], merged["answer"]) == (("Nr",), ("Lösung",))
    assert [q.text for q in load_quiz(path, columns=merged).questions] == ["1", "2"]
    # `config show` names the table as it is written, and a variable sets it too.
    assert main(["config", "show", "--config", str(config)]) == 0
    assert '[import]\nquestion = "Frage"' in capsys.readouterr().out


def test_the_import_table_from_environment_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_IMPORT_QUESTION", "Frage")
    monkeypatch.setenv("QUIZTUI_IMPORT_ANSWER", "Lösung")
    monkeypatch.setenv("QUIZTUI_IMPORT_OPTIONS", "Antwort1+Antwort2+Antwort3")
    columns = load_config().import_.columns()
    assert columns == {
        "question": ("Frage",),
        "answer": ("Lösung",),
        "options": ("Antwort1", "Antwort2", "Antwort3"),
    }
    quiz = load_quiz(_write(tmp_path / "unit3.csv", UNIT3), columns=columns)
    assert [q.key for q in quiz.questions] == [1, 0]
