"""Question → assertions, shuffling, batching and judge-prompt rendering (seed 000).

Each option of a question becomes one assertion ``Q: <question> A: <option>``; its keyed label is
true for the key and false for the distractors. The quiz's assertions are shuffled with a recorded
seed and sent in batches, each line carrying a short per-batch id (``A1`` … ``A20``).
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections.abc import Iterable, Sequence

from quiztui.core.quiz import Quiz
from quiztui.core.records import record

_WS = re.compile(r"\s+")


def sanitise(text: str) -> str:
    """Flatten text to one printable line so it cannot forge a prompt or verdict line.

    Newlines, tabs, other control and format characters (including bidi overrides and the
    Unicode line/paragraph separators) become single spaces.
    """
    if not text.isprintable():  # str.isprintable is False for every C* and Z* but " "
        text = text.translate(_bmp_blanks())  # the Basic Multilingual Plane in one pass
        if not text.isprintable():  # beyond it (rare): one character at a time
            text = "".join(
                " " if (unicodedata.category(ch)[0] in "CZ" and ch != " ") else ch for ch in text
            )
    # Printable now: " " is its only whitespace (no other character is both), so only a run of
    # spaces is left to collapse.
    return (_WS.sub(" ", text) if "  " in text else text).strip()


@functools.cache
def _bmp_blanks() -> dict[int, str]:
    """Every C* and Z* code point of the Basic Multilingual Plane but " ", mapped to a space."""
    return {
        cp: " " for cp in range(0x10000) if cp != 0x20 and unicodedata.category(chr(cp))[0] in "CZ"
    }


@record(frozen=True)
class Assertion:
    """One true/false claim. ``uid`` is stable across runs (question id + option index)."""

    question_id: str
    option_index: int
    option: str
    text: str
    keyed: bool

    @property
    def uid(self) -> str:
        return f"{self.question_id}#{self.option_index}"


def assertion_text(question: str, option: str) -> str:
    return f"Q: {sanitise(question)} A: {sanitise(option)}"


def decompose(quiz: Quiz) -> list[Assertion]:
    """One assertion per option, in quiz order (``assertion_text``, the stem flattened once)."""
    out: list[Assertion] = []
    for q in quiz.questions:
        stem = f"Q: {sanitise(q.text)} A: "
        for i, opt in enumerate(q.options):
            out.append(Assertion(q.id, i, opt, stem + sanitise(opt), i == q.key))
    return out


def shuffled(assertions: Sequence[Assertion], seed: int) -> list[Assertion]:
    """A reproducible shuffle: the same seed always gives the same order."""
    order = list(assertions)
    random.Random(seed).shuffle(order)
    return order


def batches(items: Sequence[Assertion], size: int) -> list[list[Assertion]]:
    if size < 1:
        raise ValueError("batch size must be >= 1")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def batch_ids(n: int) -> list[str]:
    return [f"A{i + 1}" for i in range(n)]


def render_batch(template: str, batch: Iterable[Assertion]) -> tuple[str, dict[str, Assertion]]:
    """Fill the judge prompt template; returns the user prompt and the id → assertion map.

    The template's ``{assertions}`` is replaced by one ``A<n>: <assertion>`` line per assertion,
    ``{count}`` by the number of lines. Plain replacement, so braces in quiz text are harmless.
    """
    items = list(batch)
    ids = batch_ids(len(items))
    lines = "\n".join(f"{i}: {a.text}" for i, a in zip(ids, items, strict=True))
    prompt = template.replace("{count}", str(len(items))).replace("{assertions}", lines)
    return prompt, dict(zip(ids, items, strict=True))


_PROMPT_LINE = re.compile(r"^(A\d+): (Q: .*)$")


def parse_rendered_batch(prompt: str) -> dict[str, str]:
    """Inverse of :func:`render_batch` for oracles (simulated judge, fake server): id → text."""
    out: dict[str, str] = {}
    for line in prompt.splitlines():
        m = _PROMPT_LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out
