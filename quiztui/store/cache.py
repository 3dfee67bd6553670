"""Verdict cache keyed by judge identity and assertion text.

The judge key hashes everything that changes a judge's answer: provider, model, base URL, the
prompt template text and output-affecting parameters (temperature, max tokens, batch size). Retry
and concurrency settings are left out. API keys are never part of it.
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

    def get_many(self, judge: str, texts: Iterable[str]) -> dict[str, tuple[bool, str]]:
        keys = {cache_key(judge, t): t for t in texts}
        out: dict[str, tuple[bool, str]] = {}
        items = list(keys)
        for i in range(0, len(items), 500):
            chunk = items[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for key, verdict, reason in self._conn.execute(
                f"SELECT key, verdict, reason FROM cache WHERE key IN ({marks})", chunk
            ):
                out[keys[key]] = (bool(verdict), reason)
        return out

    def put_many(self, judge: str, items: Iterable[tuple[str, bool, str]]) -> None:
        now = time.time()
        self._conn.executemany(
            "INSERT OR REPLACE INTO cache(key, verdict, reason, created_at) VALUES (?, ?, ?, ?)",
            [(cache_key(judge, text), int(v), reason, now) for text, v, reason in items],
        )
