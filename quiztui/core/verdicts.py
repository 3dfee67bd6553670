"""Incremental, tolerant parser for judge replies: one verdict per line.

Accepted line shapes (case-insensitive, with optional bullets, numbering, quotes, markdown):

    A3: TRUE - reason          - A3 false. reason         **A3** → True (reason)
    {"id": "A3", "verdict": true, "reason": "..."}        A3 = F

The id must open the line (after bullets), so text the model quotes later in a line cannot
produce a verdict for another id. Ids not in the batch are ignored; the caller keeps the *last*
verdict per id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

_TRUE = {"true", "t", "yes", "correct", "accurate", "1"}
_FALSE = {"false", "f", "no", "incorrect", "inaccurate", "0"}

_LEAD = r"^[\s>*#`\-•·+]*(?:\(?\d+[.)]\s+)?[\s*_`\"'\[(]*"
_LINE = re.compile(
    _LEAD
    + r"(?P<id>A\d+)\b[\s*_`\"'\])]*(?:[:=.,\-–—>→|]+[\s*_`\"']*)*"
    + r"(?P<word>true|false|yes|no|correct|incorrect|accurate|inaccurate|t|f|1|0)\b"
    + r"[\s*_`\"'.,:;)\]\-–—|]*(?P<reason>.*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ParsedVerdict:
    id: str
    verdict: bool
    reason: str


def _from_json(line: str) -> ParsedVerdict | None:
    start, end = line.find("{"), line.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(line[start : end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    ident = obj.get("id") or obj.get("ID") or obj.get("assertion")
    raw = next((obj[k] for k in ("verdict", "answer", "value", "label", "truth") if k in obj), None)
    if not isinstance(ident, str) or raw is None:
        return None
    if isinstance(raw, bool):
        verdict = raw
    elif isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        verdict = raw.strip().lower() in _TRUE
    else:
        return None
    reason = obj.get("reason") or obj.get("explanation") or ""
    return ParsedVerdict(ident.strip().upper(), verdict, str(reason).strip())


def parse_line(line: str) -> ParsedVerdict | None:
    """Parse one reply line; ``None`` when it carries no verdict."""
    text = line.strip()
    if not text:
        return None
    if "{" in text:
        parsed = _from_json(text)
        if parsed is not None:
            return parsed
    m = _LINE.match(text)
    if not m:
        return None
    word = m.group("word").lower()
    reason = m.group("reason").strip().strip("*_`").strip()
    return ParsedVerdict(m.group("id").upper(), word in _TRUE, reason)


class StreamingVerdictParser:
    """Feed text chunks as they stream in; complete lines yield verdicts for known ids."""

    def __init__(self, valid_ids: Collection[str]) -> None:
        self._valid = {i.upper() for i in valid_ids}
        self._buffer = ""

    def feed(self, chunk: str) -> list[ParsedVerdict]:
        self._buffer += chunk
        if "\n" not in self._buffer:
            return []
        *lines, self._buffer = self._buffer.split("\n")
        return self._parse(lines)

    def close(self) -> list[ParsedVerdict]:
        rest, self._buffer = self._buffer, ""
        return self._parse([rest])

    def _parse(self, lines: list[str]) -> list[ParsedVerdict]:
        out = []
        for line in lines:
            v = parse_line(line)
            if v is not None and v.id in self._valid:
                out.append(v)
        return out


def parse_reply(reply: str, valid_ids: Collection[str]) -> dict[str, ParsedVerdict]:
    """Whole-reply convenience: the last verdict per valid id."""
    parser = StreamingVerdictParser(valid_ids)
    found = parser.feed(reply) + parser.close()
    return {v.id: v for v in found}
