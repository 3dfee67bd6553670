"""A killed run of any kind shows "interrupted", not "running" forever (store/leases.py).

Grade, review, robustness and generate runs and k-fold fits are held by the process that made
them (``kind_leases``, schema v12: pid, host, token), written in the transaction that creates the
run and dropped when it ends. Opening the store marks a "running" run whose holder is gone
"interrupted", as it does for vet runs; a live holder's run is left alone.

Each kind is started as a user starts it, a real ``quiztui`` process with a slow simulated judge,
killed with SIGKILL part-way, and then listed by a real ``quiztui runs``; the store is a real
SQLite file in tmp_path.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from runs_helpers import listed_runs
from test_cli import run_cli

from quiztui.cli.runs import listing_line
from quiztui.core.figures import run_state_text
from quiztui.formats import load_quiz
from quiztui.pipeline.history import StoreHistory
from quiztui.store import Store
from quiztui.store.db import MIGRATIONS
from quiztui.store.grade_fits import GradeFitStore
from quiztui.store.history import listing_key, run_history
from quiztui.store.leases import INTERRUPTED, KIND_TABLES, kind_holder

# A teacher's six-question science quiz (Quizaic JSON).
QUIZ = """\
[
  {"question": "Which gas do plants take in for photosynthesis?",
   "responses": ["Oxygen", "Carbon dioxide", "Nitrogen", "Helium"], "correct": "Carbon dioxide"},
  {"question": "How many legs does a spider have?",
   "responses": ["6", "8", "10", "12"], "correct": "8"},
  {"question": "Which organ pumps blood around the body?",
   "responses": ["Liver", "Lungs", "Heart", "Kidney"], "correct": "Heart"},
  {"question": "What is the boiling point of water at sea level, in degrees Celsius?",
   "responses": ["90", "100", "110", "120"], "correct": "100"},
  {"question": "Which planet is known as the Red Planet?",
   "responses": ["Venus", "Jupiter", "Mars", "Saturn"], "correct": "Mars"},
  {"question": "What is the largest ocean on Earth?",
   "responses": ["Atlantic", "Indian", "Arctic", "Pacific"], "correct": "Pacific"}
]
"""

# Candidate answers as a marking spreadsheet exports them.
ANSWERS = """\
id,question,reference,candidate,human
p1,Why do we see lightning before we hear thunder?,Light travels much faster than sound.,\
Light is faster than sound.,5
p2,What gas do we breathe out?,Carbon dioxide.,We breathe out oxygen.,1
p3,Why is the sky blue?,Air scatters blue light more than red light.,Blue light is scattered \
most by the air.,5
p4,Why does a metal spoon feel colder than a wooden one?,Metal conducts heat away from the \
hand faster.,Metal is colder.,2
p5,What makes the Moon shine?,It reflects light from the Sun.,It reflects sunlight.,5
p6,Why do ships float?,They displace a weight of water equal to their own weight.,Because \
they are hollow.,2
"""

# Marks out of 10, one row per student answer.
MARKS = """\
student,question,model_answer,response,mark
s01,What does a plant make in photosynthesis?,Glucose and oxygen,It makes glucose and oxygen,9
s02,What does a plant make in photosynthesis?,Glucose and oxygen,Food,3
s03,What does a plant make in photosynthesis?,Glucose and oxygen,sugar and oxygen,8
s04,What does a plant make in photosynthesis?,Glucose and oxygen,I don't know,0
s05,Why does ice float on water?,Ice is less dense than water,ice is less dense,10
s06,Why does ice float on water?,Ice is less dense than water,it is cold,1
s07,Why does ice float on water?,Ice is less dense than water,it is lighter for its size,7
s08,Why does ice float on water?,Ice is less dense than water,ice is heavy,0
s09,What causes the seasons?,The tilt of the Earth's axis,the axis is tilted,9
s10,What causes the seasons?,The tilt of the Earth's axis,distance from the sun,2
s11,What causes the seasons?,The tilt of the Earth's axis,the tilt of the axis,10
s12,What causes the seasons?,The tilt of the Earth's axis,the moon,0
"""

# A short study note: sentences with numbers and names, which the simulated model asks about.
DOCUMENT = """\
# The water cycle

In 1802 the chemist Luke Howard gave clouds the Latin names still used today. Cirrus clouds
form above 6000 metres, where the air is below freezing.

About 97 percent of the water on Earth is salt water in the oceans. The Pacific Ocean alone
holds roughly half of it.

Rain falls on the Amazon basin more than 200 days a year. The Amazon River carries about 20
percent of the fresh water that reaches the sea.

Snow on the Himalaya feeds the Ganges and the Indus. Meltwater from glaciers supplies drinking
water to over 1 billion people.
"""

# Seconds per simulated request: slow enough that a run is caught part-way, short because the
# test waits out the first one. Every kind here makes four requests or more, one at a time, and
# is killed as soon as it has recorded something (grade, review and k-fold: their first reply,
# with five or more requests still to go; robustness and generate: their run row).
LATENCY = "1"
JUDGE = ["--judge", "simulated", "--sim-latency", LATENCY, "--concurrency", "1"]


@dataclass(frozen=True)
class Kind:
    """How to start one kind of run, and how to see it is under way."""

    name: str
    argv: Callable[[Path], list[str]]
    # SQL giving a positive count once the run has its row and has recorded something
    under_way: str


def _files(tmp: Path) -> dict[str, Path]:
    files = {
        "quiz": (tmp / "science.json", QUIZ),
        "answers": (tmp / "answers.csv", ANSWERS),
        "marks": (tmp / "marks.csv", MARKS),
        "document": (tmp / "water-cycle.md", DOCUMENT),
    }
    for path, text in files.values():
        if not path.exists():
            path.write_text(text, encoding="utf-8")
    return {name: path for name, (path, _) in files.items()}


KINDS = [
    Kind(
        "grade",
        lambda t: ["grade", str(_files(t)["answers"]), "--grader", "pass3", *JUDGE],
        "SELECT COUNT(*) FROM grades g JOIN grade_runs r ON r.id = g.run_id"
        " WHERE r.status = 'running'",
    ),
    Kind(
        "review",
        lambda t: ["review", str(_files(t)["quiz"]), "--mode", "direct", *JUDGE],
        "SELECT COUNT(*) FROM review_iterations i JOIN review_runs r ON r.id = i.run_id"
        " WHERE r.status = 'running'",
    ),
    Kind(
        "robustness",
        lambda t: ["robustness", str(_files(t)["quiz"]), "--variants", "2", *JUDGE],
        # a question is recorded once it is measured: the run row is there before
        "SELECT COUNT(*) FROM robustness_runs WHERE status = 'running'",
    ),
    Kind(
        "generate",
        lambda t: [
            "generate",
            str(_files(t)["document"]),
            "--subject",
            "geography",
            "-o",
            str(t / "pairs.json"),
            "--chunk-chars",
            "200",
            *JUDGE,
        ],
        # pairs are recorded after every chunk is back: the run row is there from the start
        "SELECT COUNT(*) FROM generate_runs WHERE status = 'running'",
    ),
    Kind(
        "kfold",
        lambda t: [
            "grade",
            "--benchmark",
            str(_files(t)["marks"]),
            "--fit",
            "kfold",
            "--scale",
            "0-10",
            "--columns",
            "question=question,reference=model_answer,answer=response,score=mark,id=student",
            "--folds",
            "3",
            "--grader",
            "pass3",
            *JUDGE,
        ],
        "SELECT (SELECT COUNT(*) FROM grade_fits WHERE status = 'running')"
        " * (SELECT COUNT(*) FROM grades)",
    ),
]


def count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # the child has created the file but not yet its tables
        return 0
    finally:
        conn.close()


def statuses(db: Path) -> dict[tuple[str, int], str]:
    """Every run's status, read without opening a Store (which would sweep)."""
    conn = sqlite3.connect(db)
    try:
        return {
            (kind, run_id): status
            for kind, table in KIND_TABLES.items()
            for run_id, status in conn.execute(f"SELECT id, status FROM {table}")
        }
    finally:
        conn.close()


def wait_until_under_way(proc: subprocess.Popen[str], db: Path, sql: str) -> None:
    """Poll until the run has recorded something (a bound on a hang, not a timing assertion)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(
                f"the run ended (exit {proc.returncode}) before it was killed: {err}"
            )
        if db.exists() and count(db, sql) > 0:
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for: {sql}")


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_a_killed_run_is_shown_interrupted_and_a_live_one_is_left_running(
    kind: Kind, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "quiztui", *kind.argv(tmp_path), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_under_way(proc, db, kind.under_way)
        # another process opening the store while the run goes leaves it running, held by it
        with Store(db) as store:
            (listing,) = run_history(store, kind=kind.name)
            holder = kind_holder(store.conn, kind.name, listing.id)
        assert listing.status == "running"
        assert holder is not None and holder.pid == proc.pid
        assert holder.host == socket.gethostname()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    killed = {key for key, status in statuses(db).items() if status == "running"}
    assert (kind.name, listing.id) in killed  # it died part-way, still saying "running"

    listed = run_cli("runs", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    with Store(db) as store:
        history = {(r.kind, r.id): r for r in run_history(store)}
        leases = store.conn.execute("SELECT COUNT(*) FROM kind_leases").fetchone()[0]
    assert {key for key in killed if history[key].status == INTERRUPTED} == killed
    assert leases == 0  # the dead process's leases are dropped with the sweep
    # the TUI's Runs screen reads the same history
    screen_rows = {(r.kind, r.id): r.status for r in StoreHistory(db).list_runs()}
    assert {key: screen_rows[key] for key in killed} == dict.fromkeys(killed, INTERRUPTED)
    lines = listed_runs(listed.stdout)
    for run_kind, run_id in killed:
        key = listing_key(history[run_kind, run_id])
        (line,) = [ln for ln in lines if ln.split()[:1] == [key] and f" {run_kind} " in ln]
        assert line.split()[3:5] == [run_kind, "incomplete"], line
        # the house wording of an incomplete run, as the TUI and the reports say it
        state = run_state_text(INTERRUPTED, history[run_kind, run_id].not_run)
        assert state.startswith("incomplete (interrupted) · not run: ")
        assert line.endswith(state) and line == listing_line(history[run_kind, run_id])
        if run_kind in ("grade", "review", "robustness"):  # killed part-way: some never ran
            assert history[run_kind, run_id].not_run > 0, line
    if kind.name == "kfold":  # the fit and the grade run it was waiting on
        assert {k for k, _ in killed} == {"kfold", "grade"}
    else:
        assert {k for k, _ in killed} == {kind.name}


# -- the store's part ----------------------------------------------------------------------------


def make_runs(store: Store, quiz_path: Path) -> dict[str, int]:
    """One run of each kind, created as the pipelines create them: {kind: id}."""
    quiz = load_quiz(quiz_path)
    judge = {"provider": "simulated", "model": "sim", "judge_label": "SIMULATED judge"}
    return {
        "grade": store.grades.create_run(
            source="answers.csv",
            grader="pass3",
            simulated=True,
            prompt_hash="p",
            params={},
            **judge,
        ),
        "review": store.reviews.create_run(
            quiz=quiz,
            mode="direct",
            max_iterations=1,
            model2=None,
            judge2_label=None,
            simulated=True,
            prompt_hash="p",
            params={},
            **judge,
        ),
        "robustness": store.robustness.create_run(
            quiz=quiz,
            format="multiple-choice",
            variants=2,
            simulated=True,
            prompt_hash="p",
            params={},
            **judge,
        ),
        "generate": store.generate.create_run(
            document="notes.md",
            subject="water",
            output="pairs.json",
            judge_label="SIMULATED judge",
            model="sim",
            simulated=True,
        ),
        "kfold": GradeFitStore(store.conn).create_fit(
            source="marks.csv",
            digest="d",
            marked=12,
            graders=["lexical"],
            folds=3,
            seed=0,
            scale=(0.0, 10.0),
        ),
    }


def end(store: Store, kind: str, run_id: int, status: str) -> None:
    if kind == "kfold":
        GradeFitStore(store.conn).finish_fit(
            run_id,
            status,
            judge_label="",
            model="",
            simulated=False,
            grade_runs=[],
            unscored=0,
            not_run=0,
        )
    else:
        table = {
            "grade": store.grades,
            "review": store.reviews,
            "robustness": store.robustness,
            "generate": store.generate,
        }[kind]
        table.finish_run(run_id, status, None)


def test_every_kind_is_held_by_its_process_until_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    quiz = _files(tmp_path)["quiz"]
    with Store(db) as store:
        ids = make_runs(store, quiz)
        for kind, run_id in ids.items():
            holder = kind_holder(store.conn, kind, run_id)
            assert holder is not None and holder.pid == os.getpid(), kind
            assert holder.host == socket.gethostname()
    with Store(db) as again:  # this process is alive: nothing is swept
        assert {r.kind: r.status for r in run_history(again)} == dict.fromkeys(ids, "running")
        ends = dict(
            zip(ids, ["finished", "stopped", "cancelled", "failed", "finished"], strict=True)
        )
        for kind, run_id in ids.items():
            end(again, kind, run_id, ends[kind])
        assert again.conn.execute("SELECT COUNT(*) FROM kind_leases").fetchone()[0] == 0
    with Store(db) as third:  # ended runs keep their own status
        assert {r.kind: r.status for r in run_history(third)} == ends


def test_a_run_without_a_live_holder_on_this_host_is_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    quiz = _files(tmp_path)["quiz"]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid runs nothing now
    with Store(db) as store:
        ids = make_runs(store, quiz)
        conn = store.conn
        # grade: made by a quiztui before v12 (no lease at all)
        conn.execute("DELETE FROM kind_leases WHERE kind = 'grade'")
        # review and kfold: held by a process that died on this host
        conn.execute(
            "UPDATE kind_leases SET pid = ? WHERE kind IN ('review', 'kfold')", (gone.pid,)
        )
        # robustness: held by a process on another host, which cannot be asked: left running
        conn.execute(
            "UPDATE kind_leases SET pid = ?, host = 'lab-pc-2' WHERE kind = 'robustness'",
            (gone.pid,),
        )
        # generate: held by this live process
        swept = store.leases.sweep()
    assert sorted(swept) == sorted((k, ids[k]) for k in ("grade", "review", "kfold"))
    with Store(db) as store:
        status = {r.kind: r.status for r in run_history(store)}
        held = {k for (k,) in store.conn.execute("SELECT kind FROM kind_leases")}
    assert status == {
        "grade": INTERRUPTED,
        "review": INTERRUPTED,
        "kfold": INTERRUPTED,
        "robustness": "running",
        "generate": "running",
    }
    assert held == {"robustness", "generate"}


def test_the_lease_is_written_in_the_transaction_that_creates_the_run(tmp_path: Path) -> None:
    """A lease that cannot be written leaves no run behind: no "running" row nobody holds."""
    db = tmp_path / "runs.db"
    with Store(db) as store:
        store.conn.execute(
            "CREATE TRIGGER no_leases BEFORE INSERT ON kind_leases"
            " BEGIN SELECT RAISE(ABORT, 'lease refused'); END"
        )
        with pytest.raises(sqlite3.IntegrityError, match="lease refused"):
            make_runs(store, _files(tmp_path)["quiz"])
        assert store.conn.execute("SELECT COUNT(*) FROM grade_runs").fetchone()[0] == 0
        assert not store.conn.in_transaction


def v11_store(path: Path) -> None:
    """A run store as quiztui wrote it at schema v11: a finished grade run with its grades, a
    finished k-fold fit, and a review run a killed process left "running"."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:11]:
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("PRAGMA user_version = 11")
    conn.execute(
        "INSERT INTO grade_runs (id, created_at, finished_at, status, source, grader, provider,"
        " model, judge_label, simulated, prompt_hash, params_json) VALUES (3, 1.0, 2.0,"
        " 'finished', 'answers.csv', 'lexical', 'offline', 'lexical', 'offline', 0, 'lexical',"
        " '{}')"
    )
    conn.execute(
        "INSERT INTO grades (run_id, seq, item_id, question, reference, candidate, raw, label,"
        " reasoning, reply, attempts, tokens_in, tokens_out) VALUES (3, 0, 'p1', 'Why?',"
        " 'Because.', 'Because.', 1.0, 'exact', '', '', 1, 0, 0)"
    )
    conn.execute(
        "INSERT INTO grade_fits (id, created_at, finished_at, status, source, digest, marked,"
        " graders_json, folds, seed, scale_lo, scale_hi) VALUES (1, 3.0, 4.0, 'finished',"
        " 'marks.csv', 'd', 12, '[\"lexical\"]', 3, 0, 0, 10)"
    )
    conn.execute(
        "INSERT INTO review_runs (id, created_at, status, quiz_title, quiz_hash, mode,"
        " max_iterations, provider, model, judge_label, simulated, prompt_hash, params_json)"
        " VALUES (5, 5.0, 'running', 'science', 'h', 'direct', 1, 'simulated', 'sim',"
        " 'SIMULATED reviewer', 1, 'p', '{}')"
    )
    conn.close()


def test_a_v11_store_is_migrated_and_keeps_its_runs(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    v11_store(db)
    with Store(db) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 12
        listed = {(r.kind, r.id): (r.status, r.questions) for r in run_history(store)}
        (grade,) = [r for r in run_history(store) if r.kind == "grade"]
    # the killed review run, made before leases, is orphaned: interrupted; the rest as they were
    assert listed == {
        ("grade", 3): ("finished", 1),
        ("kfold", 1): ("finished", 12),
        ("review", 5): (INTERRUPTED, 0),
    }
    assert grade.created_at == 1.0 and grade.finished_at == 2.0
    with Store(db) as again:  # a run made after the migration is held, and continues the ids
        run_id = again.grades.create_run(
            source="more.csv",
            grader="lexical",
            provider="offline",
            model="lexical",
            judge_label="offline",
            simulated=False,
            prompt_hash="lexical",
            params={},
        )
        assert run_id == 4 and kind_holder(again.conn, "grade", run_id) is not None
