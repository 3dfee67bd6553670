"""Run leases: one process works on a run at a time (issue 19, item 4).

A run's lease names the process that holds it (pid, host) and when it last said it was alive
(``heartbeat``). ``create_run`` writes the lease with the run, in the same transaction; a
``--resume`` takes it with :meth:`LeaseStore.acquire` before it touches the run: a live holder
makes the resume fail (:class:`RunBusy`, exit 2), a stale one — a pid that no longer runs on this
host, or no heartbeat for :data:`STALE_SECONDS` — is taken over, and the caller says so. The
holder beats every :data:`HEARTBEAT_SECONDS` and releases the lease when the run ends.

Opening the store (:meth:`LeaseStore.sweep`) marks a "running" run whose process died
"interrupted": nothing holds it any more, and ``--resume`` continues it.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
import uuid
from dataclasses import dataclass

from quiztui.errors import StoreError

HEARTBEAT_SECONDS = 10.0
STALE_SECONDS = 60.0  # six missed heartbeats: the holder is gone (or frozen)
INTERRUPTED = "interrupted"


class RunBusy(StoreError):
    """Another live process holds the run's lease."""


@dataclass(frozen=True, slots=True)
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


def stale_reason(lease: Lease, now: float, host: str) -> str | None:
    """Why ``lease`` no longer holds (None: its process is alive and beating)."""
    if lease.host == host and not pid_alive(lease.pid):
        return f"pid {lease.pid} is no longer running"
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
        lease = Lease(run_id, os.getpid(), this_host(), uuid.uuid4().hex, now)
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

    def sweep(self) -> list[int]:
        """Mark "running" runs that no live process holds "interrupted"; their ids."""
        query = (
            "SELECT r.id, l.run_id, l.pid, l.host, l.token, l.heartbeat FROM runs r"
            " LEFT JOIN run_leases l ON l.run_id = r.id WHERE r.status = 'running'"
        )
        if not self._orphans(query):
            return []
        self.conn.execute("BEGIN IMMEDIATE")  # re-read under the lock: a resume may be starting
        try:
            orphans = self._orphans(query)
            self.conn.executemany(
                "UPDATE runs SET status = ? WHERE id = ? AND status = 'running'",
                [(INTERRUPTED, run_id) for run_id in orphans],
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return orphans

    def _orphans(self, query: str) -> list[int]:
        now, host = time.time(), this_host()
        orphans = []
        for run_id, lease_run, pid, lease_host, token, heartbeat in self.conn.execute(query):
            if lease_run is None:  # a run of a quiztui before leases, or one that ended in error
                orphans.append(run_id)
            elif stale_reason(Lease(lease_run, pid, lease_host, token, heartbeat), now, host):
                orphans.append(run_id)
        return orphans


__all__ = [
    "HEARTBEAT_SECONDS",
    "INTERRUPTED",
    "STALE_SECONDS",
    "Lease",
    "LeaseStore",
    "RunBusy",
    "pid_alive",
    "stale_reason",
]
