"""A deterministic judge oracle, shared by the simulated provider and the fake server.

Given a rendered batch prompt and a truth table (assertion text → true/false), it writes a reply in
the documented format. Errors follow TPR/TNR but are drawn from a hash of (seed, assertion text),
so the same assertion always gets the same verdict, whatever batch it lands in: a resumed run gives
the same results as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from quiztui.core.assertions import decompose, parse_rendered_batch
from quiztui.core.quiz import Quiz


def _unit(seed: int, text: str) -> float:
    digest = hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def judge_verdict(text: str, truth: bool, tpr: float, tnr: float, seed: int = 0) -> bool:
    """What a judge with the given TPR/TNR says about an assertion whose truth is ``truth``."""
    u = _unit(seed, text)
    if truth:
        return u < tpr
    return not (u < tnr)


def oracle_reply(
    prompt: str,
    truth: Mapping[str, bool],
    *,
    tpr: float = 1.0,
    tnr: float = 1.0,
    seed: int = 0,
    skip_ids: frozenset[str] = frozenset(),
) -> str:
    """Reply to a judge prompt: ``A<n>: TRUE|FALSE - reason`` per line, skipping ``skip_ids``.

    Assertions absent from ``truth`` are answered FALSE with reason "unknown assertion".
    """
    lines = []
    for ident, text in parse_rendered_batch(prompt).items():
        if ident in skip_ids:
            continue
        known = truth.get(text)
        if known is None:
            lines.append(f"{ident}: FALSE - unknown assertion")
            continue
        said = judge_verdict(text, known, tpr, tnr, seed)
        why = "matches the facts" if said else "does not match the facts"
        lines.append(f"{ident}: {'TRUE' if said else 'FALSE'} - {why}")
    return "\n".join(lines) + "\n"


def truth_table(quiz: Quiz) -> dict[str, bool]:
    """Assertion text → truth, from the quiz's truth file when present, else from its key."""
    table = {}
    for a in decompose(quiz):
        true_index = quiz.truth.get(a.question_id)
        table[a.text] = a.keyed if true_index is None else a.option_index == true_index
    return table
