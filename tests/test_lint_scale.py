"""Lint at scale keeps its findings (issue 17 L4): the rewrite for speed and memory (one pass over
the questions, L110's index in numpy, L111 from pairs of topic words) changes no finding.

The reference findings in ``tests/lint_golden/`` were written by the lint as it was before that
rewrite (commit a9c08ef): every finding of a generated 5,000-question bank (``bench/lint_scale.py``'s
generator, written as CSV and loaded as ``quiztui lint`` loads it), and a digest with counts per
code of the findings on the Open Trivia DB + MMLU validation items in ``../shared/data`` (their
text stays there). Rewrite them (``python tests/test_lint_scale.py --write``) only when a rule is
meant to change, and say so in the commit.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import itertools
import json
import random
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import REPO, shared_data

from quiztui.core.lint import index_pairs, lint_quiz
from quiztui.core.lint_items import _normalise
from quiztui.core.quiz import Question, Quiz
from quiztui.core.textnorm import _comparable, _repeat_key, repeat_key, simple_form
from quiztui.formats import load_quiz

GOLDEN = REPO / "tests" / "lint_golden"
BANK_SIZE = 5_000


def bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated_bank(directory: Path) -> Path:
    """The bench's generated bank of ``BANK_SIZE`` questions as a CSV file."""
    rows, _ = bench_module("lint_scale").generate(BANK_SIZE)
    path = directory / f"bank{BANK_SIZE}.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "correct", "distractor1", "distractor2", "distractor3"])
        writer.writerows(rows)
    return path


def pool_quiz() -> Quiz:
    """Every Open Trivia DB multiple-choice item and MMLU validation item as one quiz."""
    precision = bench_module("lint_precision")
    items = precision.opentdb_items() + precision.mmlu_items()
    questions = tuple(
        Question(id=f"q{n + 1}", text=stem, options=tuple(options), key=key)
        for n, (stem, options, key) in enumerate(items)
    )
    return Quiz(title="pool", questions=questions)


def findings(quiz: Quiz) -> list[list[Any]]:
    return [
        [f.code, f.severity, f.question_id, f.source_line, f.message]
        for f in lint_quiz(quiz).findings
    ]


def digest(found: list[list[Any]]) -> dict[str, Any]:
    body = json.dumps(found, ensure_ascii=False, separators=(",", ":")).encode()
    return {
        "findings": len(found),
        "per_code": dict(sorted(Counter(f[0] for f in found).items())),
        "sha256": hashlib.sha256(body).hexdigest(),
    }


def test_a_generated_bank_has_the_findings_it_had_before(tmp_path: Path) -> None:
    found = findings(load_quiz(generated_bank(tmp_path)))
    expected = json.loads((GOLDEN / "generated_5000.json").read_text(encoding="utf-8"))
    assert len(expected) > 150  # L104, L107, L110 and L111 findings among 5,000 questions
    assert {f[0] for f in expected} >= {"L104", "L107", "L110", "L111"}
    missing = [f for f in expected if f not in found]
    extra = [f for f in found if f not in expected]
    assert (missing[:3], extra[:3]) == ([], [])
    assert found == expected  # and in the same order


def test_the_shared_pool_has_the_findings_it_had_before() -> None:
    shared_data("opentdb", "opentdb.json")
    shared_data("mmlu_val", "mmlu_val_all.csv")
    expected = json.loads((GOLDEN / "pool_digest.json").read_text(encoding="utf-8"))
    got = digest(findings(pool_quiz()))
    assert got["per_code"] == expected["per_code"]
    assert got == expected


def reference_pairs(word_sets: list[frozenset[str]]) -> set[tuple[int, int]]:
    """The blocking ``index_pairs`` documents, written plainly: a text's three rarest words
    (by how many texts have them, then the word) that another text has, and its words less one;
    texts sharing a key shared by at most 32 texts are pairs."""
    df = Counter(w for words in word_sets for w in words)
    postings: dict[tuple[str, ...], set[int]] = {}
    for i, words in enumerate(word_sets):
        ordered = sorted(words, key=lambda w: (df[w], w))
        keys = [("rare", w) for w in ordered[:3] if df[w] > 1]
        if len(ordered) >= 2:
            whole = sorted(ordered)
            keys += [("less", *whole[:k], *whole[k + 1 :]) for k in range(len(whole))]
        for key in keys:
            postings.setdefault(key, set()).add(i)
    out: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) <= 32:
            out.update(itertools.combinations(sorted(members), 2))
    return out


def test_the_vectorised_index_pairs_what_the_plain_blocking_pairs() -> None:
    """Rare words shared by a few texts, one word changed, sets of one and two words, a common
    word in hundreds of texts, repeated sets: the same candidate pairs as the plain version."""
    rng = random.Random(11)
    vocabulary = [f"w{k}" for k in range(400)]
    word_sets: list[frozenset[str]] = []
    for n in range(3_000):
        if n % 10 == 0 and word_sets:  # an earlier set with one word swapped
            words = set(rng.choice(word_sets))
            if words:
                words.discard(rng.choice(sorted(words)))
            words.add(rng.choice(vocabulary))
        elif n % 37 == 0 and word_sets:
            words = set(rng.choice(word_sets))  # repeated
        else:
            words = set(rng.choices(vocabulary[:40] * 5 + vocabulary, k=rng.randint(0, 7)))
            if n % 3 == 0:
                words.add("common")
        word_sets.append(frozenset(words))
    plain = reference_pairs(word_sets)
    assert len(plain) > 5_000
    assert index_pairs(word_sets) == plain
    # No text, empty texts, texts sharing nothing: no pairs (and no error).
    assert index_pairs([]) == index_pairs([frozenset(), frozenset({"w1"})]) == set()
    assert index_pairs([frozenset({"a", "b"}), frozenset({"a", "c"})]) == {(0, 1)}


def test_the_plain_text_shortcut_gives_what_the_full_normalisers_give() -> None:
    """``simple_form`` (ASCII words, numbers, spaces, commas, "?") equals ``comparable`` and
    ``normalise`` computed the long way, and refuses every text it would get wrong: a letter next
    to a digit (a formula's case is content), a hyphen, an apostrophe, a tab, a dot, an accent."""
    rng = random.Random(3)
    plain = ["Paris", "ocean", "B", "1945", "7", " ", " ", ", ", "?"]
    other = ["-", "'", "\t", ".", "é", "(", "+", "x2", "&"]
    taken = 0
    for _ in range(20_000):
        pool = plain if rng.random() < 0.7 else plain + other
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 8)))
        simple = simple_form(text)
        if simple is None:
            continue
        taken += 1
        assert simple == _comparable(text) == _normalise(text), repr(text)
        assert repeat_key(text) == _repeat_key(text), repr(text)
    assert taken > 1_000
    for text in ("CO2", "x2 + 1", "T-800", "don't", "3.5", "Sc Ej", "Paris?", "1,000 km"):
        if simple_form(text) is not None:
            assert simple_form(text) == _comparable(text) == _normalise(text)
    assert simple_form("CO2") is None and simple_form("3.5") is None
    assert simple_form("Which ocean, of these, is largest?") == "which ocean of these is largest"


def write() -> None:
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        found = findings(load_quiz(generated_bank(Path(tmp))))
    text = "[\n" + ",\n".join(json.dumps(f, ensure_ascii=False) for f in found) + "\n]\n"
    (GOLDEN / "generated_5000.json").write_text(text, encoding="utf-8")
    pool = json.dumps(digest(findings(pool_quiz())), indent=2) + "\n"
    (GOLDEN / "pool_digest.json").write_text(pool, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_lint_scale.py --write")
    sys.path.insert(0, str(Path(__file__).parent))
    write()
