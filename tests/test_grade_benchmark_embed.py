"""The embedding grader at a user's scale (issue 21 T6): bounded batches, vectors cached across
folds. Needs the embed extra (``make test-embed``); skipped cleanly without it."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quiztui.cli import main
from quiztui.embed import embed_available

pytestmark = pytest.mark.skipif(not embed_available(), reason="the embed extra is not installed")

WORDS = (
    "light water sugar root leaf stem oxygen carbon energy cell because makes uses needs heat"
    " moves force mass speed friction surface melts pressure layer charge current circuit"
).split()


class CountingSession:
    """The real onnxruntime session, recording the shape of every batch it is given."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.shapes: list[tuple[int, int]] = []

    def get_inputs(self) -> Any:
        return self._session.get_inputs()

    def get_outputs(self) -> Any:
        return self._session.get_outputs()

    def run(self, names: Any, feeds: dict[str, np.ndarray]) -> Any:
        self.shapes.append(feeds["input_ids"].shape)
        return self._session.run(names, feeds)


def fresh_embedder() -> tuple[Any, CountingSession]:
    from quiztui.embed import load_embedder
    from quiztui.embed.minilm import Embedder

    loaded = load_embedder()
    session = CountingSession(loaded._session)
    return Embedder(session, loaded._tokenizer), session


def long_answers(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(10, 180))) for _ in range(n)]


def test_batches_stay_within_the_token_budget_and_match_one_at_a_time() -> None:
    from quiztui.embed.minilm import MAX_SEQ_LENGTH, TOKEN_BUDGET

    embedder, session = fresh_embedder()
    texts = long_answers(40)
    batched = embedder.encode(texts)
    assert session.shapes and max(w for _, w in session.shapes) <= MAX_SEQ_LENGTH
    assert all(rows * width <= TOKEN_BUDGET for rows, width in session.shapes)
    assert sum(rows for rows, _ in session.shapes) == len(texts)
    single, _ = fresh_embedder()
    one = np.vstack([single.encode([t]) for t in texts[:5]])
    cosines = np.einsum("ij,ij->i", batched[:5], one)
    assert cosines.min() > 0.999  # padding in a batch does not change a vector


def test_vectors_are_cached_by_text() -> None:
    embedder, session = fresh_embedder()
    texts = long_answers(12, seed=1)
    first = embedder.encode([*texts, texts[0]])  # a repeat inside one call is encoded once
    assert embedder.stats.encoded == 12
    calls = len(session.shapes)
    again = embedder.encode(texts[::-1])
    assert len(session.shapes) == calls and embedder.stats.cached == 12
    assert np.array_equal(again[::-1], first[:12]) and np.array_equal(first[12], first[0])


def test_kfold_with_the_embedding_grader_encodes_each_text_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Grading, the same-question neighbours and five folds: each distinct text reaches the
    model once (the answers' vectors for the neighbours come from the cache)."""
    from quiztui.embed import load_embedder

    rng = random.Random(3)
    answers = long_answers(60, seed=2)
    path = tmp_path / "marks.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "reference", "answer", "score"])
        for i, text in enumerate(answers):
            q = i % 3
            w.writerow([f"Question {q}?", f"reference {q} {WORDS[q]}", text, rng.randint(0, 5)])
    stats = load_embedder().stats
    before = (stats.encoded, stats.cached)
    code = main(["grade", "--benchmark", str(path), "--grader", "embedding", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    body = json.loads(out)
    assert body["k"] == 5 and body["neighbour_groups"] == 3
    assert "neighbours" in {r["model"] for r in body["rows"]}
    encoded = stats.encoded - before[0]
    assert encoded <= len(set(answers)) + 3  # every answer and each question's reference
    assert stats.cached - before[1] >= len(answers)  # the neighbours' vectors were cached
