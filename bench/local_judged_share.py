"""The share of assertions judged (not unjudged) on the sample quiz by a local model, with
structured output and with text replies, and the wall time of each run (issue 18, LO1).

Runs ``quiztui vet`` on ``sample_quizzes/planted_errors.json`` (12 questions, 48 assertions) in
fresh processes against the server at ``QUIZTUI_LOCAL_URL`` with ``QUIZTUI_LOCAL_MODEL``, once with
``judge.structured = "on"`` and once ``"off"``, streamed, in assertion mode, with no re-asks (the
share is the first answer's). ``.ci/test_local.sh bench`` builds or reuses the cached
llama-cpp-python server with Gemma 3 270M and runs this against it.

    QUIZTUI_LOCAL_URL=http://127.0.0.1:8080/v1 QUIZTUI_LOCAL_MODEL=gemma-3-270m \\
        python bench/local_judged_share.py [--max-tokens 768] [--quiz PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(url: str, model: str, quiz: Path, structured: str, max_tokens: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(
            f'[judge]\nprovider = "openai-compat"\nbase_url = "{url}"\nmodel = "{model}"\n'
            f'max_tokens = {max_tokens}\ntimeout = 1800\nstructured = "{structured}"\n'
            f'[vet]\nmax_reasks = 0\n[store]\npath = "{Path(tmp) / "runs.db"}"\n',
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZTUI_")}
        env["QUIZTUI_CONFIG_DIR"] = str(Path(tmp) / "config-dir")
        env["QUIZTUI_LOG_DIR"] = str(Path(tmp) / "log")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "quiztui", "vet", str(quiz), "--no-tui", "--format", "json"]
            + ["--config", str(config)],
            capture_output=True,
            text=True,
            env=env,
        )
        seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"quiztui vet exited {done.returncode}: {done.stderr.strip()[-400:]}")
    report = json.loads(done.stdout)
    return {
        "judged": report["judged"],
        "total": report["judged"] + report["unjudged"],
        "requests": report["requests"],
        "tokens_out": report["tokens_out"],
        "seconds": seconds,
        "progress": done.stderr.strip().splitlines()[-2:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quiz", type=Path, default=ROOT / "sample_quizzes" / "planted_errors.json"
    )
    parser.add_argument("--max-tokens", type=int, default=768)
    args = parser.parse_args()
    url, model = os.environ.get("QUIZTUI_LOCAL_URL"), os.environ.get("QUIZTUI_LOCAL_MODEL")
    if not (url and model):
        raise SystemExit("set QUIZTUI_LOCAL_URL and QUIZTUI_LOCAL_MODEL (.ci/test_local.sh bench)")
    print(f"{model} at {url}; {args.quiz.name}; max_tokens {args.max_tokens}; no re-asks")
    for structured in ("on", "off"):
        got = run(url, model, args.quiz, structured, args.max_tokens)
        share = got["judged"] / got["total"]  # type: ignore[operator]
        print(
            f"structured {structured:3}: judged {got['judged']}/{got['total']} ({share:.0%}),"
            f" {got['requests']} requests, {got['tokens_out']} tokens out,"
            f" wall {got['seconds']:.0f} s",
            flush=True,
        )
        for line in got["progress"]:  # type: ignore[attr-defined]
            print(f"    {line}")


if __name__ == "__main__":
    main()
