"""Lint compares what a text says (issue 17): signs, digits and logic/maths symbols are content, a
repeated option is a finding rather than a refused file, contractions and example text are not
negatives, a lone <p> is maths, and every code explains its severity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from quiztui.cli import main
from quiztui.core.lint import CODES, lint_quiz, near
from quiztui.core.quiz import Question, Quiz
from quiztui.core.textnorm import alike_words, comparable, is_formula, repeat_key
from quiztui.formats import load_quiz
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

REPEATED = REPO / "tests" / "repeated_options"
OPTION_CODES = {"L102", "L103", "L116"}


def question(options: list[str], key: int = 0, text: str = "Which of these is right?") -> Question:
    return Question(id="q1", text=text, options=tuple(options), key=key)


def codes(q: Question) -> set[str]:
    return {f.code for f in lint_quiz(Quiz(title="t", questions=(q,))).findings}


# --- L1: symbols are content -----------------------------------------------------------------

SYMBOL_PAIRS = [
    ("−23", "23"),  # minus sign
    ("–7", "7"),  # en dash as a minus
    ("(3, –2)", "(–3, 2)"),
    ("H ≡ R", "H ∨ R"),
    ("Sc ≡ Ej", "sC ≡ eJ"),  # case is content in a formula
    ("¬P ⊃ Q", "P ⊃ Q"),
    ("∀x Fx", "∃x Fx"),
    ("x ≤ 3", "x ≥ 3"),
    ("2 × 10^3", "2 ÷ 10^3"),
    ("f′(x)", "f(x)"),
    ("±4", "4"),
    ("3.5", "35"),
]


@pytest.mark.parametrize(("a", "b"), SYMBOL_PAIRS)
def test_options_differing_by_a_sign_or_symbol_are_not_duplicates(a: str, b: str) -> None:
    assert comparable(a) != comparable(b)
    assert near(a, b, 0.5) is None  # not even at a low threshold
    assert repeat_key(a) != repeat_key(b)
    for key in (0, 1):  # whichever is the key: no L102, L103 or L116
        assert not codes(question([a, b, "none"], key)) & OPTION_CODES


@pytest.mark.parametrize("minus", ["-7", "−7", "–7", "‒7", "－7"])
def test_minus_and_dash_variants_are_one_minus(minus: str) -> None:
    assert comparable(minus) == "- 7" and is_formula(minus)
    # The key again with another dash and a full stop: L102 (not a repeat, not a new option).
    assert codes(question(["-7", minus + ".", "7"])) & OPTION_CODES == {"L102"}


@pytest.mark.parametrize(
    ("a", "b"),
    [("Depolarization", "Repolarization"), ("Either", "Neither"), ("Legal", "Illegal")],
)
def test_words_with_a_different_prefix_are_not_near_duplicates(a: str, b: str) -> None:
    assert near(a, b, 0.9) is None
    assert not alike_words(a.lower(), b.lower(), 0.9)
    assert not codes(question([a, b, "Hyperpolarization"])) & OPTION_CODES


def test_case_and_spacing_of_ordinary_words_fold() -> None:
    assert comparable("Paris") == comparable("paris ") == comparable("“Paris”") == "paris"
    assert near("Paris", "paris ", 0.92) == 1.0
    assert repeat_key("Paris") == repeat_key("paris ")
    assert codes(question(["Paris", "Lyon", "paris "])) & OPTION_CODES == {"L116"}
    # Sentence punctuation folds too (the key again: L102, not a repeat).
    assert codes(question(["Paris", "Lyon", "Paris."])) & OPTION_CODES == {"L102"}
    # A misspelling is still a near-duplicate: same first letter, one letter dropped.
    assert alike_words("melbourne", "melborne", 0.92)
    assert codes(question(["Melbourne", "Sydney", "Melborne"], key=1)) & OPTION_CODES == {"L103"}


def test_key_in_stem_compares_signs() -> None:
    # The old normaliser found "7" (from "-7") in the stem and called the key a giveaway.
    q = question(["-7", "7", "13", "-13"], text="What is 3 - 10, given that 10 - 3 = 7?")
    assert "L104" not in codes(q)
    q = question(["Jupiter", "Mars", "Venus"], text="Jupiter: which planet is the largest?")
    assert "L104" in codes(q)


# --- L2: a repeated option is a finding --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "qid", "pair"),
    [
        ("duplicate_options.jsonl", "q2", '"Madrid" / "madrid"'),
        ("csv_duplicate_key.csv", "q2", '"Madrid" / "MADRID"'),
        ("opentdb_entity_duplicate.json", "q1", '"R&B" / "R&B"'),
    ],
)
def test_files_with_a_repeated_option_load_and_lint_with_l116(
    name: str, qid: str, pair: str
) -> None:
    quiz = load_quiz(REPEATED / name)  # these files were refused before
    report = lint_quiz(quiz)
    (finding,) = [f for f in report.findings if f.code == "L116"]
    assert finding.question_id == qid and finding.severity == "error"
    assert pair in finding.message and "is the key" in finding.message
    assert report.fails("error")


def test_a_formula_differing_in_case_is_not_a_repeat(tmp_path: Path) -> None:
    path = tmp_path / "logic.json"
    path.write_text(
        json.dumps(
            [
                {
                    "question": "Which formula translates 'Shane is cold and Emily is jealous'?",
                    "responses": ["Sc ≡ Ej", "sC ≡ eJ", "Sc ∨ Ej", "Sc • Ej"],
                    "correct": "Sc • Ej",
                }
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    quiz = load_quiz(path)
    assert quiz.questions[0].key == 3
    assert lint_quiz(quiz).findings == ()


def test_a_quiz_with_a_repeated_key_vets_against_the_fake_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "quiz.json"
    items = [
        {
            "question": "What is the capital of Spain?",
            "responses": ["Madrid", "Seville", " madrid"],
        },
        {"question": "Which planet is the largest?", "responses": ["Mars", "Jupiter", "Venus"]},
        {"question": "Which ocean is the largest?", "responses": ["Pacific", "Indian", "Arctic"]},
    ]
    for item, correct in zip(items, ["Madrid", "Jupiter", "Pacific"], strict=True):
        item["correct"] = correct
    path.write_text(json.dumps(items), encoding="utf-8")
    quiz = load_quiz(path)
    config = tmp_path / "config.toml"
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        config.write_text(
            f'[judge]\nprovider = "openai-compat"\nbase_url = "{server.base_url}"\n'
            f'model = "fake-judge"\n[store]\npath = "{tmp_path / "runs.db"}"\n',
            encoding="utf-8",
        )
        argv = ["vet", str(path), "--config", str(config), "--no-tui", "--format", "json"]
        code = main([*argv, "--judge", "openai-compat"])
        asked = server.asked_texts()
    out = capsys.readouterr()
    assert code == 0, out.err
    body = json.loads(out.out)
    spain = body["questions"][0]
    assert spain["options"] == ["Madrid", "Seville", "madrid"]
    assert len(spain["verdicts"]) == 3 and None not in spain["verdicts"]  # every option judged
    assert spain["k"] is not None
    assert len(asked) == 9  # three assertions per question, the repeat included
    (finding,) = body["lint"]["findings"]
    assert (finding["code"], finding["question_id"]) == ("L116", "q1")


# --- item 3: fewer, better-aimed style rules ---------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "fires"),
    [
        ("Which sentence is correct: I don't like it or I doesn't like it?", False),
        ("Choose the form that isn't a contraction error.", False),
        ("She ___ not like apples. Which word fills the blank?", False),
        ("Which verb completes the example, e.g. he does not know?", False),
        ("Which `not` operator does Python use?", False),
        ("Which of these cities is not a capital?", True),
        ("Lima is not on the coast. Quito is high. Which city is the capital of Peru?", False),
        ("Lima is on the coast. Which of these cities is not in Peru?", True),
    ],
)
def test_negative_stem_ignores_contractions_and_example_text(stem: str, fires: bool) -> None:
    assert ("L106" in codes(question(["Lima", "Quito", "Bogota"], text=stem))) is fires


@pytest.mark.parametrize(
    ("stem", "fires"),
    [
        ("Find the order of the factor group Z_6/<p> for a prime p.", False),
        ("Which subgroup <p> of Z_12 has order 3 when p is fixed?", False),
        ("Which river flows <p>through Paris?</p>", True),
        ("Which composer wrote the<br>Moonlight Sonata?", True),
        ("Which composer wrote Fr&eacute;d&eacute;ric's favourite?", True),
    ],
)
def test_html_leftover_needs_a_real_tag_or_an_entity(stem: str, fires: bool) -> None:
    assert ("L114" in codes(question(["Lima", "Quito", "Bogota"], text=stem))) is fires


def test_every_code_explains_its_severity(capsys: pytest.CaptureFixture[str]) -> None:
    for info in CODES.values():
        assert info.rationale.startswith(f"{info.severity}:"), info.code
    assert main(["lint", "--explain", "l116"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "L116 repeated-option (error, correctness): the same option appears twice\n  error:"
    )
    assert main(["lint", "--explain", "all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[::2]] == sorted(CODES)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["lint", "--explain", "L999"], "unknown lint code or category 'L999'"),
        (["lint"], "a quiz file"),
    ],
)
def test_explain_errors_exit_2_with_one_line(argv: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "quiztui", *argv],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert says in done.stderr
