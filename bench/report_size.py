"""Report writing time and size for large quizzes: every format, 1,000 and 10,000 questions.

Each quiz is vetted for real with the simulated judge (four options per question, every seventh
key wrong, so the table holds all badges and suggestions), into a temporary store; then every
report format is rendered from the run's summary and timed. Prints seconds and MB per format.

    .venv/bin/python bench/report_size.py                  # 1,000 and 10,000 questions
    .venv/bin/python bench/report_size.py --sizes 500 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from pipeline_helpers import collect, make_quiz  # noqa: E402

from quiztui.core.lint import lint_quiz  # noqa: E402
from quiztui.pipeline.events import RunSummary  # noqa: E402
from quiztui.providers.simulated import SimulatedProvider  # noqa: E402
from quiztui.report.extras import ReportExtras  # noqa: E402
from quiztui.report.writers import FORMATS, render_report  # noqa: E402
from quiztui.testing.fake_openai import truth_from_quiz  # noqa: E402


def vetted(n: int, db: Path) -> tuple[RunSummary, ReportExtras, float]:
    quiz = make_quiz(n, wrong_every=7, title=f"bench {n}")
    provider = SimulatedProvider(truth_from_quiz(quiz), tpr=0.9, tnr=0.9, seed=1)
    start = time.perf_counter()
    _, summary = asyncio.run(collect(quiz, provider, db))
    took = time.perf_counter() - start
    return summary, ReportExtras(lint=lint_quiz(quiz)), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=1, help="renders per format (best is shown)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            summary, extras, took = vetted(n, Path(tmp) / f"runs{n}.db")
            print(f"{n:,} questions ({4 * n:,} assertions): simulated vet run {took:.1f} s")
            for fmt in FORMATS:
                best, text = float("inf"), ""
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    text = render_report(summary, fmt, extras)
                    best = min(best, time.perf_counter() - start)
                size = len(text.encode("utf-8")) / 1e6
                print(f"  {fmt:<6} {best:7.3f} s  {size:7.2f} MB")


if __name__ == "__main__":
    main()
