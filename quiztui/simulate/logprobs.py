"""Token logprobs for the simulated judge's replies (the simulated provider and the fake server).

The confidences come from the oracle (:func:`quiztui.simulate.vet.judge_confidence`), so P(true)
read from logprobs carries the same signal over HTTP (fake server) as offline (simulated provider).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from quiztui.core.assertions import parse_rendered_batch
from quiztui.core.logprobs import TokenLogprob
from quiztui.core.verdicts import StreamingVerdictParser
from quiztui.simulate import grade as grade_oracle
from quiztui.simulate.vet import judge_confidence

_PIECE = re.compile(r" ?\w+| ?[^\w\s]+|\s+")


def synthetic_logprobs(
    text: str, verdicts: Mapping[int, tuple[bool, float]], top_n: int = 5
) -> list[TokenLogprob]:
    """Tokens with logprobs for a simulated reply (the simulated judge and the fake server).

    ``text`` is cut into word, punctuation and whitespace pieces, a leading space kept with the
    piece after it as real tokenizers do. ``verdicts`` maps the offset of a verdict word to
    (the word said, the judge's confidence in it): that token gets the said word at the
    confidence, the opposite word at nearly all the rest and a little junk; other tokens are
    near-certain. Alternatives are cut to ``top_n``.
    """
    out = []
    offset = 0
    for piece in tokenize(text):
        said = verdicts.get(offset)
        if said is None:
            for delta in range(1, len(piece)):  # the word may start after a leading space
                said = verdicts.get(offset + delta)
                if said is not None:
                    break
        if said is None:
            logprob = math.log(0.999)
            top: list[tuple[str, float]] = [(piece, logprob), (" the", math.log(0.0005))]
        else:
            value, confidence = said
            lead = piece[: len(piece) - len(piece.lstrip())]
            opposite = lead + ("FALSE" if value else "TRUE")
            junk = min(0.001, (1.0 - confidence) / 10)
            logprob = math.log(confidence)
            top = [
                (piece, logprob),
                (opposite, math.log(max(1e-9, 1.0 - confidence - junk))),
                (lead + "unsure", math.log(junk) if junk > 0 else -math.inf),
            ]
            top = [(t, lp) for t, lp in top if math.isfinite(lp)]
        out.append(TokenLogprob(piece, logprob, tuple(top[: max(0, top_n)])))
        offset += len(piece)
    return out


def oracle_logprobs(
    prompt: str, reply: str, truth: Mapping[str, bool], *, seed: int = 0, top_n: int = 5
) -> list[TokenLogprob]:
    """Logprobs for a simulated judge's ``reply`` to ``prompt``, confidences from the oracle.

    Each verdict the parser finds in the reply gets :func:`judge_confidence` of its assertion
    (an assertion missing from ``truth`` counts as judged right), so P(true) carries the same
    signal over HTTP (fake server) as offline (simulated provider).
    """
    graded = grade_oracle.logprobs(prompt, reply, top_n)
    if graded is not None:
        return graded
    asked = parse_rendered_batch(prompt)
    verdicts: dict[int, tuple[bool, float]] = {}
    parser = StreamingVerdictParser(asked)
    for v in parser.feed(reply) + parser.close():
        if v.offset is None:
            continue
        text = asked[v.id]
        known = truth.get(text)
        confidence = judge_confidence(text, v.verdict if known is None else known, v.verdict, seed)
        verdicts[v.offset] = (v.verdict, confidence)
    return synthetic_logprobs(reply, verdicts, top_n)


def tokens_by_chunk(
    tokens: Sequence[TokenLogprob], chunks: Sequence[str]
) -> list[list[TokenLogprob]]:
    """For each text chunk of a reply, the tokens that start in it (what to send along with it)."""
    out: list[list[TokenLogprob]] = []
    sent = start = end = 0  # tokens handed out; where the next one starts; where the chunk ends
    for chunk in chunks:
        end += len(chunk)
        first = sent
        while sent < len(tokens) and start < end:
            start += len(tokens[sent].token)
            sent += 1
        out.append(list(tokens[first:sent]))
    if out:
        out[-1] += tokens[sent:]  # tokens past the text, if any: with the last chunk
    return out


def tokenize(text: str) -> list[str]:
    """Word, punctuation-run and whitespace pieces whose concatenation is ``text``."""
    return _PIECE.findall(text)


__all__ = ["oracle_logprobs", "synthetic_logprobs", "tokenize", "tokens_by_chunk"]
