"""JSON in model replies, read within caps: the one extractor every reply parser uses.

Models wrap JSON in code fences, put prose around it, write two objects, or get cut off. A reply
is untrusted input, so before ``json`` sees a candidate a linear scan checks that its brackets
nest no deeper than ``max_depth`` (``json`` recurses once per level and would raise
``RecursionError`` on a few thousand), and a reply longer than ``max_chars`` is not read at all.
Either cap raises :class:`JSONRefused`, a :class:`ReplyUnparsed` whose message is the reason, so
each parser's "unparseable" path (unscored, unjudged, a failed chunk) takes it like any other.

- :func:`json_values`: every top-level object or array, in order; a code fence's first.
- :func:`embedded_values`: the same over one text, lazily, without looking at fences.
- :func:`json_document`: the object or array a text is, whole, or None.
- :func:`fenced_blocks`: the bodies of a reply's code fences.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_DEPTH = 64  # no reply to any shipped prompt nests nearly this deep
MAX_REPLY_CHARS = 200_000  # ~50k tokens: past every max_tokens the pipelines ask for

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_OPEN = re.compile(r"[\[{]")
# A whole JSON string (no raw control characters, as json's strict mode), or one bracket, or a
# quote that starts no valid string.
_TOKEN = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"|[\[\]{}"]')
_CLOSER = {"[": "]", "{": "}"}
_JSON_SPACE = " \t\n\r"
_decoder = json.JSONDecoder()


class ReplyUnparsed(ValueError):
    """A judge reply without the expected content; the message says what was missing."""


class JSONRefused(ReplyUnparsed):
    """A reply whose JSON the caps refused to read (too long, or nested too deep)."""


def _check_length(text: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise JSONRefused(
            f"reply too long to read for JSON ({len(text):,} characters; the limit is"
            f" {max_chars:,})"
        )


class _Scanner:
    """Bracket spans of one text, each found once: a scan from an opener also settles every
    opener it passes (the token stream after a token boundary does not depend on where the
    scan began), so a reply full of broken brackets costs a few passes, not one per bracket."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self._ends: dict[int, int | None] = {}

    def end_of(self, start: int) -> int | None:
        """The index after the bracket that closes the one at ``start``; None when it never
        closes, closes with the wrong kind, or a string in it is broken."""
        if start in self._ends:
            return self._ends[start]
        stack: list[tuple[int, str]] = []
        key_due = False  # after "{" comes a key or "}": a bracket there is broken JSON
        for m in _TOKEN.finditer(self.text, start):
            token = m.group()
            if token[0] == '"':
                if len(token) == 1:
                    break
                key_due = False
                continue
            if token in _CLOSER:
                if key_due:
                    break
                key_due = token == "{"
                if len(stack) >= self.max_depth:
                    raise JSONRefused(f"reply JSON nested deeper than {self.max_depth} levels")
                stack.append((m.start(), _CLOSER[token]))
                continue
            opened, wanted = stack[-1]
            if token != wanted:
                break
            key_due = False
            stack.pop()
            self._ends[opened] = m.end()
            if not stack:
                return m.end()
        for opened, _ in stack:
            self._ends[opened] = None
        return None

    def decode_at(self, start: int) -> tuple[Any, int] | None:
        """(value, end) of the JSON object or array opening at ``start``, or None."""
        end = self.end_of(start)
        if end is None:
            return None
        try:  # on its own span: a JSONDecodeError counts lines back to the start of its text
            value, length = _decoder.raw_decode(self.text[start:end])
        except ValueError:
            return None
        except RecursionError:  # unreachable after the depth scan; kept as a typed condition
            raise JSONRefused(f"reply JSON nested deeper than {self.max_depth} levels") from None
        return value, start + length

    def values(self) -> Iterator[Any]:
        pos = 0
        while (m := _OPEN.search(self.text, pos)) is not None:
            found = self.decode_at(m.start())
            if found is None:
                pos = m.start() + 1  # a broken outer value may hold a valid inner one
            else:
                yield found[0]
                pos = found[1]


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the reply's ``` code fences (any language tag), in order."""
    return [m.group(1) for m in _FENCE.finditer(text)]


def embedded_values(
    text: str, *, max_chars: int = MAX_REPLY_CHARS, max_depth: int = MAX_DEPTH
) -> Iterator[Any]:
    """Each top-level JSON object or array in ``text``, left to right, wherever it sits in prose.

    A ``{`` or ``[`` that starts no valid value is stepped over one character, so values inside
    broken JSON (a list cut short, say) are still found. Raises :class:`JSONRefused` past a cap.
    """
    _check_length(text, max_chars)
    return _Scanner(text, max_depth).values()


def json_values(
    text: str, *, max_chars: int = MAX_REPLY_CHARS, max_depth: int = MAX_DEPTH
) -> list[Any]:
    """Every JSON object or array in a reply, outermost first, in order.

    The values of the first code fence that holds any; the whole reply's when no fence does. A
    reply with two objects gives both (a caller wanting the model's last word takes the last).
    Raises :class:`JSONRefused` past a cap.
    """
    _check_length(text, max_chars)
    for source in [*fenced_blocks(text), text]:
        found = list(_Scanner(source, max_depth).values())
        if found:
            return found
    return []


def json_document(
    text: str, *, max_chars: int = MAX_REPLY_CHARS, max_depth: int = MAX_DEPTH
) -> list[Any] | dict[str, Any] | None:
    """The object or array ``text`` is as a whole (JSON whitespace around it allowed), else None.

    What ``json.loads`` would return for a list or dict, within the caps (:class:`JSONRefused`).
    """
    _check_length(text, max_chars)
    stripped = text.strip(_JSON_SPACE)
    if not stripped or stripped[0] not in _CLOSER:
        return None
    found = _Scanner(stripped, max_depth).decode_at(0)
    if found is None or found[1] != len(stripped):
        return None
    value: list[Any] | dict[str, Any] = found[0]
    return value


__all__ = [
    "MAX_DEPTH",
    "MAX_REPLY_CHARS",
    "JSONRefused",
    "ReplyUnparsed",
    "embedded_values",
    "fenced_blocks",
    "json_document",
    "json_values",
]
