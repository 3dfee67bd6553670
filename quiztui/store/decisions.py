"""The review desk's decisions in the run store (schema v9).

Every decision is a row; the newest row for a question's content hash is the one in force, so a
changed mind is a new row and the history stays. Lookups go by content hash: a later run of the
same quiz (or the quiz reopened) finds its decisions whatever the run.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable

from quiztui.core.decisions import Decision

_COLUMNS = "question_id, question_hash, action, key, option, note, run_id, decided_at"
_CHUNK = 500  # hashes per IN (...) query, below SQLite's variable limit


def _decision(row: tuple[object, ...]) -> Decision:
    qid, qhash, action, key, option, note, run_id, decided_at = row
    return Decision(
        question_id=str(qid),
        question_hash=str(qhash),
        action=str(action),
        key=int(key),  # type: ignore[call-overload]
        option=None if option is None else int(option),  # type: ignore[call-overload]
        note=str(note),
        run_id=None if run_id is None else int(run_id),  # type: ignore[call-overload]
        decided_at=float(decided_at),  # type: ignore[arg-type]
    )


class DecisionStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def record(self, decision: Decision, quiz_hash: str) -> Decision:
        """Store ``decision`` (stamped now when it carries no time); returns what was stored."""
        decided_at = decision.decided_at or time.time()
        run_id = decision.run_id
        if (
            run_id is not None
            and not self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
        ):
            run_id = None  # a run of another store (or deleted): keep the decision, not the link
        self.conn.execute(
            "INSERT INTO decisions (decided_at, run_id, quiz_hash, question_id, question_hash,"
            " action, key, option, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                decided_at,
                run_id,
                quiz_hash,
                decision.question_id,
                decision.question_hash,
                decision.action,
                decision.key,
                decision.option,
                decision.note,
            ),
        )
        return Decision(
            question_id=decision.question_id,
            question_hash=decision.question_hash,
            action=decision.action,
            key=decision.key,
            option=decision.option,
            note=decision.note,
            run_id=run_id,
            decided_at=decided_at,
        )

    def latest(self, question_hashes: Iterable[str]) -> dict[str, Decision]:
        """Content hash → the newest decision about a question with that hash."""
        wanted = list(dict.fromkeys(question_hashes))
        out: dict[str, Decision] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT {_COLUMNS} FROM decisions WHERE id IN (SELECT MAX(id) FROM decisions"
                f" WHERE question_hash IN ({marks}) GROUP BY question_hash)",
                chunk,
            ).fetchall()
            for row in rows:
                decision = _decision(row)
                out[decision.question_hash] = decision
        return out

    def for_run(self, run_id: int) -> list[Decision]:
        """Every decision made while looking at run ``run_id``, oldest first."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
        return [_decision(row) for row in rows]

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0])
