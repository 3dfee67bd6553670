"""The soak of bench/soak.py at a small size: with 10 % faults of every kind no assertion is lost.

Memory and time are the bench's business (bench/soak.py prints them); this checks what must hold
at any size: every assertion ends with a right verdict or unjudged with a reason, in the store and
in the events, and the counts agree with the summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from soak import CHECKPOINTS, soak  # noqa: E402


async def test_soak_with_a_tenth_of_requests_faulted_loses_no_assertion(tmp_path: Path) -> None:
    result = await soak(2_000, fault_rate=0.1, batch_size=20, concurrency=8, db_dir=tmp_path)
    s = result.summary
    assert result.problems == []
    assert s.status == "finished" and s.judged + s.unjudged == 2_000
    assert result.stored["rows"] == result.stored["distinct_seqs"] == 2_000
    assert result.stored["judged"] == s.judged
    assert result.stored["unjudged_with_reason"] == s.unjudged
    assert result.stored["unjudged_without_reason"] == 0
    assert result.wrong == 0
    assert result.events_final["verdict"] == s.judged
    assert result.events_final["unjudged"] == s.unjudged
    # The faults really happened, of several kinds, and the pipeline recovered from them.
    assert sum(result.faults.values()) > 0 and len(result.faults) >= 3
    assert s.retries > 0 and s.reasked > 0
    assert [c.fraction for c in result.checkpoints] == list(CHECKPOINTS)
    assert [c.done for c in result.checkpoints] == sorted(c.done for c in result.checkpoints)


def test_fake_server_log_limit_keeps_the_newest_requests_and_counts_every_fault() -> None:
    """What lets the soak run in-process: the fake's log is bounded, its fault counts are not."""
    import httpx

    from quiztui.testing.fake_openai import FakeOpenAI

    body = {"model": "fake-judge", "messages": [{"role": "user", "content": "hello"}]}
    with FakeOpenAI(log_limit=3, retry_after=0) as server:
        server.inject("500", times=2)
        server.inject("429")
        with httpx.Client(base_url=server.base_url) as client:
            statuses = [client.post("/chat/completions", json=body).status_code for _ in range(6)]
        log = server.requests
    assert statuses == [500, 500, 429, 200, 200, 200]
    assert [r.index for r in log] == [3, 4, 5]  # the three newest
    assert server.fault_counts == {"500": 2, "429": 1}
