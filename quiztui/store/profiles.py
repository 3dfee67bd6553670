"""Judge profiles (calibration results) in the run store."""

from __future__ import annotations

import sqlite3
import time

from quiztui.core.calibration import Confusion, JudgeProfile

_COLUMNS = (
    "id, created_at, provider, model, prompt_hash, batch_size, mode, simulated, gold, questions,"
    " tp, fn, tn, fp, unjudged, requests, tokens_in, tokens_out, cost, latency, wall_time,"
    " interval_method, run_id"
)


def _from_row(row: tuple) -> JudgeProfile:  # type: ignore[type-arg]
    (
        ident,
        created_at,
        provider,
        model,
        prompt_hash,
        batch_size,
        mode,
        simulated,
        gold,
        questions,
        tp,
        fn,
        tn,
        fp,
        unjudged,
        requests,
        tokens_in,
        tokens_out,
        cost,
        latency,
        wall_time,
        method,
        run_id,
    ) = row
    return JudgeProfile(
        provider=provider,
        model=model,
        prompt_hash=prompt_hash,
        batch_size=batch_size,
        mode=mode,
        confusion=Confusion(tp, fn, tn, fp, unjudged),
        gold=gold,
        questions=questions,
        simulated=bool(simulated),
        requests=requests,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost,
        latency=latency,
        wall_time=wall_time,
        interval_method=method,
        run_id=run_id,
        id=ident,
        created_at=created_at,
    )


class ProfileStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def save(self, p: JudgeProfile) -> int:
        c = p.confusion
        cur = self.conn.execute(
            f"INSERT INTO profiles({_COLUMNS}) VALUES ({','.join('?' * 23)})",
            (
                None,
                p.created_at or time.time(),
                p.provider,
                p.model,
                p.prompt_hash,
                p.batch_size,
                p.mode,
                int(p.simulated),
                p.gold,
                p.questions,
                c.tp,
                c.fn,
                c.tn,
                c.fp,
                c.unjudged,
                p.requests,
                p.tokens_in,
                p.tokens_out,
                p.cost,
                p.latency,
                p.wall_time,
                p.interval_method,
                p.run_id,
            ),
        )
        return int(cur.lastrowid or 0)

    def get(self, profile_id: int) -> JudgeProfile | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM profiles WHERE id = ?", (profile_id,)
        ).fetchone()
        return _from_row(row) if row else None

    def list(self, limit: int = 200) -> list[JudgeProfile]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM profiles ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [_from_row(r) for r in rows]

    def match(
        self, *, provider: str, model: str, prompt_hash: str, batch_size: int, mode: str
    ) -> JudgeProfile | None:
        """The newest profile of exactly this judge set-up."""
        row = self.conn.execute(
            f"""SELECT {_COLUMNS} FROM profiles WHERE provider = ? AND model = ? AND prompt_hash = ?
                AND batch_size = ? AND mode = ? ORDER BY id DESC LIMIT 1""",
            (provider, model, prompt_hash, batch_size, mode),
        ).fetchone()
        return _from_row(row) if row else None
