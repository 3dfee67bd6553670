"""``quiztui vet --format html|junit`` and ``quiztui report RUN_ID`` as a user runs them: real
processes, a real SQLite store, exit codes. Within a test, the commands after the first of each
kind run through ``main()`` in-process (``cli_helpers.quiztui_main``): the same code, the same
store file, without an interpreter start each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from cli_helpers import quiztui_main
from conftest import REPO

from quiztui.core.quiz import Question, Quiz
from quiztui.store import Store

PLANTED = REPO / "sample_quizzes" / "planted_errors.json"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def _vet(db: Path, *args: str, process: bool = True) -> subprocess.CompletedProcess[str]:
    run = run_cli if process else quiztui_main
    return run("vet", str(PLANTED), "--no-tui", "--sim-latency", "0", "--db", str(db), *args)


def _rows(html: str) -> int:
    return html.count('<tr class="q ')


def test_vet_writes_html_and_junit_and_infers_the_format_from_the_extension(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    questions = len(json.loads(PLANTED.read_text()))
    html = tmp_path / "r.html"
    out = _vet(db, "--format", "html", "-o", str(html))
    assert out.returncode == 1, out.stderr  # planted errors are flagged
    assert html.read_text().startswith("<!DOCTYPE html>") and _rows(html.read_text()) == questions
    xml = tmp_path / "r.xml"
    out = _vet(db, "-o", str(xml))  # no --format: .xml means JUnit
    assert out.returncode == 1, out.stderr
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == str(questions)
    out = _vet(db, "--format", "junit")  # to stdout
    assert out.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')


def test_report_exports_a_stored_run_in_every_format(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    first = tmp_path / "first.json"
    assert _vet(db, "--format", "json", "-o", str(first)).returncode == 1
    stored = json.loads(first.read_text())
    run_id = str(stored["run_id"])
    out = quiztui_main("report", run_id, "--db", str(db), "--format", "json")
    assert out.returncode == 0, out.stderr
    again = json.loads(out.stdout)
    assert again["questions"] == stored["questions"]
    assert again["badge_counts"] == stored["badge_counts"]
    assert again["lint"] == stored["lint"]  # the quiz file is unchanged: its lint comes along
    for name, marker in (
        ("r.html", "<!DOCTYPE html>"),
        ("r.xml", "<?xml"),
        ("r.csv", "question_id,question,key"),
        ("r.md", "# quiztui vet report"),
    ):
        out = quiztui_main("report", run_id, "--db", str(db), "-o", str(tmp_path / name))
        assert out.returncode == 0, out.stderr
        assert (tmp_path / name).read_text().startswith(marker), name
        assert "report written to" in out.stderr
    assert _rows((tmp_path / "r.html").read_text()) == len(stored["questions"])
    out = run_cli("report", run_id, "--db", str(db))  # no -o, no --format: Markdown on stdout
    assert out.returncode == 0 and out.stdout.startswith("# quiztui vet report")


def test_report_errors_exit_2_with_a_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    out = run_cli("report", "1", "--db", str(db))
    assert out.returncode == 2 and "no run store" in out.stderr and str(db) in out.stderr
    assert not db.exists()  # asking did not create an empty store
    quiz = Quiz(title="t", questions=(Question(id="q1", text="1 + 1?", options=("2", "3"), key=0),))
    with Store(db) as store:
        unfinished = store.create_run(
            quiz=quiz, provider="simulated", model="m", base_url="", judge_label="j",
            simulated=True, judge_key="k", prompt_hash="h", seed=1, batch_size=20, params={},
            order=(),
        )  # fmt: skip
    out = quiztui_main("report", "999", "--db", str(db))
    assert out.returncode == 2 and "no run with id 999" in out.stderr
    out = quiztui_main("report", str(unfinished), "--db", str(db))  # rebuilt, as runs show does
    assert out.returncode == 0 and "rebuilt from the verdicts stored so far" in out.stderr
    out = quiztui_main("report", "abc", "--db", str(db))
    assert out.returncode == 2 and "RUN_ID" in out.stderr  # argparse: it must be a number
    report = tmp_path / "x.json"
    assert _vet(db, "--format", "json", "-o", str(report), process=False).returncode == 1
    run_id = str(json.loads(report.read_text())["run_id"])
    out = quiztui_main("report", run_id, "--db", str(db), "-o", str(tmp_path / "no" / "r.html"))
    assert out.returncode == 2 and "cannot write the report" in out.stderr
    assert "Traceback" not in out.stderr
