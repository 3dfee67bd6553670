"""Grade runs and their outcomes (per-fact scores included) in the run store."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from typing import Any

from quiztui.core.grading import FactScore, GradeItem, GradeOutcome
from quiztui.store.leases import create_held, end_held


@dataclass(frozen=True, slots=True)
class GradeRunRecord:
    id: int
    created_at: float
    finished_at: float | None
    status: str
    source: str | None
    grader: str
    provider: str
    model: str
    judge_label: str
    simulated: bool
    summary: dict[str, Any] | None
    benchmark: dict[str, Any] | None


_RUN_COLUMNS = (
    "id, created_at, finished_at, status, source, grader, provider, model, judge_label,"
    " simulated, summary_json, benchmark_json"
)


class GradeStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.cache = GradeCache(conn)

    def create_run(
        self,
        *,
        source: str | None,
        grader: str,
        provider: str,
        model: str,
        judge_label: str,
        simulated: bool,
        prompt_hash: str,
        params: dict[str, Any],
    ) -> int:
        return create_held(
            self.conn,
            "grade",
            "INSERT INTO grade_runs (created_at, status, source, grader, provider, model,"
            " judge_label, simulated, prompt_hash, params_json)"
            " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                source,
                grader,
                provider,
                model,
                judge_label,
                int(simulated),
                prompt_hash,
                json.dumps(params),
            ),
        )

    def record(
        self, run_id: int, seq: int, split: str, item: GradeItem, outcome: GradeOutcome
    ) -> None:
        facts = json.dumps([asdict(f) for f in outcome.facts]) if outcome.facts else None
        self.conn.execute(
            "INSERT OR REPLACE INTO grades (run_id, seq, split, item_id, question, reference,"
            " candidate, human, raw, label, reasoning, unscored, facts_json, reply, attempts,"
            " tokens_in, tokens_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                seq,
                split,
                item.id,
                item.question,
                item.reference,
                item.candidate,
                item.human,
                outcome.raw,
                outcome.label,
                outcome.reasoning,
                outcome.unscored,
                facts,
                outcome.reply,
                outcome.attempts,
                outcome.tokens_in,
                outcome.tokens_out,
            ),
        )

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        end_held(
            self.conn,
            "grade",
            run_id,
            "UPDATE grade_runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
            (status, time.time(), json.dumps(summary) if summary is not None else None, run_id),
        )

    def set_benchmark(self, run_id: int, result: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE grade_runs SET benchmark_json = ? WHERE id = ?", (json.dumps(result), run_id)
        )

    def get_run(self, run_id: int) -> GradeRunRecord | None:
        row = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM grade_runs WHERE id = ?", (run_id,)
        ).fetchone()
        return _run(row) if row else None

    def list_runs(self, limit: int = 50) -> list[GradeRunRecord]:
        rows = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM grade_runs ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [_run(r) for r in rows]

    def outcomes(self, run_id: int) -> list[tuple[str, GradeItem, GradeOutcome]]:
        """(split, item, outcome) of a run, in grading order."""
        rows = self.conn.execute(
            "SELECT r.grader, g.split, g.item_id, g.question, g.reference, g.candidate, g.human,"
            " g.raw, g.label, g.reasoning, g.unscored, g.facts_json, g.reply, g.attempts,"
            " g.tokens_in, g.tokens_out FROM grades g JOIN grade_runs r ON r.id = g.run_id"
            " WHERE g.run_id = ? ORDER BY g.split, g.seq",
            (run_id,),
        ).fetchall()
        out = []
        for (
            grader,
            split,
            item_id,
            question,
            reference,
            candidate,
            human,
            raw,
            label,
            reasoning,
            why,
            facts_json,
            reply,
            attempts,
            tokens_in,
            tokens_out,
        ) in rows:
            facts = tuple(FactScore(**f) for f in json.loads(facts_json)) if facts_json else ()
            item = GradeItem(item_id, question, reference, candidate, human)
            outcome = GradeOutcome(
                item_id,
                grader,
                raw,
                label,
                reasoning,
                why,
                facts,
                attempts,
                tokens_in,
                tokens_out,
                reply,
            )
            out.append((split, item, outcome))
        return out


def _run(row: tuple[Any, ...]) -> GradeRunRecord:
    (
        ident,
        created,
        finished,
        status,
        source,
        grader,
        provider,
        model,
        label,
        simulated,
        summary,
        benchmark,
    ) = row
    return GradeRunRecord(
        ident,
        created,
        finished,
        status,
        source,
        grader,
        provider,
        model,
        label,
        bool(simulated),
        json.loads(summary) if summary else None,
        json.loads(benchmark) if benchmark else None,
    )


# The grade cache: a scored reply of an LLM grader, by grader identity and item. Created on first
# use (CREATE TABLE IF NOT EXISTS) rather than by a numbered migration: a store without it simply
# has nothing cached, and one that has it opens in an older quiztui unchanged.
GRADE_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS grade_cache (
    key TEXT PRIMARY KEY,
    outcome_json TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


class GradeCache:
    """Scored outcomes of LLM graders, keyed by ``grade_cache_key`` (never an unscored one: a
    reply that could not be read is asked again next time)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._ready = False

    def _table(self) -> None:
        if not self._ready:
            self.conn.execute(GRADE_CACHE_SCHEMA)
            self._ready = True

    def get(self, key: str, item_id: str) -> GradeOutcome | None:
        self._table()
        row = self.conn.execute(
            "SELECT outcome_json FROM grade_cache WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        d = json.loads(row[0])
        return GradeOutcome(
            item_id,
            d["grader"],
            d["raw"],
            d["label"],
            d["reasoning"],
            None,
            tuple(FactScore(**f) for f in d["facts"]),
            0,  # no request was made for it
            0,
            0,
            d["reply"],
        )

    def put(self, key: str, outcome: GradeOutcome) -> None:
        if outcome.raw is None:
            return
        self._table()
        body = {
            "grader": outcome.grader,
            "raw": outcome.raw,
            "label": outcome.label,
            "reasoning": outcome.reasoning,
            "facts": [asdict(f) for f in outcome.facts],
            "reply": outcome.reply,
        }
        self.conn.execute(
            "INSERT OR REPLACE INTO grade_cache (key, outcome_json, created_at) VALUES (?, ?, ?)",
            (key, json.dumps(body), time.time()),
        )


def grade_cache_key(judge: str, item: GradeItem) -> str:
    """The judge (``store.cache.judge_key`` over provider, model, URL, prompts and parameters)
    and the item's question, references and candidate."""
    import hashlib

    payload = json.dumps([judge, item.question, list(item.references), item.candidate])
    return hashlib.sha256(payload.encode()).hexdigest()
