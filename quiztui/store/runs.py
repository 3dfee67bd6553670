"""Runs, their questions, assertions, batches (raw replies), verdicts and usage."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quiztui.core import json_text
from quiztui.core.assertions import Assertion
from quiztui.core.quiz import Quiz
from quiztui.core.records import record
from quiztui.errors import StoreError
from quiztui.store.cache import VerdictCache
from quiztui.store.db import connect
from quiztui.store.leases import LeaseStore

if TYPE_CHECKING:
    from quiztui.store.decisions import DecisionStore
    from quiztui.store.generate import GenerateStore
    from quiztui.store.grades import GradeStore
    from quiztui.store.profiles import ProfileStore
    from quiztui.store.provider_batches import ProviderBatchStore
    from quiztui.store.reviews import ReviewStore
    from quiztui.store.robustness import RobustnessStore


@record(frozen=True)
class RunRecord:
    id: int
    created_at: float
    finished_at: float | None
    status: str
    quiz_path: str | None
    quiz_title: str
    quiz_hash: str
    provider: str
    model: str
    base_url: str
    judge_label: str
    simulated: bool
    judge_key: str
    prompt_hash: str
    seed: int
    batch_size: int
    params: dict[str, Any]
    summary: dict[str, Any] | None


@record(frozen=True)
class StoredVerdict:
    seq: int
    verdict: bool | None
    reason: str
    cached: bool
    unjudged_reason: str | None
    p_true: float | None = None  # from the verdict token's logprobs


@record(frozen=True)
class RunListing:
    """One row of the run history: the run's identity and counts, without its questions."""

    id: int
    created_at: float
    finished_at: float | None
    status: str
    kind: str
    quiz_title: str
    quiz_path: str | None
    quiz_hash: str
    judge_label: str
    model: str
    simulated: bool
    questions: int
    assertions: int
    judged: int  # verdict rows with a verdict
    unjudged: int  # assertions without one (given up on, or never sent)
    has_summary: bool
    badge_counts: dict[str, int]  # from the stored summary ({} without one)
    cost: float | None  # summary["cost"]; None when not stored or no price known
    # never sent: summary["not_run"] (a run stopped at its budget), else assertions with no
    # verdict row at all (a cancelled or interrupted run); core/figures.run_state_text
    not_run: int = 0


class Store:
    """One SQLite file. Every write commits at once, so a killed run loses nothing judged.

    The tables of the other run kinds are reached through properties made on first use, so a vet
    run imports none of their modules (numpy among them) before its first request.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.conn = connect(self.path)
        self.cache = VerdictCache(self.conn)
        self.leases = LeaseStore(self.conn)
        try:  # runs whose process died show "interrupted" from now on (store/leases.py)
            self.leases.sweep()
        except sqlite3.Error:
            pass  # the store is busy: the next opening sweeps

    @cached_property
    def profiles(self) -> ProfileStore:
        from quiztui.store.profiles import ProfileStore

        return ProfileStore(self.conn)

    @cached_property
    def grades(self) -> GradeStore:
        from quiztui.store.grades import GradeStore

        return GradeStore(self.conn)

    @cached_property
    def reviews(self) -> ReviewStore:
        from quiztui.store.reviews import ReviewStore

        return ReviewStore(self.conn)

    @cached_property
    def robustness(self) -> RobustnessStore:
        from quiztui.store.robustness import RobustnessStore

        return RobustnessStore(self.conn)

    @cached_property
    def provider_batches(self) -> ProviderBatchStore:
        from quiztui.store.provider_batches import ProviderBatchStore

        return ProviderBatchStore(self.conn)

    @cached_property
    def decisions(self) -> DecisionStore:  # the review desk's (schema v9)
        from quiztui.store.decisions import DecisionStore

        return DecisionStore(self.conn)

    @cached_property
    def generate(self) -> GenerateStore:  # generate runs (schema v10)
        from quiztui.store.generate import GenerateStore

        return GenerateStore(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # runs -----------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        quiz: Quiz,
        provider: str,
        model: str,
        base_url: str,
        judge_label: str,
        simulated: bool,
        judge_key: str,
        prompt_hash: str,
        seed: int,
        batch_size: int,
        params: dict[str, Any],
        order: Sequence[Assertion],
    ) -> int:
        with self.transaction() as c:
            cur = c.execute(
                """INSERT INTO runs(created_at, status, quiz_path, quiz_title, quiz_hash, provider,
                   model, base_url, judge_label, simulated, judge_key, prompt_hash, seed,
                   batch_size, params_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    time.time(),
                    "running",
                    quiz.source_path,
                    quiz.title,
                    quiz.content_hash(),
                    provider,
                    model,
                    base_url,
                    judge_label,
                    int(simulated),
                    judge_key,
                    prompt_hash,
                    seed,
                    batch_size,
                    json.dumps(params, sort_keys=True),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            c.executemany(
                "INSERT INTO questions VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        run_id,
                        pos,
                        q.id,
                        q.text,
                        json.dumps(list(q.options)),
                        q.key,
                        quiz.truth.get(q.id),
                    )
                    for pos, q in enumerate(quiz.questions)
                ],
            )
            c.executemany(
                "INSERT INTO assertions VALUES (?,?,?,?,?,?)",
                [
                    (run_id, seq, a.question_id, a.option_index, a.text, int(a.keyed))
                    for seq, a in enumerate(order)
                ],
            )
            c.execute("INSERT INTO usage(run_id) VALUES (?)", (run_id,))
            self.leases.write(run_id)  # the run is born held by this process
        return run_id

    def get_run(self, run_id: int) -> RunRecord:
        row = self.conn.execute(
            """SELECT id, created_at, finished_at, status, quiz_path, quiz_title, quiz_hash, provider,
               model, base_url, judge_label, simulated, judge_key, prompt_hash, seed, batch_size,
               params_json, summary_json FROM runs WHERE id = ?""",
            (run_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no run with id {run_id}")
        values = list(row)
        values[11] = bool(values[11])
        values[16] = json.loads(values[16])
        values[17] = json.loads(values[17]) if values[17] else None
        return RunRecord(*values)

    def list_runs(self, limit: int = 50) -> list[RunRecord]:
        ids = [
            r[0]
            for r in self.conn.execute("SELECT id FROM runs ORDER BY id DESC LIMIT ?", (limit,))
        ]
        return [self.get_run(i) for i in ids]

    def run_listings(
        self, limit: int = 200, *, kind: str | None = None, quiz_hash: str | None = None
    ) -> list[RunListing]:
        """The newest ``limit`` runs with their counts, for ``quiztui runs`` and the Runs screen.

        One query; badge counts and cost are read from the stored summary with SQLite's JSON
        functions, so a large summary is never loaded into Python just to be listed.
        """
        where, args = [], []
        if kind is not None:
            where.append("r.kind = ?")
            args.append(kind)
        if quiz_hash is not None:
            where.append("r.quiz_hash = ?")
            args.append(quiz_hash)
        sql = (
            "SELECT r.id, r.created_at, r.finished_at, r.status, r.kind, r.quiz_title,"
            " r.quiz_path, r.quiz_hash, r.judge_label, r.model, r.simulated,"
            " (SELECT COUNT(*) FROM questions q WHERE q.run_id = r.id),"
            " (SELECT COUNT(*) FROM assertions a WHERE a.run_id = r.id),"
            " (SELECT COUNT(*) FROM verdicts v WHERE v.run_id = r.id AND v.verdict IS NOT NULL),"
            " r.summary_json IS NOT NULL,"
            " json_extract(r.summary_json, '$.badge_counts'),"
            " json_extract(r.summary_json, '$.cost'),"
            " COALESCE(json_extract(r.summary_json, '$.not_run'),"
            " (SELECT COUNT(*) FROM assertions a WHERE a.run_id = r.id)"
            " - (SELECT COUNT(*) FROM verdicts v WHERE v.run_id = r.id))"
            " FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
        )
        rows = self.conn.execute(sql + " ORDER BY r.id DESC LIMIT ?", (*args, limit)).fetchall()
        return [
            RunListing(
                id=row[0],
                created_at=row[1],
                finished_at=row[2],
                status=row[3],
                kind=row[4],
                quiz_title=row[5],
                quiz_path=row[6],
                quiz_hash=row[7],
                judge_label=row[8],
                model=row[9],
                simulated=bool(row[10]),
                questions=row[11],
                assertions=row[12],
                judged=row[13],
                unjudged=row[12] - row[13],
                has_summary=bool(row[14]),
                badge_counts={str(k): int(v) for k, v in json.loads(row[15] or "{}").items()},
                cost=None if row[16] is None else float(row[16]),
                not_run=int(row[17] or 0),
            )
            for row in rows
        ]

    def run_questions(self, run_id: int) -> list[tuple[str, str, tuple[str, ...], int]]:
        """(question_id, text, options, key) of a run's questions, in quiz order."""
        return [
            (qid, text, tuple(json.loads(options)), key)
            for qid, text, options, key in self.conn.execute(
                "SELECT question_id, text, options_json, key FROM questions"
                " WHERE run_id = ? ORDER BY position",
                (run_id,),
            )
        ]

    def latest_vet_run(self, quiz_hash: str) -> RunRecord | None:
        """The newest finished vet run of the quiz with this content hash (None: never vetted)."""
        row = self.conn.execute(
            "SELECT id FROM runs WHERE quiz_hash = ? AND kind = 'vet' AND status = 'finished'"
            " AND summary_json IS NOT NULL ORDER BY id DESC LIMIT 1",
            (quiz_hash,),
        ).fetchone()
        return None if row is None else self.get_run(row[0])

    def run_order(self, run_id: int) -> list[tuple[int, str, int, str, bool]]:
        """(seq, question_id, option_index, text, keyed) in run order."""
        return [
            (seq, qid, opt, text, bool(keyed))
            for seq, qid, opt, text, keyed in self.conn.execute(
                "SELECT seq, question_id, option_index, text, keyed FROM assertions"
                " WHERE run_id = ? ORDER BY seq",
                (run_id,),
            )
        ]

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        self.conn.execute(
            "UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
            (status, time.time(), None if summary is None else json_text.compact(summary), run_id),
        )

    def set_status(self, run_id: int, status: str) -> None:
        self.conn.execute("UPDATE runs SET status = ? WHERE id = ?", (status, run_id))

    def set_kind(self, run_id: int, kind: str) -> None:
        """What the run was for: "vet" (default), "calibrate", "panel"."""
        self.conn.execute("UPDATE runs SET kind = ? WHERE id = ?", (kind, run_id))

    def run_kind(self, run_id: int) -> str:
        row = self.conn.execute("SELECT kind FROM runs WHERE id = ?", (run_id,)).fetchone()
        return str(row[0]) if row else "vet"

    def mean_batch_seconds(self, run_id: int) -> float | None:
        """Mean request latency: batch start to finish (retries included), over finished batches."""
        row = self.conn.execute(
            "SELECT AVG(finished_at - started_at) FROM batches"
            " WHERE run_id = ? AND finished_at IS NOT NULL",
            (run_id,),
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    # batches and verdicts ---------------------------------------------------------------------

    def start_batch(self, run_id: int, batch_no: int, prompt: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO batches(run_id, batch_no, started_at, status, prompt) VALUES (?,?,?,?,?)",
            (run_id, batch_no, time.time(), "sent", prompt),
        )
        return int(cur.lastrowid or 0)

    def finish_batch(
        self,
        batch_id: int,
        *,
        status: str,
        raw_reply: str | None,
        error: str | None,
        tokens_in: int,
        tokens_out: int,
        verdicts: Sequence[tuple[int, bool, str, float | None]],
        run_id: int,
        requests: int = 1,
        retries: int = 0,
        cache_judge: str | None = None,
        cache_items: Sequence[tuple[str, bool, str, float | None]] = (),
    ) -> None:
        """Record a batch's raw reply, its verdicts, usage and cache entries in one transaction.

        Verdict rows are (seq, verdict, reason, p_true); cache items (text, verdict, reason, p_true).
        """
        with self.transaction() as c:
            if cache_judge is not None and cache_items:
                self.cache.put_many(cache_judge, cache_items)
            c.execute(
                """UPDATE usage SET requests = requests + ?, retries = retries + ?,
                   tokens_in = tokens_in + ?, tokens_out = tokens_out + ? WHERE run_id = ?""",
                (requests, retries, tokens_in, tokens_out, run_id),
            )
            c.execute(
                """UPDATE batches SET finished_at = ?, status = ?, raw_reply = ?, error = ?,
                   tokens_in = ?, tokens_out = ? WHERE id = ?""",
                (time.time(), status, raw_reply, error, tokens_in, tokens_out, batch_id),
            )
            c.executemany(
                """INSERT OR REPLACE INTO verdicts(run_id, seq, verdict, reason, cached, p_true,
                   batch_id) VALUES (?,?,?,?,0,?,?)""",
                [(run_id, seq, int(v), reason, p, batch_id) for seq, v, reason, p in verdicts],
            )

    def record_cached(
        self, run_id: int, verdicts: Iterable[tuple[int, bool, str, float | None]]
    ) -> None:
        """Verdicts taken from the cache: (seq, verdict, reason, p_true)."""
        with self.transaction() as c:
            c.executemany(
                """INSERT OR REPLACE INTO verdicts(run_id, seq, verdict, reason, cached, p_true)
                   VALUES (?,?,?,?,1,?)""",
                [(run_id, seq, int(v), reason, p) for seq, v, reason, p in verdicts],
            )

    def record_unjudged(self, run_id: int, items: Iterable[tuple[int, str]]) -> None:
        with self.transaction() as c:
            c.executemany(
                """INSERT OR REPLACE INTO verdicts(run_id, seq, verdict, reason, unjudged_reason)
                   VALUES (?,?,NULL,'',?)""",
                [(run_id, seq, reason) for seq, reason in items],
            )

    def verdicts(self, run_id: int) -> dict[int, StoredVerdict]:
        return {
            seq: StoredVerdict(seq, None if v is None else bool(v), reason, bool(cached), unj, p)
            for seq, v, reason, cached, unj, p in self.conn.execute(
                "SELECT seq, verdict, reason, cached, unjudged_reason, p_true FROM verdicts"
                " WHERE run_id = ?",
                (run_id,),
            )
        }

    def usage(self, run_id: int) -> dict[str, int]:
        row = self.conn.execute(
            "SELECT requests, retries, tokens_in, tokens_out FROM usage WHERE run_id = ?", (run_id,)
        ).fetchone()
        return dict(
            zip(
                ("requests", "retries", "tokens_in", "tokens_out"), row or (0, 0, 0, 0), strict=True
            )
        )
