"""Issue 17 item 2 (L2) for the bank formats: a repeated option in GIFT, Aiken or Moodle XML is a
lint finding (L116), the file still loads, and vetting judges every option of that question.

Written the way these files look when an author pastes an option twice: GIFT with a comment and a
repeated alternative, Aiken with the same line twice, Moodle XML with two answers of one text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.core.bank import why_not_judged
from quiztui.formats import load_quiz
from quiztui.formats.bank_io import load_bank
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

GIFT = """// Capitals, pasted from last year's bank
::Spain::What is the capital of Spain? {=Madrid ~Seville ~Madrid}

::Planets::Which planet is the largest? {~Mars =Jupiter ~Venus}
"""

AIKEN = """What is the capital of Spain?
A. Madrid
B. Seville
C. Madrid
ANSWER: A

Which planet is the largest?
A. Mars
B. Jupiter
C. Venus
ANSWER: B
"""

MOODLE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<quiz>
  <question type="multichoice">
    <name><text>Spain</text></name>
    <questiontext format="html"><text>What is the capital of Spain?</text></questiontext>
    <answer fraction="100"><text>Madrid</text></answer>
    <answer fraction="0"><text>Seville</text></answer>
    <answer fraction="0"><text>Madrid</text></answer>
    <single>true</single>
  </question>
  <question type="multichoice">
    <name><text>Planets</text></name>
    <questiontext format="html"><text>Which planet is the largest?</text></questiontext>
    <answer fraction="0"><text>Mars</text></answer>
    <answer fraction="100"><text>Jupiter</text></answer>
    <answer fraction="0"><text>Venus</text></answer>
    <single>true</single>
  </question>
</quiz>
"""

CASES = [("bank.gift", GIFT), ("bank.txt", AIKEN), ("bank.xml", MOODLE_XML)]


@pytest.mark.parametrize(("name", "text"), CASES, ids=["gift", "aiken", "moodle_xml"])
def test_a_repeated_option_loads_and_is_judgeable(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    bank = load_bank(path)
    assert len(bank.items) == 2 and not bank.skipped
    assert [why_not_judged(item) for item in bank.items] == [None, None]
    quiz = load_quiz(path)
    spain = quiz.questions[0]
    assert len(spain.options) == 3 and spain.key == 0


@pytest.mark.parametrize(("name", "text"), CASES, ids=["gift", "aiken", "moodle_xml"])
def test_a_repeated_option_lints_and_vets_against_the_fake_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert main(["lint", str(path), "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["code"], f["severity"], f["question_id"]) for f in findings] == [
        ("L116", "error", "q1")
    ]
    config = tmp_path / "config.toml"
    # The judge's truth is per assertion text: the repeated "Madrid" reads as the key does (true).
    truth = truth_from_quiz(load_quiz(path))
    (madrid,) = [text for text in truth if "Madrid" in text]
    truth[madrid] = True
    with FakeOpenAI(truth) as server:
        config.write_text(
            f'[judge]\nprovider = "openai-compat"\nbase_url = "{server.base_url}"\n'
            f'model = "fake-judge"\n[store]\npath = "{tmp_path / "runs.db"}"\n',
            encoding="utf-8",
        )
        argv = ["vet", str(path), "--config", str(config), "--no-tui", "--format", "json"]
        code = main([*argv, "--judge", "openai-compat"])
        asked = server.asked_texts()
    out = capsys.readouterr()
    # A judge calls the repeated key true as well: the question is flagged (exit 1), not refused.
    assert code == 1, out.err
    body = json.loads(out.out)
    spain, planets = body["questions"]
    assert spain["verdicts"] == [True, False, True]  # the repeat is judged like any option
    assert spain["k"] is not None and planets["verdicts"] == [False, True, False]
    assert sum(asked.values()) == 6  # three assertions per question: the repeat is asked too
    assert asked[madrid] == 2
    assert [f["code"] for f in body["lint"]["findings"]] == ["L116"]
