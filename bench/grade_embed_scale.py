"""The embedding grader on a user's file of 2,500 short answers, as ``--fit kfold`` grades it.

Generates (seeded) 2,500 marked answers of 10-180 words to 25 questions, writes them as a CSV,
and runs ``quiztui grade --benchmark FILE --grader embedding --fit kfold`` in this process
(grading every answer once, the same-question neighbour similarities from the cached vectors,
5 folds, the calibration saved). Prints answers graded, sentences encoded per second over the
grading pass, the whole command's wall time, and the process's peak RSS (ru_maxrss). Needs the
embed extra.

    .venv/bin/python bench/grade_embed_scale.py [--answers 2500] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WORDS = (
    "the a plant cell energy light water sugar glucose root leaf stem oxygen carbon dioxide"
    " because when which makes uses needs into from through chlorophyll sun heat moves"
    " force mass speed friction gravity surface ice film melts pressure slippery layer"
    " molecule atom electron bond charge current circuit battery resistance voltage wire"
    " cools expands contracts reflects absorbs gives takes produces stores releases is are"
    " not very more less than both each other so then also however therefore example"
).split()


def answers(n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """(question, reference, answer, mark 0-5): 25 questions, answers of 10-180 words whose
    mark grows with how many reference words they reuse."""
    rng = random.Random(seed)
    questions = []
    for q in range(25):
        reference = " ".join(rng.choices(WORDS, k=rng.randint(8, 20)))
        questions.append((f"Question {q + 1}: explain {rng.choice(WORDS)}.", reference))
    out = []
    for i in range(n):
        question, reference = questions[i % len(questions)]
        length = rng.randint(10, 180)
        share = rng.random()
        ref_words = reference.split()
        words = [
            rng.choice(ref_words) if rng.random() < share else rng.choice(WORDS)
            for _ in range(length)
        ]
        mark = round(min(5.0, max(0.0, 5 * share + rng.gauss(0, 0.6))) * 2) / 2
        out.append((question, reference, " ".join(words), f"{mark:g}"))
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from quiztui.embed import embed_available

    if not embed_available():
        print("skipped: the embed extra is not installed (pip install 'quiztui[embed]')")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["QUIZTUI_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["QUIZTUI_CONFIG_DIR"] = str(Path(tmp) / "config")
        path = Path(tmp) / "marks.csv"
        rows = answers(args.answers, args.seed)
        with path.open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["question", "reference", "answer", "score"])
            w.writerows(rows)
        words = [len(r[2].split()) for r in rows]
        print(
            f"{len(rows)} answers, {min(words)}-{max(words)} words (mean {sum(words) / len(words):.0f})"
            f", 25 questions; start RSS {peak_rss_mb():.0f} MB"
        )
        from quiztui.cli import main as cli
        from quiztui.embed import load_embedder

        started = time.perf_counter()
        embedder = load_embedder()
        loaded = time.perf_counter() - started
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli(
                ["grade", "--benchmark", str(path), "--grader", "embedding", "--format", "json"]
            )
        wall = time.perf_counter() - started
        if code != 0:
            print(err.getvalue())
            return code
        stats = embedder.stats
        print(f"model load {loaded:.2f} s")
        print(
            f"encoded {stats.encoded} sentences ({stats.cached} from the cache) in"
            f" {stats.seconds:.1f} s = {stats.encoded / stats.seconds:.1f} sentences/s"
        )
        print(f"grade --fit kfold wall time {wall:.1f} s for {len(rows)} answers")
        print(f"peak RSS {peak_rss_mb():.0f} MB")
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"load average {load} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
