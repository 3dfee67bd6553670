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
TRUE_WORDS: frozenset[str] = frozenset(_TRUE)  # the verdict words, lowercase
FALSE_WORDS: frozenset[str] = frozenset(_FALSE)

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
    # Character offset where the verdict word starts: in the line for parse_line, in the whole
    # reply for StreamingVerdictParser and parse_reply. None when not known (some JSON lines).
    offset: int | None = None


def _json_value_offset(line: str, key: str) -> int | None:
    """Offset of the value of ``"key":`` in a JSON line (after an opening quote), if unambiguous."""
    found = list(re.finditer(r'"' + re.escape(key) + r'"\s*:\s*"?\s*', line))
    return found[-1].end() if found else None  # json.loads keeps the last of duplicate keys


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
    field = next((k for k in ("verdict", "answer", "value", "label", "truth") if k in obj), None)
    raw = None if field is None else obj[field]
    if not isinstance(ident, str) or field is None or raw is None:
        return None
    if isinstance(raw, bool):
        verdict = raw
    elif isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        verdict = raw.strip().lower() in _TRUE
    else:
        return None
    reason = obj.get("reason") or obj.get("explanation") or ""
    offset = _json_value_offset(line, field)
    return ParsedVerdict(ident.strip().upper(), verdict, str(reason).strip(), offset)


def parse_line(line: str) -> ParsedVerdict | None:
    """Parse one reply line; ``None`` when it carries no verdict. ``offset`` is in ``line``."""
    text = line.strip()
    if not text:
        return None
    lead = len(line) - len(line.lstrip())
    if "{" in text:
        parsed = _from_json(text)
        if parsed is not None:
            if parsed.offset is None:
                return parsed
            return ParsedVerdict(parsed.id, parsed.verdict, parsed.reason, lead + parsed.offset)
    m = _LINE.match(text)
    if not m:
        return None
    word = m.group("word").lower()
    reason = m.group("reason").strip().strip("*_`").strip()
    return ParsedVerdict(m.group("id").upper(), word in _TRUE, reason, lead + m.start("word"))


class StreamingVerdictParser:
    """Feed text chunks as they stream in; complete lines yield verdicts for known ids."""

    def __init__(self, valid_ids: Collection[str]) -> None:
        self._valid = {i.upper() for i in valid_ids}
        self._buffer = ""
        self._line_start = 0  # offset in the whole reply of the buffer's first character

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
            start = self._line_start
            self._line_start += len(line) + 1  # the newline the split removed
            v = parse_line(line)
            if v is not None and v.id in self._valid:
                if v.offset is not None:
                    v = ParsedVerdict(v.id, v.verdict, v.reason, start + v.offset)
                out.append(v)
        return out


def parse_reply(reply: str, valid_ids: Collection[str]) -> dict[str, ParsedVerdict]:
    """Whole-reply convenience: the last verdict per valid id."""
    parser = StreamingVerdictParser(valid_ids)
    found = parser.feed(reply) + parser.close()
    return {v.id: v for v in found}
