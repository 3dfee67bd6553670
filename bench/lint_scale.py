"""Lint at scale: N generated questions written as a CSV, loaded and linted in a fresh process.

Each size runs in its own child process (``quiztui.formats.load_quiz`` then
``quiztui.core.lint.lint_quiz``, as ``quiztui lint`` does), so the peak RSS printed is that
process's own (``os.wait4``). Prints the child's wall time (and of it loading and linting), its CPU
time (user + sys from the same ``wait4``, and loading's and linting's ``process_time``: less
sensitive than wall time to other jobs on a shared machine), peak RSS, the findings per
code and how many of the planted near-duplicate stems L110 found.

The questions look like a trivia bank: a Zipf-distributed vocabulary of made-up words (a few
very common, most rare), stems from a dozen openers, a templated family ("Which element has
the chemical symbol Xx?", stems that share every word but one), numeric and worded options, and
1 % near-duplicates of earlier stems (a grammar word swapped and one letter dropped).

    .venv/bin/python bench/lint_scale.py                     # 5,000 20,000 100,000
    .venv/bin/python bench/lint_scale.py --sizes 20000
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPENERS = [
    "Which {} is the {} of the {}?",
    "What is the {} {} in the {}?",
    "Who wrote the {} about {} and {}?",
    "In which year did the {} {} the {}?",
    "Which of these {} was {} by the {}?",
    "What do you call a {} that {} a {}?",
    "Where is the {} of {} {} found?",
    "How many {} does a {} {} have?",
    "Which {} {} first appeared in {}?",
    "What was the {} of the {} {} called?",
    "Which country is {} {} for its {}?",
    "Who was the first {} to {} the {}?",
]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 10))))
    return sorted(words)


def generate(n: int, seed: int = 17) -> tuple[list[list[str]], set[tuple[int, int]]]:
    """CSV rows (question, correct, three distractors) and the planted near-duplicate pairs."""
    rng = random.Random(seed)
    words = vocabulary(rng, 40_000)
    cum = list(itertools.accumulate(1.0 / (rank + 1) ** 1.05 for rank in range(len(words))))
    rows: list[list[str]] = []
    planted: set[tuple[int, int]] = set()
    for i in range(n):
        if i > 100 and rng.random() < 0.01:
            source = rng.randrange(i)
            stem = rows[source][0]
            if stem.startswith("Which "):
                stem = "What " + stem[len("Which ") :]
            long_words = [w for w in stem.split() if len(w.strip("?")) >= 7]
            if long_words:
                w = rng.choice(long_words).strip("?")
                cut = rng.randrange(2, len(w))
                stem = stem.replace(w, w[:cut] + w[cut + 1 :], 1)
            planted.add((source, i))
        elif rng.random() < 0.05:
            symbol = rng.choice(words)[:2].capitalize() + str(i)
            stem = f"Which element has the chemical symbol {symbol}?"
        else:
            opener = rng.choice(OPENERS)
            fill = rng.choices(words, cum_weights=cum, k=opener.count("{}") + rng.randint(0, 3))
            stem = opener.format(*fill[: opener.count("{}")])
            if len(fill) > opener.count("{}"):
                stem = stem[:-1] + " near the " + " ".join(fill[opener.count("{}") :]) + "?"
        if rng.random() < 0.3:
            base = rng.randint(1, 3000)
            options = [str(base + d) for d in rng.sample(range(-20, 21), 4)]
        else:
            options = [
                " ".join(rng.choices(words, cum_weights=cum, k=rng.randint(1, 3))).title()
                for _ in range(4)
            ]
        if len(set(options)) < 4:
            options = [f"{o} {k}" for k, o in enumerate(options)]
        rows.append([stem, *options])
    return rows, planted


def child(path: str, planted_path: str) -> None:
    from quiztui.core.lint import lint_quiz
    from quiztui.formats import load_quiz

    start, start_cpu = time.perf_counter(), time.process_time()
    quiz = load_quiz(Path(path))
    loaded, loaded_cpu = time.perf_counter(), time.process_time()
    report = lint_quiz(quiz)
    linted, linted_cpu = time.perf_counter(), time.process_time()
    planted = {tuple(p) for p in json.loads(Path(planted_path).read_text())}
    flagged = {
        int(f.question_id[1:]) - 1
        for f in report.findings
        if f.code == "L110" and f.question_id is not None
    }
    later = {j for _, j in planted}
    counts: dict[str, int] = {}
    for f in report.findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    print(
        json.dumps(
            {
                "load_s": loaded - start,
                "lint_s": linted - loaded,
                "load_cpu_s": loaded_cpu - start_cpu,
                "lint_cpu_s": linted_cpu - loaded_cpu,
                "questions": len(quiz.questions),
                "planted": len(later),
                "planted_found": len(later & flagged),
                "counts": dict(sorted(counts.items())),
            }
        )
    )


def run(n: int, tmp: Path) -> None:
    rows, planted = generate(n)
    path = tmp / f"bank{n}.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "correct", "distractor1", "distractor2", "distractor3"])
        writer.writerows(rows)
    planted_path = tmp / f"planted{n}.json"
    planted_path.write_text(json.dumps(sorted(planted)))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(path), str(planted_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child failed for {n} questions (exit {proc.returncode})")
    body = json.loads(out)
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"{n:>7,} questions: wall {wall:5.1f} s (load {body['load_s']:4.1f}, lint"
        f" {body['lint_s']:4.1f}), CPU {cpu:5.1f} s (user {usage.ru_utime:.1f} + sys"
        f" {usage.ru_stime:.1f}; load {body['load_cpu_s']:4.1f}, lint {body['lint_cpu_s']:4.1f}),"
        f" peak RSS {peak_mb:4.0f} MB; L110 found"
        f" {body['planted_found']}/{body['planted']} planted; findings {body['counts']}",
        flush=True,
    )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000, 100_000])
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; each size in a fresh process", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            run(n, Path(tmp))


if __name__ == "__main__":
    main()
