"""A nesting limit for JSON quiz files, checked before ``json`` sees them (issue 19, item 5).

``json.loads`` recurses once per ``[`` or ``{``: a file of 2,000 nested brackets ended in a
``RecursionError`` traceback. No quiz nests deeper than a few levels (a list of items, each with a
list of options and perhaps a metadata object), so a file past :data:`MAX_JSON_DEPTH` is refused
with one line naming the file, the line and the limit. The scan visits only brackets, quotes and
backslashes, and skips string contents, so a bracket inside a question's text does not count.
"""

from __future__ import annotations

import re

MAX_JSON_DEPTH = 64

_TOKENS = re.compile(r'[\[\]{}"\\]')
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The 1-based line where ``text`` nests deeper than ``limit`` (None: it does not).

    First in C: the strings taken out, then the brackets alone, each pass taking out the pairs
    that hold nothing (one level of nesting a pass). Brackets that are gone within ``limit``
    passes nest no deeper than that; anything else (too deep, unbalanced, a string left open)
    goes to the scan below, which finds the line."""
    brackets = _STRING.sub("", text)
    if '"' not in brackets:
        brackets = _NOT_BRACKET.sub("", brackets)
        for _ in range(limit):
            if not brackets:
                return None
            fewer = _INNERMOST.sub("", brackets)
            if fewer == brackets:
                break
            brackets = fewer
        if not brackets:
            return None
    return _scan(text, limit)


def _scan(text: str, limit: int) -> int | None:
    depth = 0
    in_string = False
    escaped_at = -1
    for match in _TOKENS.finditer(text):
        ch, at = match.group(), match.start()
        if in_string:
            if at == escaped_at:
                continue  # the character after a backslash
            if ch == "\\":
                escaped_at = at + 1
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, at) + 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return None


__all__ = ["MAX_JSON_DEPTH", "too_deep"]
