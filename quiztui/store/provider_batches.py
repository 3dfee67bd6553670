"""Provider batches (schema v7): the OpenAI / Anthropic batches a run submitted, and their requests.

A row is written the moment the provider accepts a batch, with the content-addressed custom_id of
every request in it, so a run stopped between submit and collect finds its batch again on resume
instead of paying for it twice. Results are stored when the batch is collected; a resumed run that
re-issues a request already collected is answered from here without asking the provider again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quiztui.core.provider_batch import BatchItemResult

COLLECTED = "collected"  # our status once the results are stored (the provider's is kept apart)


@dataclass(frozen=True, slots=True)
class ProviderBatchRecord:
    id: int  # our row id
    run_id: int
    api: str  # "openai" | "anthropic"
    batch_id: str  # the provider's id
    status: str  # the provider's status at the last poll, or "collected"
    total: int
    completed: int
    failed: int
    created_at: float
    updated_at: float
    collected_at: float | None

    @property
    def pending(self) -> bool:
        """Submitted and not yet collected: its results are still at the provider."""
        return self.collected_at is None


_COLUMNS = (
    "id, run_id, api, batch_id, status, total, completed, failed, created_at, updated_at,"
    " collected_at"
)


class ProviderBatchStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def add(
        self, run_id: int, api: str, batch_id: str, status: str, custom_ids: Sequence[str]
    ) -> ProviderBatchRecord:
        """Record a batch the provider has just accepted, with its requests in submit order."""
        now = time.time()
        self.conn.execute("BEGIN")
        try:
            cur = self.conn.execute(
                "INSERT INTO provider_batches(run_id, api, batch_id, status, total, created_at,"
                " updated_at) VALUES (?,?,?,?,?,?,?)",
                (run_id, api, batch_id, status, len(custom_ids), now, now),
            )
            row_id = int(cur.lastrowid or 0)
            self.conn.executemany(
                "INSERT INTO provider_batch_requests(batch, position, custom_id) VALUES (?,?,?)",
                [(row_id, pos, cid) for pos, cid in enumerate(custom_ids)],
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return self.get(row_id)

    def get(self, row_id: int) -> ProviderBatchRecord:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM provider_batches WHERE id = ?", (row_id,)
        ).fetchone()
        return ProviderBatchRecord(*row)

    def update(self, row_id: int, status: str, completed: int, failed: int) -> None:
        self.conn.execute(
            "UPDATE provider_batches SET status = ?, completed = ?, failed = ?, updated_at = ?"
            " WHERE id = ?",
            (status, completed, failed, time.time(), row_id),
        )

    def record_results(self, row_id: int, results: Iterable[BatchItemResult]) -> None:
        """Store every request's outcome and mark the batch collected, in one transaction."""
        now = time.time()
        items = list(results)
        failed = sum(r.error is not None for r in items)
        self.conn.execute("BEGIN")
        try:
            self.conn.executemany(
                "UPDATE provider_batch_requests SET state = ?, text = ?, tokens_in = ?,"
                " tokens_out = ?, finish_reason = ?, error = ? WHERE batch = ? AND custom_id = ?",
                [
                    (
                        "failed" if r.error is not None else "succeeded",
                        r.text,
                        r.tokens_in,
                        r.tokens_out,
                        r.finish_reason,
                        r.error,
                        row_id,
                        r.custom_id,
                    )
                    for r in items
                ],
            )
            self.conn.execute(
                "UPDATE provider_batches SET status = ?, completed = ?, failed = ?,"
                " updated_at = ?, collected_at = ? WHERE id = ?",
                (COLLECTED, len(items) - failed, failed, now, now, row_id),
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def for_run(self, run_id: int) -> list[ProviderBatchRecord]:
        """The run's batches in submit order."""
        return [
            ProviderBatchRecord(*row)
            for row in self.conn.execute(
                f"SELECT {_COLUMNS} FROM provider_batches WHERE run_id = ? ORDER BY id", (run_id,)
            )
        ]

    def pending(self) -> list[ProviderBatchRecord]:
        """Every batch, of any run, that was submitted and not collected."""
        return [
            ProviderBatchRecord(*row)
            for row in self.conn.execute(
                f"SELECT {_COLUMNS} FROM provider_batches WHERE collected_at IS NULL ORDER BY id"
            )
        ]

    def custom_ids(self, row_id: int) -> list[str]:
        return [
            str(r[0])
            for r in self.conn.execute(
                "SELECT custom_id FROM provider_batch_requests WHERE batch = ? ORDER BY position",
                (row_id,),
            )
        ]

    def results(self, row_id: int) -> list[BatchItemResult]:
        """The stored outcomes of a collected batch (requests still pending are left out)."""
        return [
            BatchItemResult(cid, text or "", t_in, t_out, finish, error)
            for cid, text, t_in, t_out, finish, error in self.conn.execute(
                "SELECT custom_id, text, tokens_in, tokens_out, finish_reason, error"
                " FROM provider_batch_requests WHERE batch = ? AND state != 'pending'"
                " ORDER BY position",
                (row_id,),
            )
        ]
