"""A headless vet run sends its first request before it imports what only the end needs, and
does no work for a live view nobody watches.

Start-up is most of a run's overhead against a fast judge (issue 30, ``bench/vet_throughput.py``):
numpy, the report writers, the lint, the other run kinds' tables and the TUI load while the judge
is waited on, not before the first request leaves. Checked in a real process (pytest has imported
everything already), against the loopback fake server, with ``sys.modules`` taken at the moment the
first chat request starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pipeline_helpers import collect, make_quiz

from quiztui.cli import collector
from quiztui.formats import load_quiz
from quiztui.pipeline.events import QuestionScored, VerdictReceived
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.testing.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"

# Not needed to send a request: loaded after it (or never, on the headless path).
DEFERRED = (
    "numpy",
    "scipy",
    "pydantic",
    "rapidfuzz",
    "textual",
    "rich",
    "pypdf",
    "defusedxml",
    # httpx and the standard library's HTTP client: a plain-HTTP judge's first requests and the
    # probe before them go over quiztui's own (providers/plain_http.py)
    "httpx",
    "http.client",
    "urllib.request",
    "email.parser",
    "quiztui.tui",
    "quiztui.report.writers",
    "quiztui.core.lint",
    "quiztui.core.agreement",
    "quiztui.store.reviews",
    "quiztui.store.robustness",
    "quiztui.store.grades",
    "quiztui.assemble.review_desk",
    # the other quiz formats' readers (formats/__init__.py imports the one a file is read with),
    # question mode's parser and the TOML reader (the test's config dir holds no file)
    "quiztui.formats.csv",
    "quiztui.formats.opentdb",
    "quiztui.core.question_mode",
    "tomllib",
    # the TOML writer (config init) and the resource readers with zipfile (the package is on disk)
    "tomli_w",
    "zipfile",
)

SPY = """
import dataclasses, gc, json, sys
import quiztui.cli
from quiztui.core import records
from quiztui.providers.openai_compat import OpenAICompatProvider as P
first, collecting, plain, young = [], [], [], []
attempt = P._attempt
def dataclasses_of(names):
    for name in names:
        for value in list(vars(sys.modules[name]).values()):
            if isinstance(value, type) and value.__module__ == name:
                if "__dataclass_fields__" in value.__dict__ or value in records.pending():
                    yield value
async def spy(self, *args, **kwargs):
    if not first:
        first.append(sorted(sys.modules))
        loaded = [m for m in sys.modules if m.startswith("quiztui.")]
        plain.extend(c.__qualname__ for c in dataclasses_of(loaded) if not records.is_record(c))
        first.append(sorted(c.__qualname__ for c in records.pending()))
    collecting.append(gc.isenabled())
    young.append(gc.get_threshold()[0])
    return await attempt(self, *args, **kwargs)
P._attempt = spy
from quiztui.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "first": first[0], "end": sorted(sys.modules),
                  "plain": plain, "pending": [first[1], [c.__qualname__ for c in records.pending()]],
                  "collecting": collecting, "after": [gc.isenabled(), gc.get_freeze_count()],
                  "young": [young[0], young[-1], gc.get_threshold()[0]]}))
"""


def test_headless_vet_sends_its_first_request_before_the_heavy_imports(tmp_path: Path) -> None:
    quiz = load_quiz(PLANTED)
    report = tmp_path / "report.json"
    with FakeOpenAI.from_quiz(quiz) as server:
        out = subprocess.run(
            [sys.executable, "-c", SPY, "vet", str(PLANTED), "--no-tui"]
            + ["--judge", "openai-compat", "--base-url", server.base_url, "--model", "fake-judge"]
            + ["--format", "json", "-o", str(report), "--no-cache"]
            + ["--batch-size", "8", "--concurrency", "2"],  # requests after the first ones
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["code"] == 1  # planted errors are flagged
    first, end = set(seen["first"]), set(seen["end"])
    assert "quiztui.pipeline.judging" in first
    assert sorted(m for m in DEFERRED if m in first) == []
    assert "httpx" in end  # imported while the judge worked: the answers are read with it
    # A plain-HTTP judge is asked through quiztui's own transport, probed included: httpx's
    # default one (httpcore, h11, anyio: about 20 ms of imports) is never loaded.
    assert sorted(m for m in ("httpcore", "h11", "anyio") if m in end) == []
    # The config and the quiz are plain Python (quiztui/schema.py): pydantic is never loaded.
    assert "pydantic" not in end
    # The deferred work was done all the same, while the judge worked: the report has its lint.
    assert {"numpy", "quiztui.report.writers", "quiztui.core.lint"} <= end
    # Its classes are records (core/records.py): those the first request does not need are made
    # while the judge works, not before it (the end's summaries), and none is left unmade.
    assert seen["plain"] == [], "a dataclass on the path to the first request is not a record"
    at_first, at_end = seen["pending"]
    assert {"RunSummary", "QuestionSummary", "RunFinished"} <= set(at_first)
    assert "Question" not in at_first and at_end == []
    written = json.loads(report.read_text())
    assert written["lint"]["questions"] == len(quiz.questions), "the report's lint ran"
    # The garbage collector is held off while the run starts and back on once its first
    # requests are out (cli/collector.py); main() leaves it as it found it.
    assert seen["collecting"][0] is False and seen["collecting"][-1] is True
    assert seen["after"] == [True, 0]
    # While the run works the young generation is collected less often (a reply makes some
    # 10,000 objects), and as it was once main() returns.
    assert seen["young"] == [700, collector.YOUNG, 700]
    assert written["judged"] == sum(len(q.options) for q in quiz.questions)


async def test_a_run_without_a_live_view_scores_each_question_once_at_the_end_alike(
    tmp_path: Path,
) -> None:
    """A headless run (``VetSettings.live`` False) emits no event per verdict and scores each
    question once, at the end; its verdicts, scores and summary are a live run's."""
    quiz = make_quiz(12, wrong_every=3)
    scored: dict[bool, list[QuestionScored]] = {}
    verdicts: dict[bool, list[VerdictReceived]] = {}
    summaries = {}
    with FakeOpenAI.from_quiz(quiz, tpr=0.9, tnr=0.9) as server:
        for live in (True, False):
            provider = OpenAICompatProvider(base_url=server.base_url, model="fake-judge")
            settings = VetSettings(batch_size=5, concurrency=2, seed=7, live=live)
            events, summaries[live] = await collect(
                quiz, provider, tmp_path / f"{live}.db", settings=settings
            )
            await provider.aclose()
            scored[live] = [e for e in events if isinstance(e, QuestionScored)]
            verdicts[live] = [e for e in events if isinstance(e, VerdictReceived)]
    assert len(scored[True]) > len(quiz.questions)  # live: after every batch that touched one
    assert [e.question_id for e in scored[False]] == [q.id for q in quiz.questions]
    final = {e.question_id: e for e in scored[True]}  # the last score of each question
    assert scored[False] == [final[q.id] for q in quiz.questions]
    assert len(verdicts[True]) == sum(len(q.options) for q in quiz.questions)
    assert verdicts[False] == []
    assert summaries[False].questions == summaries[True].questions
    assert summaries[False].judged == summaries[True].judged == len(verdicts[True])


def test_numpy_starts_no_blas_threads_under_quiztuis_command_line() -> None:
    """OpenBLAS's threads spin about 0.1 s each when numpy is imported (50-90 ms of CPU taken
    from a judge server on the same machine) and do nothing for quiztui's small arrays: the
    command line asks for one, unless the user set ``OPENBLAS_NUM_THREADS`` themselves."""
    import os

    if not Path("/proc/self/task").is_dir():
        import pytest

        pytest.skip("counts threads through /proc")
    code = (
        "import os, quiztui.cli, numpy\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["1", "1"], out.stderr
    mine = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
    )
    assert mine.stdout.split()[0] == "2"
