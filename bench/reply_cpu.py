"""The client's CPU per streamed reply: the OpenAI-compatible provider alone, one request at a
time, against the loopback fake server (its own process, no latency).

A headless run's rounds come back together and are read one after another on one core, so this
figure, times the concurrency, is how far a round's replies spread (``docs/speed.md``). Each
request is a real judge batch (20 assertions, the packaged prompt, logprobs, the verdict schema);
the reply's text and logprobs go to callbacks that keep them, as the pipeline's do.

    .venv/bin/python bench/reply_cpu.py              # 160 replies, three times
    .venv/bin/python bench/reply_cpu.py --replies 400
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fake_server import fake_server  # noqa: E402
from vet_throughput import synthetic_quiz  # noqa: E402

from quiztui.core.assertions import batches, decompose  # noqa: E402
from quiztui.core.estimate import render_judge_batch  # noqa: E402
from quiztui.core.verdicts import verdict_schema  # noqa: E402
from quiztui.formats import load_quiz  # noqa: E402
from quiztui.pipeline.prompts import load_prompt, prompt_for_mode  # noqa: E402
from quiztui.providers.base import ChatRequest  # noqa: E402
from quiztui.providers.openai_compat import OpenAICompatProvider  # noqa: E402


def requests(quiz_path: Path) -> list[ChatRequest]:
    prompt = load_prompt(prompt_for_mode("assertion"))
    out = []
    for batch in batches(decompose(load_quiz(quiz_path)), 20):
        user, ids = render_judge_batch(prompt.user, batch)
        out.append(
            ChatRequest(
                messages=(("system", prompt.system), ("user", user)),
                temperature=0.0,
                max_tokens=2048,
                logprobs=True,
                response_schema=verdict_schema(ids),
            )
        )
    return out


async def measure(url: str, asked: list[ChatRequest], replies: int) -> list[float]:
    judge = OpenAICompatProvider(base_url=url, model="fake-judge", concurrency=1)
    texts: list[str] = []
    tokens: list[object] = []
    for request in asked[:5]:  # connections, first-use costs
        await judge.complete(request, on_text=texts.append, on_logprobs=tokens.extend)
    out = []
    for _ in range(3):
        start = time.process_time()
        for n in range(replies):
            request = asked[n % len(asked)]
            await judge.complete(request, on_text=texts.append, on_logprobs=tokens.extend)
        out.append((time.process_time() - start) / replies * 1000)
        texts.clear()
        tokens.clear()
    await judge.aclose()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replies", type=int, default=160)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        quiz = synthetic_quiz(400, Path(tmp))
        asked = requests(quiz)
        with fake_server("--truth-quiz", str(quiz), "--latency", "0", tail=[]) as url:
            per_reply = asyncio.run(measure(url, asked, args.replies))
    print(
        f"{args.replies} streamed replies of 20 verdicts with logprobs, one at a time: client CPU"
        f" per reply {min(per_reply):.2f} ms (three passes: "
        + ", ".join(f"{ms:.2f}" for ms in per_reply)
        + " ms)"
    )


if __name__ == "__main__":
    main()
