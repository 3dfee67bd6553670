"""Verdict cache keyed by judge identity and assertion text.

The judge key hashes everything that changes a judge's answer: provider, model, base URL, the
prompt template text and output-affecting parameters (temperature, max tokens, batch size). Retry
and concurrency settings are left out, and so is whether logprobs were asked for: they do not
change the verdict; an entry keeps the P(true) measured with it (NULL when none was). API keys
are never part of it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping


def judge_key(
    *, provider: str, model: str, base_url: str, prompt: str, params: Mapping[str, object]
) -> str:
    payload = json.dumps(
        {
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "prompt": prompt,
            "params": params,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_key(judge: str, assertion_text: str) -> str:
    return hashlib.sha256(f"{judge}\x00{assertion_text}".encode()).hexdigest()


class VerdictCache:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def get_many(
        self, judge: str, texts: Iterable[str]
    ) -> dict[str, tuple[bool, str, float | None]]:
        """Assertion text → (verdict, reason, p_true) for the texts this judge has answered."""
        keys = {cache_key(judge, t): t for t in texts}
        out: dict[str, tuple[bool, str, float | None]] = {}
        items = list(keys)
        for i in range(0, len(items), 500):
            chunk = items[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for key, verdict, reason, p_true in self._conn.execute(
                f"SELECT key, verdict, reason, p_true FROM cache WHERE key IN ({marks})", chunk
            ):
                out[keys[key]] = (bool(verdict), reason, p_true)
        return out

    def put_many(self, judge: str, items: Iterable[tuple[str, bool, str, float | None]]) -> None:
        """Store (assertion text, verdict, reason, p_true) answers of this judge."""
        now = time.time()
        self._conn.executemany(
            "INSERT OR REPLACE INTO cache(key, verdict, reason, p_true, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            [(cache_key(judge, text), int(v), reason, p, now) for text, v, reason, p in items],
        )
