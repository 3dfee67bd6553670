"""Quiz file formats: detection, validation with located problems, truth files, real corpora."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from quiztui.errors import QuizFormatError
from quiztui.formats import FORMATS, load_quiz, load_truth
from quiztui.formats import csv as csv_format

ROOT = Path(__file__).resolve().parents[1]
MALFORMED = Path(__file__).resolve().parent / "malformed"
SAMPLES = ROOT / "sample_quizzes"
SHARED_DATA = ROOT.parent / "shared" / "data"
EXPECTED: dict[str, str] = json.loads((MALFORMED / "EXPECTED.json").read_text())


def _malformed_files() -> list[str]:
    return sorted(
        p.name
        for p in MALFORMED.iterdir()
        if p.name != "EXPECTED.json" and not p.name.endswith(".truth.json")
    )


def _shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- malformed files: one located, single-line message each -------------------------------


def test_every_malformed_file_has_an_expectation() -> None:
    assert sorted(EXPECTED) == _malformed_files()
    assert len(EXPECTED) >= 18


@pytest.mark.parametrize("name", _malformed_files())
def test_malformed_file_is_reported_with_location(name: str) -> None:
    path = MALFORMED / name
    truth = path.with_name(path.stem + ".truth.json")
    with pytest.raises(QuizFormatError) as info:
        load_quiz(path)
    message = str(info.value)
    assert message.startswith(str(truth) if truth.exists() else str(path))
    assert EXPECTED[name] in message
    assert "\n" not in message
    assert all("\n" not in line for line in info.value.all_lines())


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(QuizFormatError, match="file not found") as info:
        load_quiz(path)
    assert str(info.value).startswith(str(path))


def test_directory_with_quiz_extension(tmp_path: Path) -> None:
    path = tmp_path / "quiz.json"
    path.mkdir()
    with pytest.raises(QuizFormatError, match="is a directory"):
        load_quiz(path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_permission_denied(tmp_path: Path) -> None:
    path = _write(tmp_path, "quiz.json", "[]")
    path.chmod(0)
    try:
        with pytest.raises(QuizFormatError, match="permission denied"):
            load_quiz(path)
    finally:
        path.chmod(0o600)


def test_read_errors_become_one_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "quiz.json", "[]")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(QuizFormatError) as info:
        load_quiz(path)
    assert str(info.value) == f"{path}: permission denied"


def test_unknown_format_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "quiz.json", "[]")
    with pytest.raises(QuizFormatError, match="unknown quiz format 'gift2'"):
        load_quiz(path, fmt="gift2")


def test_every_problem_in_a_file_is_reported(tmp_path: Path) -> None:
    lines = [
        '{"question": "", "responses": ["a", "b"], "correct": "a"}',
        '{"question": "Fine?", "responses": ["yes", "no"], "correct": "yes"}',
        '{"question": "Dup?", "responses": ["x", "", "y"], "correct": "z"}',
        "{not json",
        '{"question": "One?", "responses": ["only"], "correct": "only"}',
    ]
    path = _write(tmp_path, "many.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(QuizFormatError) as info:
        load_quiz(path)
    found = info.value.all_lines()
    assert [p.line for p in info.value.problems] == [1, 3, 3, 4, 5]
    assert "field 'question': question text is empty" in found[0]
    assert "field 'responses': option 2 is empty" in found[1]
    assert "field 'correct': key 'z' is not among the options" in found[2]
    assert "line 4 col 2: invalid JSON" in found[3]
    assert "has 1 option" in found[4]
    assert str(info.value).endswith("(and 4 more problems)")


def test_array_problems_name_item_and_line() -> None:
    with pytest.raises(QuizFormatError) as info:
        load_quiz(MALFORMED / "key_not_in_options.json")
    (problem,) = info.value.problems
    assert (problem.item, problem.line, problem.field) == (2, 3, "correct")


def test_forcing_the_wrong_format_is_an_error_not_a_crash() -> None:
    with pytest.raises(QuizFormatError, match="field 'results'"):
        load_quiz(SAMPLES / "planted_errors.json", fmt="opentdb")
    with pytest.raises(QuizFormatError, match="line 1: field 'question': missing column"):
        load_quiz(SAMPLES / "quizaic_generated.jsonl", fmt="csv")


# --- the sample quizzes ---------------------------------------------------------------------


def test_opentdb_sample() -> None:
    quiz = load_quiz(SAMPLES / "opentdb_sample.json")
    assert (quiz.format, quiz.title, len(quiz.questions)) == ("opentdb", "opentdb_sample", 50)
    kinds = Counter(q.kind for q in quiz.questions)
    assert kinds == {"multiple": 42, "boolean": 8}
    assert [q.id for q in quiz.questions] == [f"q{i}" for i in range(1, 51)]
    assert [q.source_line for q in quiz.questions] == list(range(1, 51))
    assert quiz.truth == {}


def test_opentdb_html_entities_are_decoded() -> None:
    quiz = load_quiz(SAMPLES / "opentdb_sample.json")
    texts = [q.text for q in quiz.questions]
    texts += [o for q in quiz.questions for o in q.options]
    texts += [q.category or "" for q in quiz.questions]
    assert not [t for t in texts if any(e in t for e in ("&quot;", "&#039;", "&amp;", "&eacute;"))]
    assert "Who is the leader of Team Mystic in Pokémon Go?" in texts
    assert any(q.category == "Science & Nature" for q in quiz.questions)
    dire = next(q for q in quiz.questions if q.text.startswith("What year did Dire Straits's"))
    assert dire.text == 'What year did Dire Straits\'s Song "Money for Nothing" release?'


def test_opentdb_boolean_is_true_false_in_fixed_order() -> None:
    raw = json.loads((SAMPLES / "opentdb_sample.json").read_text())["results"]
    quiz = load_quiz(SAMPLES / "opentdb_sample.json")
    for item, question in zip(raw, quiz.questions, strict=True):
        if item["type"] == "boolean":
            assert question.options == ("True", "False")
            assert question.kind == "boolean"
            assert question.key_text == item["correct_answer"]


def test_opentdb_multiple_choice_is_shuffled_deterministically() -> None:
    first = load_quiz(SAMPLES / "opentdb_sample.json")
    second = load_quiz(SAMPLES / "opentdb_sample.json")
    assert first == second
    multiple = [q for q in first.questions if q.kind == "multiple"]
    assert len({q.key for q in multiple}) == 4  # the key is not always the first option
    raw = json.loads((SAMPLES / "opentdb_sample.json").read_text())["results"]
    by_text = {q.text: q for q in multiple}
    item = raw[1]  # "In the Beatrix Potter books, what type of animal is Tommy Brock?"
    question = by_text[item["question"]]
    assert question.key_text == item["correct_answer"] == "Badger"
    assert sorted(question.options) == sorted([item["correct_answer"], *item["incorrect_answers"]])


def test_quizaic_generated_sample() -> None:
    quiz = load_quiz(SAMPLES / "quizaic_generated.jsonl")
    assert (quiz.format, len(quiz.questions)) == ("quizaic", 30)
    assert all(q.n == 4 for q in quiz.questions)
    first = quiz.questions[0]
    assert (first.text, first.key_text, first.source_line) == (
        "What is the largest planet in our solar system?",
        "Jupiter",
        1,
    )
    # Quizaic keeps the file's option order.
    assert first.options == ("Jupiter", "Saturn", "Earth", "Mars")


def test_planted_errors_with_truth_file() -> None:
    quiz = load_quiz(SAMPLES / "planted_errors.json")
    assert (quiz.format, quiz.title, len(quiz.questions)) == ("quizaic", "planted_errors", 12)
    assert set(quiz.truth) == {q.id for q in quiz.questions}
    wrong = [q.id for q in quiz.questions if quiz.truth[q.id] != q.key]
    assert wrong == ["q1", "q4", "q8", "q10"]
    australia = quiz.question("q1")
    assert australia.key_text == "Sydney"
    assert australia.options[quiz.truth["q1"]] == "Canberra"
    assert australia.category == "Geography" and australia.source_line == 2


def test_truth_file_can_be_skipped_or_loaded_explicitly() -> None:
    quiz = load_quiz(SAMPLES / "planted_errors.json", with_truth=False)
    assert quiz.truth == {}
    with_truth = load_truth(quiz, SAMPLES / "planted_errors.truth.json")
    assert with_truth.truth == load_quiz(SAMPLES / "planted_errors.json").truth
    assert quiz.truth == {}  # the original is unchanged


def test_truth_matches_loosely_and_other_quizzes_have_no_truth(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "q.json",
        '[{"question": "Capital of Peru?", "responses": ["Lima", "Cusco"], "correct": "Cusco"}]',
    )
    _write(
        tmp_path,
        "q.truth.json",
        '{"answers": [{"question": "capital  of peru?", "correct": " LIMA"}]}',
    )
    assert load_quiz(path).truth == {"q1": 0}


# --- CSV --------------------------------------------------------------------------------------


def test_csv_with_optional_columns_and_multiline_cell(tmp_path: Path) -> None:
    text = (
        "Question,Correct,Distractor1,Distractor2,Distractor3,Category,Difficulty,Notes\n"
        "What is the capital of France?,Paris,Lyon,Nice,,Geography,easy,ignored\n"
        '"A question\nover two lines?",Yes,No,,,,,\n'
        "\n"
        "Is water wet?,True,False,,,Science,,\n"
    )
    quiz = load_quiz(_write(tmp_path, "quiz.csv", text))
    assert quiz.format == "csv"
    france, two_lines, boolean = quiz.questions
    assert sorted(france.options) == ["Lyon", "Nice", "Paris"] and france.key_text == "Paris"
    assert (france.category, france.difficulty, france.source_line) == ("Geography", "easy", 2)
    assert two_lines.source_line == 3 and two_lines.text == "A question\nover two lines?"
    assert boolean.source_line == 6 and boolean.options == ("True", "False")
    assert boolean.kind == "boolean" and boolean.key == 0


def test_csv_line_numbers_follow_physical_lines(tmp_path: Path) -> None:
    text = 'question,correct,distractor1,distractor2\n"Two\nlines",a,b,c\nBad one,,y,z\n'
    with pytest.raises(QuizFormatError, match="line 4: field 'correct': option 1 is empty"):
        load_quiz(_write(tmp_path, "quiz.csv", text))


def test_csv_semicolon_delimiter_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffquestion;correct;wrong1\nDeux plus deux ?;quatre;cinq\n".encode())
    (question,) = load_quiz(path).questions
    assert question.key_text == "quatre"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("question,correct,distractor1\nQ; really?,yes,no\n", ","),
        ("question;correct;wrong1\nDeux plus deux ?;quatre;cinq\n", ";"),
        ("question\tcorrect\tdistractor1\nQ, really?\tyes\tno\n", "\t"),
        # The header's comma is inside a column name: the rows say semicolon.
        ("question;correct;wrong1;notes, misc\nDeux ?;deux;trois;a, b\nUn ?;un;zéro;c\n", ";"),
        # The sniffer cannot decide on one column: the header decides, else comma.
        ("question\n", ","),
        ("", ","),
    ],
)
def test_csv_delimiter_is_sniffed(text: str, expected: str) -> None:
    assert csv_format.delimiter(text) == expected


def test_csv_semicolon_file_with_a_comma_in_the_header(tmp_path: Path) -> None:
    text = "question;correct;wrong1;notes, misc\nDeux plus deux ?;quatre;cinq;a, b\nUn ?;un;zéro;\n"
    first, _ = load_quiz(_write(tmp_path, "quiz.csv", text)).questions
    assert (first.text, first.key_text) == ("Deux plus deux ?", "quatre")


# --- detection and small conveniences ---------------------------------------------------------


def test_detection_by_content(tmp_path: Path) -> None:
    item = {"question": "2 + 2?", "responses": ["3", "4"], "correct": "4"}
    one_per_line = _write(tmp_path, "lines.json", f"{json.dumps(item)}\n{json.dumps(item)}\n")
    pretty_single = _write(tmp_path, "single.json", json.dumps(item, indent=2))
    as_text = _write(tmp_path, "array.txt", json.dumps([item, item]))
    opentdb = _write(
        tmp_path,
        "api.json",
        json.dumps(
            {
                "results": [
                    {
                        "type": "boolean",
                        "question": "Q?",
                        "correct_answer": "False",
                        "incorrect_answers": ["True"],
                    }
                ]
            }
        ),
    )
    assert len(load_quiz(one_per_line).questions) == 2
    assert load_quiz(pretty_single).questions[0].key_text == "4"
    assert len(load_quiz(as_text).questions) == 2
    api = load_quiz(opentdb)
    assert (api.format, api.questions[0].key) == ("opentdb", 1)
    assert set(FORMATS) == {"quizaic", "opentdb", "csv", "gift", "aiken", "moodle_xml"}


def test_key_matches_ignoring_case_and_outer_whitespace(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "q.jsonl",
        '{"question": "Who wrote Don Quixote?", "responses": ["William Shakespeare", '
        '" Miguel de Cervantes"], "correct": "Miguel De Cervantes"}\n',
    )
    (question,) = load_quiz(path).questions
    assert question.options[1] == "Miguel de Cervantes" and question.key == 1


# --- real corpora from ../shared (skipped when absent) -----------------------------------------


def test_quizaic_opentrivia_corpus() -> None:
    quiz = load_quiz(_shared("quizaic_corpus", "opentrivia.questions.txt"))
    assert len(quiz.questions) == 1000
    assert sum(q.n for q in quiz.questions) == 4000


def test_opentdb_full_corpus() -> None:
    quiz = load_quiz(_shared("opentdb", "opentdb.json"))
    assert len(quiz.questions) == 5250
    assert Counter(q.kind for q in quiz.questions) == {"multiple": 4467, "boolean": 783}
    assert not any("&quot;" in q.text or "&#039;" in q.text for q in quiz.questions)


def test_gemini_pro_corpus_reports_each_key_not_among_responses() -> None:
    path = _shared("quizaic_corpus", "gemini-pro.questions.txt")
    with pytest.raises(QuizFormatError) as info:
        load_quiz(path)
    problems = info.value.problems
    assert [(p.line, p.field) for p in problems] == [
        (36, "correct"),
        (78, "correct"),
        (333, "correct"),
    ]
    assert "key 'Benz' is not among the options" in str(problems[1])
    assert str(info.value).startswith(f"{path}: line 36: field 'correct'")
