"""Headless vet throughput against the loopback fake server (issue A4).

Runs `quiztui vet QUIZ --no-tui` as a child process against the fake OpenAI-compatible server
(itself a separate process) and prints verdicts/s, requests, peak RSS of the vet process, and the
wall time against the ideal ceil(requests / concurrency) × latency — both for the run alone and
for the whole process (interpreter start-up, imports, the run, the report and the end-of-run lint),
which is what a user waits for. The process is split into start-up (spawn → the run's first
stderr line), run, and post-run (the final progress line → exit), timed from the parent as the
child's stderr lines arrive, and the vet process's CPU time (user + system: the figure a busy
machine disturbs least); "first request" is spawn → the first chat request's arrival at the
fake server (its clock, the same machine's). The package is byte-compiled first (as an installed
wheel is), so a checkout run with PYTHONDONTWRITEBYTECODE does not time the compiler.

    .venv/bin/python bench/vet_throughput.py                      # the scenarios below
    .venv/bin/python bench/vet_throughput.py --questions 400 --latency 0.2   # 1,600 assertions
    .venv/bin/python bench/vet_throughput.py --latency 0.2 --quiz sample_quizzes/opentdb_sample.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fake_server import fake_server  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_QUIZ = REPO.parent / "shared" / "data" / "quizaic_corpus" / "opentrivia.questions.txt"


def run_once(
    quiz: Path, latency: float, batch: int, concurrency: int, stream: bool
) -> dict[str, float]:
    tail: list[str] = []
    with (
        fake_server(
            "--truth-quiz",
            str(quiz),
            "--latency",
            str(latency),
            "--tpr",
            "0.9",
            "--tnr",
            "0.9",
            tail=tail,
        ) as url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env = {
            **os.environ,
            "QUIZTUI_DATA_DIR": tmp,
            "QUIZTUI_CONFIG_DIR": tmp,
            "QUIZTUI_JUDGE_STREAM": "true" if stream else "false",
        }
        env.pop("NO_COLOR", None)
        report = Path(tmp) / "report.json"
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = usage_before.ru_maxrss
        spawned = time.time()
        start = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quiztui",
                "vet",
                str(quiz),
                "--no-tui",
                "--judge",
                "openai-compat",
                "--base-url",
                url,
                "--model",
                "fake-judge",
                "--batch-size",
                str(batch),
                "--concurrency",
                str(concurrency),
                "--format",
                "json",
                "-o",
                str(report),
                "--no-cache",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        first_line = last_progress = None
        lines = []
        for line in proc.stderr:  # timestamped as they arrive (non-tty: one line per 10 %)
            now = time.perf_counter() - start
            lines.append(line)
            first_line = now if first_line is None else first_line
            if " assertions (" in line:
                last_progress = now
        proc.wait()
        wall = time.perf_counter() - start
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the vet process only
        rss_kb = usage_after.ru_maxrss
        cpu = sum(
            getattr(usage_after, f) - getattr(usage_before, f) for f in ("ru_utime", "ru_stime")
        )
        if proc.returncode not in (0, 1):
            raise SystemExit(f"vet failed ({proc.returncode}): {''.join(lines)}")
        summary = json.loads(report.read_text())
    ideal = math.ceil(summary["requests"] / concurrency) * latency
    first_request = next(
        (float(t.rsplit(" ", 1)[1]) - spawned for t in tail if t.startswith("first chat")),
        float("nan"),
    )
    return {
        "first_request_s": first_request,
        "cpu_s": cpu,
        "startup_s": first_line if first_line is not None else float("nan"),
        "post_run_s": wall - last_progress if last_progress is not None else float("nan"),
        "process_ratio": wall / ideal if ideal else float("nan"),
        "assertions": summary["judged"] + summary["unjudged"],
        "judged": summary["judged"],
        "requests": summary["requests"],
        "run_s": summary["elapsed"],
        "process_s": wall,
        "verdicts_per_s": summary["judged"] / summary["elapsed"],
        "peak_rss_mb": max(rss_kb, before) / 1024,
        "ideal_s": ideal,
        "ratio": summary["elapsed"] / ideal if ideal else float("nan"),
    }


def show(label: str, r: dict[str, float]) -> None:
    line = (
        f"{label}: {r['judged']:.0f}/{r['assertions']:.0f} verdicts in {r['run_s']:.2f} s run"
        f" ({r['process_s']:.2f} s process) = {r['verdicts_per_s']:.0f} verdicts/s;"
        f" {r['requests']:.0f} requests; peak RSS {r['peak_rss_mb']:.0f} MB"
    )
    if r["ideal_s"]:
        line += f"; ideal {r['ideal_s']:.2f} s, ratio {r['ratio']:.3f}"
    print(line, flush=True)
    line = (
        f"  process: first request {r['first_request_s']:.2f} s,"
        f" start-up {r['startup_s']:.2f} s, run {r['run_s']:.2f} s,"
        f" post-run {r['post_run_s']:.2f} s; CPU {r['cpu_s']:.2f} s"
    )
    if r["ideal_s"]:
        line += f"; wall ÷ ideal {r['process_ratio']:.2f} (start-up and post-run included)"
    print(line, flush=True)


def synthetic_quiz(questions: int, folder: Path) -> Path:
    """A Quizaic JSON quiz of ``questions`` four-option questions (deterministic)."""
    items = [
        {
            "question": f"Which number follows {i} in the sequence of benchmark question {i}?",
            "responses": [str(i + 1), str(i + 2), str(i + 3), str(i + 4)],
            "correct": str(i + 1),
        }
        for i in range(questions)
    ]
    path = folder / f"synthetic_{questions}.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quiz", type=Path, help="quiz file (default: the opentrivia corpus)")
    p.add_argument(
        "--questions", type=int, help="instead of --quiz: a synthetic quiz of N 4-option questions"
    )
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument(
        "--latency", type=float, action="append", help="seconds per request (repeatable)"
    )
    p.add_argument("--no-stream", action="store_true")
    args = p.parse_args()
    compileall.compile_dir(REPO / "quiztui", quiet=1)  # as installed: no compiling at start-up
    with tempfile.TemporaryDirectory() as tmp:
        scenarios: list[tuple[Path, list[float]]] = []
        if args.questions:
            scenarios.append((synthetic_quiz(args.questions, Path(tmp)), args.latency or [0.2]))
        elif args.quiz:
            scenarios.append((args.quiz, args.latency or [0.0, 0.2]))
        else:  # the yardstick (1,600 assertions at 200 ms), then the corpus if present
            scenarios.append((synthetic_quiz(400, Path(tmp)), [0.2]))
            if DEFAULT_QUIZ.exists():
                scenarios.append((DEFAULT_QUIZ, args.latency or [0.0, 0.2]))
        for quiz, latencies in scenarios:
            if not quiz.exists():
                raise SystemExit(f"{quiz}: not found (needs ../shared/data or --quiz)")
            print(
                f"quiz {quiz.name}, batch {args.batch}, concurrency {args.concurrency},"
                f" {'non-' if args.no_stream else ''}streaming, {os.cpu_count()} CPUs"
            )
            for latency in latencies:
                show(
                    f"latency {latency * 1000:.0f} ms",
                    run_once(quiz, latency, args.batch, args.concurrency, not args.no_stream),
                )


if __name__ == "__main__":
    main()
