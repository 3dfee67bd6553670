"""Incremental, tolerant parser for judge replies: one verdict per line.

Accepted line shapes (case-insensitive, with optional bullets, numbering, quotes, markdown):

    A3: TRUE - reason          - A3 false. reason         **A3** → True (reason)
    {"id": "A3", "verdict": true, "reason": "..."}        A3 = F

The id must open the line (after bullets), so text the model quotes later in a line cannot
produce a verdict for another id. Ids not in the batch are ignored; the caller keeps the *last*
verdict per id. JSON is read through the capped extractor of :mod:`quiztui.core.replies`; a line
past its caps gives no JSON verdict, and the parser keeps the reason in ``refused``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection
from typing import Any

from quiztui.core.records import record
from quiztui.core.replies import JSONRefused, json_document

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


@record(frozen=True)
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


def line_object(line: str) -> dict[str, Any] | None:
    """The JSON object spanning a line's first ``{`` to its last ``}``, or None.

    Raises :class:`~quiztui.core.replies.JSONRefused` for a line past the extractor's caps, also
    when its brackets never close (``{"a":{"a":…`` thousands deep).
    """
    start, end = line.find("{"), line.rfind("}")
    if start < 0:
        return None
    obj = json_document(line[start : end + 1] if end > start else line[start:])
    return obj if isinstance(obj, dict) else None


def _from_json(line: str) -> ParsedVerdict | None:
    obj = line_object(line)
    if obj is None:
        return None
    return _verdict_of(obj, line)


def _verdict_of(obj: dict[str, Any], line: str | None = None) -> ParsedVerdict | None:
    """One verdict object (``{"id": "A3", "verdict": true, "reason": "..."}``) or None; the
    offset of its verdict value is found in ``line`` when given."""
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
    offset = None if line is None else _json_value_offset(line, field)
    return ParsedVerdict(ident.strip().upper(), verdict, str(reason).strip(), offset)


def verdict_schema(ids: Collection[str]) -> str:
    """The JSON schema of a structured batch reply (``judge.structured``), as JSON text: one
    required key per id of the batch, in order, ``{"A1": {"verdict": true, "reason": "..."},
    ...}``. Every id being required keeps a small model from closing the document after a few
    verdicts (as it did with a list: 3 of 20 from Gemma 3 270M), and the fixed keys and boolean
    keep the grammar a constrained server samples under tight. Made once per set of ids (every
    full batch has the same ``A1`` … ``A20``)."""
    return _verdict_schema(tuple(sorted(ids, key=lambda i: int(i[1:]))))


@functools.lru_cache(maxsize=64)
def _verdict_schema(ordered: tuple[str, ...]) -> str:
    item = {
        "type": "object",
        "properties": {"verdict": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {i: item for i in ordered},
        "required": list(ordered),
        "additionalProperties": False,
    }
    return json.dumps(schema, separators=(",", ":"))


def _keyed_verdicts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdict objects of a document keyed by id (:func:`verdict_schema`'s shape; a bare
    boolean or verdict word per id is read too)."""
    found = []
    for key, value in doc.items():
        if isinstance(value, dict):
            found.append({**value, "id": key})
        elif isinstance(value, bool | str):
            found.append({"id": key, "verdict": value})
    return found


def parse_verdict_document(text: str, valid_ids: Collection[str]) -> list[ParsedVerdict]:
    """The verdicts of a reply that is one JSON document, as structured output gives (written
    over many lines or one): keyed by id (:func:`verdict_schema`), ``{"verdicts": [...]}`` or a
    bare list of verdict objects. Empty
    when the reply is no such document (or is past the caps of :mod:`quiztui.core.replies`)."""
    try:
        doc = json_document(text)
    except JSONRefused:
        return []
    if isinstance(doc, dict):
        items = doc["verdicts"] if "verdicts" in doc else _keyed_verdicts(doc)
    else:
        items = doc
    if not isinstance(items, list):
        return []
    valid = {i.upper() for i in valid_ids}
    found = [_verdict_of(item) for item in items if isinstance(item, dict)]
    return [v for v in found if v is not None and v.id in valid]


def parse_line(line: str) -> ParsedVerdict | None:
    """Parse one reply line; ``None`` when it carries no verdict. ``offset`` is in ``line``."""
    return read_line(line)[0]


def read_line(line: str) -> tuple[ParsedVerdict | None, str | None]:
    """(verdict or None, why the line's JSON was refused or None): :func:`parse_line` with the
    reason a line past the caps of :mod:`quiztui.core.replies` gave no JSON verdict."""
    text = line.strip()
    if not text:
        return None, None
    lead = len(line) - len(line.lstrip())
    refused = None
    if "{" in text:
        try:
            parsed = _from_json(text)
        except JSONRefused as exc:
            parsed, refused = None, str(exc)
        if parsed is not None:
            if parsed.offset is None:
                return parsed, None
            offset = lead + parsed.offset
            return ParsedVerdict(parsed.id, parsed.verdict, parsed.reason, offset), None
    return _from_words(text, lead), refused


def _from_words(text: str, lead: int) -> ParsedVerdict | None:
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
        # Chunks of the unfinished line, joined once its newline comes: a long line streamed in
        # small chunks costs its length, not its length times the number of chunks.
        self._pending: list[str] = []
        self._line_start = 0  # offset in the whole reply of the pending line's first character
        # Why JSON in the reply was refused (nested too deep, too long), for the unjudged reason.
        self.refused: str | None = None

    def feed(self, chunk: str) -> list[ParsedVerdict]:
        self._pending.append(chunk)
        if "\n" not in chunk:
            return []
        *lines, rest = "".join(self._pending).split("\n")
        self._pending = [rest]
        return self._parse(lines)

    def close(self) -> list[ParsedVerdict]:
        rest = "".join(self._pending)
        self._pending = []
        return self._parse([rest])

    def _parse(self, lines: list[str]) -> list[ParsedVerdict]:
        out = []
        for line in lines:
            start = self._line_start
            self._line_start += len(line) + 1  # the newline the split removed
            v, refused = read_line(line)
            self.refused = refused or self.refused
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
