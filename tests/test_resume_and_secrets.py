"""A7: a SIGKILLed run resumes without re-sending judged assertions; A10: keys never persist."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from conftest import REPO

from quiztui.formats import load_quiz
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

QUIZ = REPO / "sample_quizzes" / "opentdb_sample.json"


def cli(server: FakeOpenAI, db: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "quiztui",
        "vet",
        *extra,
        "--no-tui",
        "--judge",
        "openai-compat",
        "--base-url",
        server.base_url,
        "--model",
        "fake-judge",
        "--db",
        str(db),
        "--format",
        "json",
    ]


def judged_texts(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {
            t
            for (t,) in conn.execute(
                "SELECT a.text FROM verdicts v JOIN assertions a USING (run_id, seq)"
                " WHERE v.verdict IS NOT NULL"
            )
        }


def verdict_map(report: dict) -> dict[str, list]:
    return {q["question_id"]: q["verdicts"] for q in report["questions"]}


@pytest.mark.parametrize("how", ["resume", "rerun"])
def test_sigkill_then_restart_resends_nothing_judged(tmp_path: Path, how: str) -> None:
    quiz = load_quiz(QUIZ)
    total = sum(q.n for q in quiz.questions)
    with FakeOpenAI(truth_from_quiz(quiz), latency=0.25, tpr=0.9, tnr=0.9, seed=4) as server:
        # The reference: an uninterrupted run, in this process (the killed run and the restart
        # below are real processes).
        argv = cli(server, tmp_path / "ref.db", str(QUIZ)) + [
            "--concurrency",
            "8",
            "--batch-size",
            "10",
        ]
        ref = quiztui_main(*argv[3:])
        assert ref.returncode in (0, 1), ref.stderr
        reference = json.loads(ref.stdout)

        db = tmp_path / "killed.db"
        proc = subprocess.Popen(
            cli(server, db, str(QUIZ)) + ["--concurrency", "2", "--batch-size", "10"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if db.exists() and len(judged_texts(db)) >= 40:
                    break
            except sqlite3.OperationalError:
                pass  # the child has created the file but not yet its tables
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = judged_texts(db)
        assert 40 <= len(before) < total, "killed mid-way"
        with sqlite3.connect(db) as conn:
            run_id, status = conn.execute("SELECT id, status FROM runs").fetchone()
        assert status == "running"

        server.clear_log()
        args = ["--resume", str(run_id)] if how == "resume" else [str(QUIZ)]
        again = subprocess.run(
            cli(server, db, *args) + ["--concurrency", "8", "--batch-size", "10"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode in (0, 1), again.stderr
        resent = set(server.asked_texts(answered_only=False))
    assert resent and not (resent & before)
    assert len(resent) == total - len(before)
    result = json.loads(again.stdout)
    assert result["judged"] == total
    assert verdict_map(result) == verdict_map(reference)
    assert [q["badge"] for q in result["questions"]] == [q["badge"] for q in reference["questions"]]


def test_api_key_never_reaches_database_cache_or_reports(tmp_path: Path) -> None:
    marker = "sk-MARKER-7f3a9c-DO-NOT-STORE"
    quiz = load_quiz(REPO / "sample_quizzes" / "planted_errors.json")
    home = tmp_path / "home"
    env = {
        **os.environ,
        "OPENAI_API_KEY": marker,
        "HOME": str(home),
        "QUIZTUI_CONFIG_DIR": str(home / "config"),
        "QUIZTUI_DATA_DIR": str(home / "data"),
    }
    with FakeOpenAI(
        truth_from_quiz(quiz),
        require_key=marker,
        fault_rate=0.3,
        fault_kinds=["500", "429"],
        retry_after=0,
    ) as server:
        db = home / "data" / "quiztui.db"
        for fmt in ("json", "csv", "md"):
            out = subprocess.run(
                cli(server, db, str(REPO / "sample_quizzes" / "planted_errors.json"))
                + ["--format", fmt, "-o", str(home / f"report.{fmt}"), "--no-cache"],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
            assert out.returncode in (0, 1), out.stderr
            assert marker not in out.stdout and marker not in out.stderr
        log = server.requests
        assert log and all(r.had_auth for r in log)  # the key was really sent
        assert all(r.status != 401 for r in log)
        assert marker not in repr(log)
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "quiztui.db" for p in files) and any(p.suffix == ".md" for p in files)
    for path in files:  # database, WAL, reports, anything else written
        assert marker.encode() not in path.read_bytes(), path
