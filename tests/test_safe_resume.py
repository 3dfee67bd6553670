"""Issue 19, item 4 (S3): one resumer per run.

Two ``--resume`` of one run at once used to both run, paying for every remaining assertion twice.
Now the run's lease (store/leases.py: pid, host, heartbeat) lets one process in; the other exits 2
naming the holder's pid. A stale lease — a dead pid, or no heartbeat — is taken over, and said so.
A run whose process died shows "interrupted" the next time the store is opened. Real processes,
a real store, the loopback fake server and its request log.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO
from runs_helpers import listed_runs
from test_resume_and_secrets import cli

from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.store.leases import STALE_SECONDS
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

QUIZ = REPO / "sample_quizzes" / "opentdb_sample.json"


def vet(server: FakeOpenAI, db: Path, *extra: str) -> list[str]:
    """The resume tests' vet command line, small batches at low concurrency."""
    return [
        *cli(server, db, *extra),
        "--concurrency",
        "2",
        "--batch-size",
        "5",
        "--no-cache",  # every assertion left goes to the server, where the log counts it
    ]


def judged(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {
            t
            for (t,) in conn.execute(
                "SELECT a.text FROM verdicts v JOIN assertions a USING (run_id, seq)"
                " WHERE v.verdict IS NOT NULL"
            )
        }


def wait_for(predicate: object, what: str, limit: float = 60.0) -> None:
    """Poll until ``predicate()`` holds (a bound on a hang, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if predicate():  # type: ignore[operator]
                return
        except sqlite3.OperationalError:
            pass  # the child has created the file but not yet its tables
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def killed_run(server: FakeOpenAI, db: Path) -> tuple[int, set[str], int]:
    """A run SIGKILLed part-way: (its id, the texts judged before, the killed pid)."""
    proc = subprocess.Popen(
        vet(server, db, str(QUIZ)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for(lambda: db.exists() and len(judged(db)) >= 10, "10 verdicts")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    return run_id, judged(db), proc.pid


def test_killed_run_shows_interrupted_and_two_concurrent_resumes_send_each_assertion_once(
    tmp_path: Path,
) -> None:
    quiz = load_quiz(QUIZ)
    total = sum(q.n for q in quiz.questions)
    db = tmp_path / "runs.db"
    with FakeOpenAI(truth_from_quiz(quiz), latency=0.1) as server:
        run_id, before, dead_pid = killed_run(server, db)
        assert 10 <= len(before) < total

        listing = subprocess.run(
            [sys.executable, "-m", "quiztui", "runs", "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listing.returncode == 0, listing.stderr
        row = next(run for run in listed_runs(listing.stdout) if run.split()[:1] == [str(run_id)])
        assert "interrupted" in row and "running" not in row

        server.clear_log()
        first = subprocess.Popen(
            vet(server, db, "--resume", str(run_id)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(server.requests) > 0, "the first resume's first request")
        second = subprocess.run(
            vet(server, db, "--resume", str(run_id)), capture_output=True, text=True, timeout=120
        )
        out, err = first.communicate(timeout=120)
        asked = server.asked_texts(answered_only=False)
    assert second.returncode == 2, second.stderr
    assert f"run {run_id} is being resumed by pid {first.pid}" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1 and "Traceback" not in second.stderr
    assert first.returncode in (0, 1), err
    assert f"took over from pid {dead_pid} (pid {dead_pid} is no longer running)" in err
    assert asked and max(asked.values()) == 1, asked.most_common(3)
    assert set(asked) == {a for a in judged(db)} - before
    assert len(asked) == total - len(before)
    with Store(db) as store:
        assert store.get_run(run_id).status == "finished"
        assert store.leases.holder(run_id) is None  # released at the end


def rewound_run(server: FakeOpenAI, db: Path, keep: int) -> tuple[int, int]:
    """A finished run turned back into one still "running" with ``keep`` verdicts left:
    (its id, the assertions left to judge)."""
    done = subprocess.run(vet(server, db, str(QUIZ)), capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
        conn.execute("DELETE FROM verdicts WHERE run_id = ? AND seq >= ?", (run_id, keep))
        conn.execute(
            "UPDATE runs SET status = 'running', summary_json = NULL WHERE id = ?", (run_id,)
        )
        (total,) = conn.execute("SELECT COUNT(*) FROM assertions").fetchone()
    return run_id, total - keep


def hold(db: Path, run_id: int, pid: int, heartbeat_age: float) -> None:
    """Write a lease as a process ``pid`` that last beat ``heartbeat_age`` seconds ago would."""
    import socket

    now = time.time()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO run_leases VALUES (?,?,?,?,?,?)",
            (run_id, pid, socket.gethostname(), "other", now - 7200, now - heartbeat_age),
        )


def test_a_live_holder_refuses_a_resume_and_a_silent_one_is_taken_over(tmp_path: Path) -> None:
    quiz = load_quiz(QUIZ)
    db = tmp_path / "runs.db"
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        run_id, left = rewound_run(server, db, keep=12)
        live_pid = os.getpid()  # this test's process: alive, on this host

        hold(db, run_id, live_pid, heartbeat_age=1.0)
        server.clear_log()
        busy = subprocess.run(
            vet(server, db, "--resume", str(run_id)), capture_output=True, text=True, timeout=120
        )
        assert busy.returncode == 2
        line = busy.stderr.strip()
        assert line.startswith(
            f"quiztui: error: run {run_id} is being resumed by pid {live_pid} (last heartbeat "
        ), line
        assert len(line.splitlines()) == 1 and line.endswith("or stop that process")
        assert server.requests == []  # refused before anything was sent
        with Store(db) as store:  # a live holder: opening the store leaves the run alone
            assert store.get_run(run_id).status == "running"

        silent = STALE_SECONDS * 10
        hold(db, run_id, live_pid, heartbeat_age=silent)
        with Store(db) as store:  # no heartbeat: the run is shown interrupted
            assert store.get_run(run_id).status == "interrupted"
        taken = subprocess.run(
            vet(server, db, "--resume", str(run_id)), capture_output=True, text=True, timeout=120
        )
        asked = server.asked_texts(answered_only=False)
    assert taken.returncode in (0, 1), taken.stderr
    assert f"run {run_id}: took over from pid {live_pid} (no heartbeat for " in taken.stderr
    assert len(asked) == left and max(asked.values()) == 1
