"""Run leases: one process works on a run at a time (issue 19, item 4).

A run's lease names the process that holds it (pid, host) and when it last said it was alive
(``heartbeat``). ``create_run`` writes the lease with the run, in the same transaction; a
``--resume`` takes it with :meth:`LeaseStore.acquire` before it touches the run: a live holder
makes the resume fail (:class:`RunBusy`, exit 2), a stale one — a pid that no longer runs on this
host, or no heartbeat for :data:`STALE_SECONDS` — is taken over, and the caller says so. The
holder beats every :data:`HEARTBEAT_SECONDS` and releases the lease when the run ends.

Opening the store (:meth:`LeaseStore.sweep`) marks a "running" run whose process died
"interrupted": nothing holds it any more, and ``--resume`` continues it.

The kinds kept in their own tables (:data:`KIND_TABLES`: grade, review, robustness and generate
runs, k-fold fits) are held the same way, in ``kind_leases`` keyed by (kind, run id), schema v12:
:func:`create_held` inserts the run's row and its lease in one transaction, :func:`end_held`
records its end (finished, stopped, cancelled, failed) and drops the lease in another. These runs
have no periodic hook to beat from (their pipelines only act on events, which a slow judge can
space further apart than :data:`STALE_SECONDS`), so their lease's ``heartbeat`` is NULL and the
sweep judges it by its pid alone: a holder on this host whose pid is gone is dead; one on another
host (or on Windows, where a pid is not probed) cannot be told and is left "running" (a store in
WAL mode is shared by the processes of one host anyway). Such a run is not resumed: the sweep marks
it "interrupted" and drops its lease.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from quiztui.core.records import record
from quiztui.errors import StoreError

HEARTBEAT_SECONDS = 10.0
STALE_SECONDS = 60.0  # six missed heartbeats: the holder is gone (or frozen)
INTERRUPTED = "interrupted"

# The kinds of run kept outside the ``runs`` table (store/history.py lists them), each in its own
# table with its own id sequence; their leases are in ``kind_leases``, keyed by (kind, run id).
KIND_TABLES: dict[str, str] = {
    "grade": "grade_runs",
    "review": "review_runs",
    "robustness": "robustness_runs",
    "generate": "generate_runs",
    "kfold": "grade_fits",
}


class RunBusy(StoreError):
    """Another live process holds the run's lease."""


@record(frozen=True)
class Lease:
    run_id: int
    pid: int
    host: str
    token: str
    heartbeat: float


def this_host() -> str:
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (True when it cannot be told)."""
    if sys.platform == "win32":  # os.kill(pid, 0) is not a probe there: trust the heartbeat
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    except OSError:
        return True
    return True


def stale_reason(lease: Lease, now: float, host: str, *, beats: bool = True) -> str | None:
    """Why ``lease`` no longer holds (None: its process is alive and beating). ``beats`` False:
    a holder that never beats (:data:`KIND_TABLES`), judged by its pid on this host alone."""
    if lease.host == host and not pid_alive(lease.pid):
        return f"pid {lease.pid} is no longer running"
    if not beats:
        return None
    age = now - lease.heartbeat
    if age > STALE_SECONDS:
        return f"no heartbeat for {age:.0f} s"
    return None


class LeaseStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def _get(self, run_id: int) -> Lease | None:
        row = self.conn.execute(
            "SELECT run_id, pid, host, token, heartbeat FROM run_leases WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return None if row is None else Lease(*row)

    def write(self, run_id: int, now: float | None = None) -> Lease:
        """This process's lease on ``run_id``, replacing any (inside the caller's transaction)."""
        now = time.time() if now is None else now
        lease = Lease(
            run_id, os.getpid(), this_host(), os.urandom(16).hex(), now
        )  # a random token (uuid: 2.5 ms of imports)
        self.conn.execute(
            "INSERT OR REPLACE INTO run_leases(run_id, pid, host, token, acquired_at, heartbeat)"
            " VALUES (?,?,?,?,?,?)",
            (run_id, lease.pid, lease.host, lease.token, now, now),
        )
        return lease

    def acquire(self, run_id: int) -> tuple[Lease, str | None]:
        """Take the run's lease: (the lease, a note when a stale holder was taken over).

        Raises :class:`RunBusy` when a live process holds it. The check and the write are one
        ``BEGIN IMMEDIATE`` transaction, so of two processes resuming at once exactly one wins.
        """
        host, pid = this_host(), os.getpid()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise StoreError(f"no run with id {run_id}")
            now = time.time()
            held = self._get(run_id)
            note = None
            if held is not None and (held.pid, held.host) == (pid, host):
                self.conn.execute("COMMIT")
                return held, None  # ours already (written with the run it was created with)
            if held is not None:
                reason = stale_reason(held, now, host)
                if reason is None:
                    where = "" if held.host == host else f" on {held.host}"
                    raise RunBusy(
                        f"run {run_id} is being resumed by pid {held.pid}{where}"
                        f" (last heartbeat {max(now - held.heartbeat, 0.0):.0f} s ago);"
                        " wait for it to end or stop that process"
                    )
                where = "" if held.host == host else f" on {held.host}"
                note = f"run {run_id}: took over from pid {held.pid}{where} ({reason})"
            lease = self.write(run_id, now)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return lease, note

    def beat(self, lease: Lease) -> bool:
        """Say the holder is alive; False when the lease was taken over meanwhile."""
        cur = self.conn.execute(
            "UPDATE run_leases SET heartbeat = ? WHERE run_id = ? AND token = ?",
            (time.time(), lease.run_id, lease.token),
        )
        return cur.rowcount == 1

    def release(self, lease: Lease) -> None:
        self.conn.execute(
            "DELETE FROM run_leases WHERE run_id = ? AND token = ?", (lease.run_id, lease.token)
        )

    def holder(self, run_id: int) -> Lease | None:
        return self._get(run_id)

    def sweep(self) -> list[tuple[str, int]]:
        """Mark "running" runs of every kind that no live process holds "interrupted": their
        (kind, id). A running run with no lease (made by a quiztui before leases) is orphaned."""
        if not self._orphans():
            return []
        self.conn.execute("BEGIN IMMEDIATE")  # re-read under the lock: a resume may be starting
        try:
            orphans = self._orphans()
            for table, kind, run_id in orphans:
                self.conn.execute(
                    f"UPDATE {table} SET status = ? WHERE id = ? AND status = 'running'",
                    (INTERRUPTED, run_id),
                )
                if table != "runs":  # not resumed: nothing will take its lease over
                    self.conn.execute(
                        "DELETE FROM kind_leases WHERE kind = ? AND run_id = ?", (kind, run_id)
                    )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return [(kind, run_id) for _, kind, run_id in orphans]

    def _orphans(self) -> list[tuple[str, str, int]]:
        """(table, kind, id) of each running run whose holder is gone."""
        now, host = time.time(), this_host()
        orphans = []
        held = (
            "SELECT r.kind, r.id, l.run_id, l.pid, l.host, l.token, l.heartbeat FROM runs r"
            " LEFT JOIN run_leases l ON l.run_id = r.id WHERE r.status = 'running'"
        )
        for kind, run_id, lease_run, pid, lease_host, token, heartbeat in self.conn.execute(held):
            if lease_run is None:  # a run of a quiztui before leases, or one that ended in error
                orphans.append(("runs", str(kind), run_id))
            elif stale_reason(Lease(lease_run, pid, lease_host, token, heartbeat), now, host):
                orphans.append(("runs", str(kind), run_id))
        for kind, table in KIND_TABLES.items():
            rows = self.conn.execute(
                f"SELECT r.id, l.run_id, l.pid, l.host, l.token, l.acquired_at FROM {table} r"
                " LEFT JOIN kind_leases l ON l.kind = ? AND l.run_id = r.id"
                " WHERE r.status = 'running'",
                (kind,),
            )
            for run_id, lease_run, pid, lease_host, token, acquired in rows:
                lease = Lease(lease_run, pid, lease_host, token, acquired)
                if lease_run is None or stale_reason(lease, now, host, beats=False):
                    orphans.append((table, kind, run_id))
        return orphans


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One transaction (or the caller's, when one is open)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create_held(conn: sqlite3.Connection, kind: str, sql: str, params: Sequence[object]) -> int:
    """Insert a run of ``kind`` (one of :data:`KIND_TABLES`) with ``sql`` and this process's lease
    on it, in one transaction: the run's id. Its lease never beats (the module doc)."""
    if kind not in KIND_TABLES:
        raise ValueError(f"no lease table for run kind {kind!r}")
    with _transaction(conn):
        run_id = conn.execute(sql, params).lastrowid
        assert run_id is not None
        conn.execute(
            "INSERT OR REPLACE INTO kind_leases(kind, run_id, pid, host, token, acquired_at,"
            " heartbeat) VALUES (?,?,?,?,?,?,NULL)",
            (kind, run_id, os.getpid(), this_host(), os.urandom(16).hex(), time.time()),
        )
    return run_id


def end_held(
    conn: sqlite3.Connection, kind: str, run_id: int, sql: str, params: Sequence[object]
) -> None:
    """Record a run's end with ``sql`` (its status, summary) and drop its lease, in one
    transaction: a finished, stopped, cancelled or failed run is held by no one."""
    with _transaction(conn):
        conn.execute(sql, params)
        conn.execute("DELETE FROM kind_leases WHERE kind = ? AND run_id = ?", (kind, run_id))


def kind_holder(conn: sqlite3.Connection, kind: str, run_id: int) -> Lease | None:
    """The lease on a run of ``kind`` (its ``heartbeat`` is when it was taken), or None."""
    row = conn.execute(
        "SELECT run_id, pid, host, token, acquired_at FROM kind_leases WHERE kind = ?"
        " AND run_id = ?",
        (kind, run_id),
    ).fetchone()
    return None if row is None else Lease(*row)


__all__ = [
    "HEARTBEAT_SECONDS",
    "INTERRUPTED",
    "KIND_TABLES",
    "STALE_SECONDS",
    "Lease",
    "LeaseStore",
    "RunBusy",
    "create_held",
    "end_held",
    "kind_holder",
    "pid_alive",
    "stale_reason",
]
