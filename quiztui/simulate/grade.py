"""Deterministic replies to the grading prompts (rubric10, pass3, fact extraction, fact scoring).

Used by the simulated provider and the fake server, so grading runs offline and in tests the way
it runs against a model. The oracle recognises a grading prompt by the field lines of the user
messages in ``prompts/grade_*.md`` and grades by token overlap (SQuAD token F1 and recall) with a
small deterministic wobble drawn from a hash of the item, so repeated runs agree. It is a stand-in
judge for plumbing and demos, not a model of any real judge. ``reply`` returns None for any other
prompt.
"""

from __future__ import annotations

import hashlib
import json
import math
import re

from quiztui.core.lexical import normalize_answer, token_f1
from quiztui.core.logprobs import TokenLogprob

_FIELD = re.compile(r"^([A-Za-z_' ()]+?):[ \t]?(.*)$", re.M)


def _fields(prompt: str) -> dict[str, str]:
    return {m.group(1).strip().lower(): m.group(2).strip() for m in _FIELD.finditer(prompt)}


def _unit(*parts: str) -> float:
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def kind_of(prompt: str) -> str | None:
    f = _fields(prompt)
    if {"question", "reference answer", "assistant's answer"} <= f.keys():
        return "rubric10"
    if {"question", "golden_answer", "answer"} <= f.keys():
        return "pass3"
    if "text to extract facts from" in f:
        return "fact_extract"
    if {"fact", "context(s)"} <= f.keys():
        return "fact_score"
    return None


def _recall(fact: str, context: str) -> float:
    words = [w for w in normalize_answer(fact).split() if len(w) > 2] or normalize_answer(
        fact
    ).split()
    have = set(normalize_answer(context).split())
    return sum(w in have for w in words) / len(words) if words else 0.0


def split_facts(text: str) -> list[str]:
    """The reference cut at sentence ends and at ``;`` / ``, and`` / ``, but`` into clauses."""
    parts = re.split(r"(?<=[.!?])\s+|;\s*|,\s+(?:and|but|while)\s+", text.strip())
    return [
        p.strip().rstrip(".") + "." for p in parts if len(normalize_answer(p).split()) >= 2
    ] or ([text.strip()] if text.strip() else [])


def reply(prompt: str, seed: int = 0) -> str | None:
    kind = kind_of(prompt)
    if kind is None:
        return None
    f = _fields(prompt)
    if kind == "rubric10":
        ref, cand = f["reference answer"], f["assistant's answer"]
        sim = token_f1(cand, ref)
        wobble = (_unit(str(seed), "r10", ref, cand) - 0.5) * 2.0
        rating = max(1, min(10, round(1 + 9 * sim + wobble)))
        explanation = f"The candidate shares {sim:.0%} of its wording with the reference" + (
            "; the key information matches." if sim >= 0.6 else "; key information differs."
        )
        body = [{"question": f["question"], "explanation": explanation, "rating": rating}]
        return "```json\n" + json.dumps(body, indent=2) + "\n```\n"
    if kind == "pass3":
        ref, cand = f["golden_answer"], f["answer"]
        sim = token_f1(cand, ref) + (_unit(str(seed), "p3", ref, cand) - 0.5) * 0.1
        verdict = "pass" if sim >= 0.6 else "partially pass" if sim >= 0.3 else "fail"
        evaluation = f"The generated answer carries about {max(sim, 0):.0%} of the reference."
        return json.dumps({"evaluation": evaluation, "final_verdict": verdict}, indent=1) + "\n"
    if kind == "fact_extract":
        return json.dumps({"facts": split_facts(f["text to extract facts from"])}) + "\n"
    score, _ = _fact_decision(f["fact"], f["context(s)"], seed)
    return f"{score}"


def _fact_decision(fact: str, context: str, seed: int) -> tuple[int, float]:
    """(0/1, probability of the written digit): covered when most content words appear."""
    recall = _recall(fact, context)
    u = _unit(str(seed), "fact", fact, context)
    score = int(recall >= 0.6) if u >= 0.05 else int(recall < 0.6)  # 5 % slips
    return score, _fact_confidence(fact, context)


def _fact_confidence(fact: str, context: str) -> float:
    """The written digit's probability: surer the further coverage is from the 0.6 threshold."""
    return 0.55 + 0.44 * min(1.0, abs(_recall(fact, context) - 0.6) / 0.4)


def logprobs(prompt: str, reply: str, top_n: int = 5) -> list[TokenLogprob] | None:
    """Tokens for a fact-scoring reply: the digit at the oracle's confidence, the other listed."""
    if kind_of(prompt) != "fact_score":
        return None

    f = _fields(prompt)
    confidence = _fact_confidence(f["fact"], f["context(s)"])
    said = reply.strip()
    if said not in ("0", "1"):
        return None
    other = "0" if said == "1" else "1"
    top = ((said, math.log(confidence)), (other, math.log(1 - confidence)))[: max(top_n, 0)]
    return [TokenLogprob(reply, math.log(confidence), top)]
