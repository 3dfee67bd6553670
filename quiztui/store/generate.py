"""Generate runs in the run store (schema v10): the document, the judge, each pair generated and
the run's counts, so ``quiztui runs`` lists them beside every other kind of run. The pairs
themselves are written to the run's output file; the store keeps what was asked and answered."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from quiztui.store.leases import create_held, end_held


class GenerateStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create_run(
        self,
        *,
        document: str,
        subject: str,
        output: str,
        judge_label: str,
        model: str,
        simulated: bool,
    ) -> int:
        return create_held(
            self.conn,
            "generate",
            "INSERT INTO generate_runs (created_at, status, document, subject, output,"
            " judge_label, model, simulated) VALUES (?, 'running', ?, ?, ?, ?, ?, ?)",
            (time.time(), document, subject, output, judge_label, model, int(simulated)),
        )

    def record_pair(
        self, run_id: int, n: int, question: str, answer: str, context_status: str
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO generate_pairs (run_id, n, question, answer, context_status)"
            " VALUES (?, ?, ?, ?, ?)",
            (run_id, n, question, answer, context_status),
        )

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        end_held(
            self.conn,
            "generate",
            run_id,
            "UPDATE generate_runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
            (status, time.time(), json.dumps(summary) if summary is not None else None, run_id),
        )

    def pairs(self, run_id: int) -> list[tuple[int, str, str, str]]:
        """(n, question, answer, context status) of each pair, in order."""
        return self.conn.execute(
            "SELECT n, question, answer, context_status FROM generate_pairs WHERE run_id = ?"
            " ORDER BY n",
            (run_id,),
        ).fetchall()
