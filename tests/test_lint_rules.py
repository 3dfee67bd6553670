"""Lint rule sets (issue 28): categories, select / extend-select / ignore in flags and config,
suppression written in the quiz (GIFT comment, JSON/JSONL field), ``--statistics``, SARIF 2.1.0
validated against the official schema, L104 when the stem names the options, and the default
selection on real exam questions annotators found fine (MMLU-Redux dev, when present)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO

from quiztui.cli import main
from quiztui.config import load_config
from quiztui.core.lint import CATEGORIES, CODES, LintSettings, codes_of, lint_quiz
from quiztui.core.quiz import Question, Quiz
from quiztui.formats import load_quiz

PLANTED = REPO / "sample_quizzes" / "lint_planted.json"
SCHEMA = REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
CORRECTNESS = {"L101", "L102", "L103", "L104", "L110", "L111", "L112", "L114", "L116"}
STYLE = {"L105", "L106", "L107", "L108", "L109", "L113", "L115"}
# Every finding the planted file raised before rule sets existed (test_lint.PLANTED_FINDINGS).
PLANTED_ALL = {
    ("q2", "L102"),
    ("q3", "L103"),
    ("q4", "L104"),
    ("q5", "L105"),
    ("q6", "L106"),
    ("q7", "L107"),
    ("q8", "L110"),
    ("q9", "L111"),
    ("q11", "L113"),
    ("q12", "L114"),
}

GIFT = """\
// a note the writer keeps
// quiztui: ignore L106
Which of these cities is not in Italy? {=Madrid ~Rome ~Milan}

// quiztui: ignore style, L104
Which ocean is not in the Tour de France? {=France ~Spain ~Italy}

Which river is not in Africa? {=Danube ~Nile ~Congo}
"""


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
        cwd=cwd,
    )


def lint_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    main(["lint", *argv, "--format", "json"])
    return json.loads(capsys.readouterr().out)


def found(body: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(f["question_id"], f["code"]) for f in body["findings"]}


def mc(text: str, options: list[str], key: int) -> Question:
    return Question(id="q1", text=text, options=tuple(options), key=key)


def codes(q: Question) -> set[str]:
    return {f.code for f in lint_quiz(Quiz(title="t", questions=(q,))).findings}


# --- categories -------------------------------------------------------------------------------


def test_every_code_has_a_category_shown_by_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert {c for c, info in CODES.items() if info.category == "correctness"} == CORRECTNESS
    assert {c for c, info in CODES.items() if info.category == "style"} == STYLE
    assert set(CATEGORIES) == {"correctness", "style"}
    assert main(["lint", "--explain", "style"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if not line.startswith("  ")]
    assert [h.split()[0] for h in heads] == sorted(STYLE)
    assert all(", style): " in h for h in heads)
    assert main(["lint", "--explain", "L106"]) == 0
    assert capsys.readouterr().out.startswith("L106 negative-stem (warning, style): ")


# --- selection in flags and config ------------------------------------------------------------


def test_default_selection_is_correctness_and_all_keeps_every_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    default = lint_json(capsys, str(PLANTED))
    assert found(default) == {(q, c) for q, c in PLANTED_ALL if c in CORRECTNESS}
    assert default["selection"] == "correctness" and default["selected"] == sorted(CORRECTNESS)
    assert {f["category"] for f in default["findings"]} == {"correctness"}
    everything = lint_json(capsys, str(PLANTED), "--select", "all")
    assert found(everything) == PLANTED_ALL  # no guideline silently dropped
    style = lint_json(capsys, str(PLANTED), "--select", "style")
    assert found(style) == {(q, c) for q, c in PLANTED_ALL if c in STYLE}
    # The core's own default is every rule: the TUI and reports get what [lint] selects.
    assert {(f.question_id, f.code) for f in lint_quiz(load_quiz(PLANTED)).findings} == PLANTED_ALL


def test_extend_select_and_ignore_by_code_and_category(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = lint_json(capsys, str(PLANTED), "--extend-select", "l105,L113", "--ignore", "L104")
    expected = {(q, c) for q, c in PLANTED_ALL if c in CORRECTNESS | {"L105", "L113"}}
    assert found(body) == expected - {("q4", "L104")}
    assert body["disabled"] == ["L104"]
    # ignore wins over select; --disable is --ignore's old name
    body = lint_json(capsys, str(PLANTED), "--select", "all", "--disable", "correctness")
    assert found(body) == {(q, c) for q, c in PLANTED_ALL if c in STYLE}


def test_selection_in_the_config_and_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[lint]\nselect = ["style"]\nextend_select = ["L102"]\nignore = ["L107"]\n')
    body = lint_json(capsys, str(PLANTED), "--config", str(cfg))
    assert found(body) == {(q, c) for q, c in PLANTED_ALL if c in (STYLE - {"L107"}) | {"L102"}}
    # the command line's --select replaces the config's; its --extend-select adds to it
    body = lint_json(capsys, str(PLANTED), "--config", str(cfg), "--select", "L110")
    assert found(body) == {("q8", "L110"), ("q2", "L102")}
    config = load_config(
        None, environ={"QUIZTUI_LINT_SELECT": "all", "QUIZTUI_LINT_IGNORE": "l106"}
    )
    assert config.lint.select == ["all"] and config.lint.ignore == ["L106"]
    assert config.lint.settings().active == codes_of(["all"]) - {"L106"}
    assert LintSettings().active == codes_of(["all"])


def test_unknown_rules_exit_2_with_one_line(tmp_path: Path) -> None:
    bad = run_cli("lint", str(PLANTED), "--extend-select", "L105,stlye")
    assert bad.returncode == 2 and bad.stdout == "" and "Traceback" not in bad.stderr
    assert len(bad.stderr.splitlines()) == 1 and "--extend-select" in bad.stderr
    assert "'stlye'" in bad.stderr
    cfg = tmp_path / "c.toml"
    cfg.write_text('[lint]\nselect = ["L999"]\n')
    out = run_cli("lint", str(PLANTED), "--config", str(cfg))
    assert out.returncode == 2 and "lint.select" in out.stderr and "L999" in out.stderr


# --- suppression written in the quiz ----------------------------------------------------------


def test_gift_ignore_comment_suppresses_its_question_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "quiz.gift"
    path.write_text(GIFT, encoding="utf-8")
    quiz = load_quiz(path)
    assert [q.lint_ignore for q in quiz.questions] == [("L106",), ("style", "L104"), ()]
    body = lint_json(capsys, str(path), "--select", "all")
    assert found(body) == {("q3", "L106")}
    assert {(f["question_id"], f["code"]) for f in body["suppressed"]} == {
        ("q1", "L106"),
        ("q2", "L104"),
        ("q2", "L106"),
    }
    main(["lint", str(path), "--select", "all"])
    assert "(3 suppressed in the quiz)" in capsys.readouterr().out
    # convert keeps the line (it is not an annotation), so the bank stays green
    again = tmp_path / "again.gift"
    assert main(["convert", str(path), str(again)]) == 0
    assert "// quiztui: ignore L106\n" in again.read_text(encoding="utf-8")
    assert [q.lint_ignore for q in load_quiz(again).questions][0] == ("L106",)


def test_gift_ignore_with_an_unknown_code_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "quiz.gift"
    path.write_text("Fine question here? {=A ~B}\n\n// quiztui: ignore L1O6\nWhy? {=A ~B}\n")
    out = run_cli("lint", str(path), "--strict")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}: line 4" in out.stderr and "field 'lint_ignore'" in out.stderr
    assert "'L1O6'" in out.stderr


@pytest.mark.parametrize("layout", ["array", "lines"])
def test_json_lint_ignore_field(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        {
            "question": "Which of these cities is not in Italy?",
            "responses": ["Rome", "Madrid", "Milan"],
            "correct": "Madrid",
            "lint_ignore": "L106",
        },
        {  # the dataset shape; the field is not kept as metadata
            "question": "Which planet is not small at all?",
            "choices": ["Mars", "Jupiter", "Mercury"],
            "answer": 1,
            "lint_ignore": ["style"],
        },
        {
            "question": "Which river is not in Africa?",
            "responses": ["Danube", "Nile", "Congo"],
            "correct": "Danube",
        },
    ]
    path = tmp_path / ("quiz.json" if layout == "array" else "quiz.jsonl")
    if layout == "array":
        path.write_text(json.dumps(items, indent=1))
    else:
        path.write_text("\n".join(json.dumps(item) for item in items) + "\n")
    quiz = load_quiz(path)
    assert [q.lint_ignore for q in quiz.questions] == [("L106",), ("style",), ()]
    assert all(k != "lint_ignore" for k, _ in quiz.questions[1].metadata)
    body = lint_json(capsys, str(path), "--select", "all")
    assert found(body) == {("q3", "L106")} and len(body["suppressed"]) == 2


@pytest.mark.parametrize("target", ["quiz.gift", "quiz.json", "quiz.jsonl"])
def test_lint_ignore_travels_through_convert(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON item's ``lint_ignore`` is written as GIFT's ``// quiztui: ignore`` line, or kept
    as the field, so the converted quiz lints as the original did."""
    items = [
        {
            "question": "Which of these cities is not in Italy?",
            "responses": ["Rome", "Madrid", "Milan"],
            "correct": "Madrid",
            "lint_ignore": ["L106", "style"],
        },
        {
            "question": "Which river is not in Africa?",
            "responses": ["Danube", "Nile", "Congo"],
            "correct": "Danube",
        },
    ]
    source = tmp_path / "source.json"
    source.write_text(json.dumps(items, indent=1))
    out = tmp_path / target
    assert main(["convert", str(source), str(out)]) == 0
    if target.endswith(".gift"):
        assert "// quiztui: ignore L106 style\n" in out.read_text(encoding="utf-8")
    assert [q.lint_ignore for q in load_quiz(out).questions] == [("L106", "style"), ()]
    capsys.readouterr()
    body = lint_json(capsys, str(out), "--select", "all")
    assert found(body) == {("q2", "L106")} and len(body["suppressed"]) == 1


def test_json_lint_ignore_of_the_wrong_kind_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "quiz.jsonl"
    rows = [
        {"question": "Which is red?", "responses": ["Mars", "Venus"], "correct": "Mars"},
        {"question": "Which is big?", "responses": ["A", "B"], "correct": "A", "lint_ignore": 7},
        {"question": "Which is hot?", "responses": ["A", "B"], "correct": "A", "lint_ignore": "x"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = run_cli("lint", str(path), "--strict")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "line 2" in out.stderr and "field 'lint_ignore'" in out.stderr
    assert "must be a lint code or a list of codes (got" in out.stderr


# --- --statistics -----------------------------------------------------------------------------


def test_statistics_counts_per_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {
            "question": f"Which of these is not item {n}?",
            "responses": ["a b", "c d"],
            "correct": "a b",
        }
        for n in range(3)
    ] + [
        {
            "question": "Which is it, all told?",
            "responses": ["x y", "All of the above"],
            "correct": "x y",
        }
    ]
    path = tmp_path / "quiz.json"
    path.write_text(json.dumps(rows))
    assert main(["lint", str(path), "--select", "all", "--statistics"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["count", "code", "name", "severity", "category"]
    assert out[2].split() == ["3", "L106", "negative-stem", "warning", "style"]
    assert out[3].split() == ["1", "L105", "all-none-of-the-above", "warning", "style"]
    main(["lint", str(path), "--select", "all", "--statistics", "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert [(c["code"], c["count"]) for c in body["codes"]] == [("L106", 3), ("L105", 1)]
    assert main(["lint", str(path), "--statistics"]) == 0  # correctness only: nothing
    assert "no findings" in capsys.readouterr().out


# --- SARIF ------------------------------------------------------------------------------------


def test_sarif_is_valid_sarif_2_1_0_with_lines_levels_and_suppressions(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    path = tmp_path / "quiz.gift"
    path.write_text(
        GIFT + "\n// quiztui: ignore L103\nWhich gas is this?"
        " {=Carbon monoxide ~Oxygen ~Carbon monoxid}\n\nLargest ocean? {=Pacific ~Indian}\n",
        encoding="utf-8",
    )
    out = run_cli("lint", "quiz.gift", "--select", "all", "--format", "sarif", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    log = json.loads(out.stdout)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert not errors, errors[0]
    (run,) = log["runs"]
    assert log["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "quiztui"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(CODES)
    assert {r["id"]: r["properties"]["category"] for r in rules}["L106"] == "style"
    by_rule = {
        (r["ruleId"], r["locations"][0]["physicalLocation"].get("region", {}).get("startLine")): r
        for r in run["results"]
    }
    # the line of each question in the file; info is a note; accepted findings are suppressed
    assert (
        not by_rule[("L106", 8)].get("suppressions") and by_rule[("L106", 8)]["level"] == "warning"
    )
    assert by_rule[("L106", 3)]["suppressions"] == [
        {"kind": "inSource", "justification": "lint_ignore in the quiz file"}
    ]
    assert by_rule[("L103", 11)]["suppressions"][0]["kind"] == "inSource"
    assert by_rule[("L113", 13)]["level"] == "warning"
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "quiz.gift"
        for r in run["results"]
    )
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]


def test_sarif_of_quiz_level_and_info_findings_is_valid(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    rows = [
        {
            "question": f"Question number {n} about rivers?",
            "responses": [f"r{n}", f"s{n}", f"t{n}", f"u{n}"],
            "correct": f"s{n}",
        }
        for n in range(8)
    ]
    rows[0]["responses"][1] = "The longest river in Africa, the Nile, flowing north to the sea"
    rows[0]["correct"] = rows[0]["responses"][1]
    path = tmp_path / "my quiz.json"
    path.write_text(json.dumps(rows, indent=1))
    out = run_cli("lint", str(path), "--select", "all", "--format", "sarif")
    log = json.loads(out.stdout)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))
    results = log["runs"][0]["results"]
    levels = {r["ruleId"]: r for r in results}
    assert levels["L107"]["level"] == "note"  # info
    quiz_level = levels["L109"]  # all keyed B: no question, no line
    assert "region" not in quiz_level["locations"][0]["physicalLocation"]
    assert "logicalLocations" not in quiz_level["locations"][0]
    uri = quiz_level["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/my%20quiz.json")


# --- L104: the stem names the options ---------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "options", "key", "fires"),
    [
        (  # formal logic: the key is a word the stem offers as a choice, and names a distractor
            "Construct a complete truth table for the following argument. Then, using the truth"
            " table, determine whether the argument is valid or invalid. If the argument is"
            " invalid, choose an option which presents a counterexample. (There may be other"
            " counterexamples as well.) J ⊃ K / K ⊃ L // J ⊃ L",
            [
                "Valid",
                "Invalid. Counterexample when J and K are true and L is false",
                "Invalid. Counterexample when J is true and K and L are false",
                "Invalid. Counterexample when K is true and J and L are false",
            ],
            0,
            False,
        ),
        ("Is the argument below valid or invalid? J ⊃ K / J // K", ["Valid", "Invalid"], 0, False),
        (  # the stem lists the companies the options are made of
            "Rigg Steele and Urco Corps. all have only voting common stock outstanding. Rigg owns"
            " 85 percent of Steele and 40 percent of Urco. Which group qualifies?",
            ["Rigg and Urco.", "Urco and Steele.", "Rigg Steele and Urco.", "None of them."],
            2,
            False,
        ),
        # still a giveaway: the stem names no distractor
        (
            "The Tour de France is a race held mainly in which country?",
            ["France", "Spain", "Italy"],
            0,
            True,
        ),
        (
            "The word condentiality means that the sender expects",
            ["Integrity", "Condentiality", "Nonrepudiation"],
            1,
            True,
        ),
        # distractors that differ from the key only in a number the stem does not have
        (
            "Recall Landsat 6. Which Landsat satellite failed to reach orbit?",
            ["Landsat 6", "Landsat 5", "Landsat 4"],
            0,
            True,
        ),
        # "privacy" in "X or privacy" is no distractor: not a choice between options
        (
            "Message confidentiality or privacy means the sender expects what?",
            ["Integrity", "Confidentiality", "Authentication"],
            1,
            True,
        ),
    ],
)
def test_key_in_stem_when_the_stem_names_the_options(
    stem: str, options: list[str], key: int, fires: bool
) -> None:
    assert ("L104" in codes(mc(stem, options, key))) is fires


# --- the default selection on real questions annotators found fine -----------------------------


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "lint_precision", REPO / "bench" / "lint_precision.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_selection_on_mmlu_redux_dev_ok_items() -> None:
    bench = _bench()
    if not bench.DEV.is_dir():
        pytest.skip(f"shared data not available: {bench.DEV}")
    fig = bench.dev_figures()
    ok = fig["ok"]
    assert len(ok) > 2000
    default = fig["flagged"]["default"].get("any", set()) & ok
    assert len(default) <= 0.05 * len(ok)  # acceptance: at most 5 % of ok items
    assert fig["flagged"]["default"].get("style", set()) == set()
    # every error-severity finding on an ok item is true: the option really is repeated
    assert fig["errors_on_ok"] and all(e["true"] for e in fig["errors_on_ok"])
    # with all, the style guidelines are still reported (the issue measured them on these items)
    assert len(fig["flagged"]["all"]["style"] & ok) > 0.05 * len(ok)


@pytest.mark.parametrize(
    "stem",
    [
        "Which is NOT a prime, e.g. 4 or 6? Choose one.",
        "Use `not x` here. Which statement is not true: (a) it is; (b) it is not?",
        "For example: the cat did not sit. Which word is negative?",
        " ".join(["A long passage: the committee did not meet, i.e. it never sat."] * 40)
        + " Which is not stated?",
    ],
)
def test_a_stem_without_a_blank_skips_the_blank_branch_with_the_same_result(stem: str) -> None:
    """L106 blanks examples before looking for a negative word; the blank-sentence branch
    ("She ___ not like it.") cannot match without "__", and trying it from every position of
    a long passage was quadratic (three fifths of the lint's time on MMLU-Redux's stems), so
    such stems go through the pattern without it: the text left must be the same."""
    from quiztui.core.lint_items import _EXAMPLES, _EXAMPLES_NO_BLANK

    assert "__" not in stem

    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group())

    assert _EXAMPLES_NO_BLANK.sub(blank, stem) == _EXAMPLES.sub(blank, stem)
