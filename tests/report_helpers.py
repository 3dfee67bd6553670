"""Shared by the report tests: a quiz carrying markup and script in every untrusted field, a real
simulated run of it, an HTML walker, and a small PNG reader (zlib + the five row filters) so a
screenshot can be checked for content without an imaging library."""

from __future__ import annotations

import dataclasses
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from pipeline_helpers import collect, make_quiz

from quiztui.core.quiz import Question, Quiz, Unjudged
from quiztui.pipeline.events import RunSummary
from quiztui.providers.simulated import SimulatedProvider
from quiztui.testing.fake_openai import truth_from_quiz

EVIL_TITLE = "Arithmetic <script>alert(0)</script> [bold]"
EVIL_QUESTION = "<script>alert(1)</script> [bold]What is 1 + 1?[/bold]"
EVIL_OPTION = '"><img src=x onerror=alert(2)>'
EVIL_REASON = '"><img src=x onerror=alert(3)> & [red]'
EVIL_ITEM = "Describe <b>addition</b> <script>alert(4)</script>"


def evil_quiz(n: int = 12) -> Quiz:
    """``make_quiz`` with every fourth key wrong, q1 full of markup and one not-judged essay."""
    base = make_quiz(n, wrong_every=4, title=EVIL_TITLE)
    first = Question(id="q1", text=EVIL_QUESTION, options=("2", EVIL_OPTION, "3", "4"), key=0)
    essay = Unjudged(id="q99", text=EVIL_ITEM, type="essay", source_line=7)
    return Quiz(
        title=base.title,
        questions=(first, *base.questions[1:]),
        truth=base.truth,
        unjudged=(essay,),
    )


async def simulated_run(quiz: Quiz, db: Path) -> RunSummary:
    """A real vet run with the simulated judge; the judge's canned reason on q1's option A is
    replaced by ``EVIL_REASON`` (model text is as untrusted as quiz text)."""
    provider = SimulatedProvider(truth_from_quiz(quiz), tpr=0.9, tnr=0.9, seed=4)
    _, summary = await collect(quiz, provider, db)
    q1 = summary.questions[0]
    q1 = dataclasses.replace(q1, reasons=(EVIL_REASON, *q1.reasons[1:]))
    return dataclasses.replace(summary, questions=(q1, *summary.questions[1:]))


class Walker(HTMLParser):
    """Every start tag with its attributes, and all the text, of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)


def walk(html: str) -> Walker:
    walker = Walker()
    walker.feed(html)
    walker.close()
    return walker


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(path: Path) -> np.ndarray:
    """An 8-bit, non-interlaced RGB or RGBA PNG as a (height, width, channels) array."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6), (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        start = y * (stride + 1)
        method = raw[start]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=start + 1).astype(np.int64)
        if method == 0:
            row = line
        elif method == 2:  # Up
            row = (line + prev) % 256
        elif method == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(stride) % 256
        else:  # Average and Paeth depend on the byte just decoded: one byte at a time
            cur = [0] * stride
            up = prev.tolist()
            vals = line.tolist()
            for i in range(stride):
                left = cur[i - channels] if i >= channels else 0
                if method == 3:
                    cur[i] = (vals[i] + (left + up[i]) // 2) & 255
                else:
                    upleft = up[i - channels] if i >= channels else 0
                    cur[i] = (vals[i] + _paeth(left, up[i], upleft)) & 255
            row = np.array(cur, dtype=np.int64)
        out[y] = row
        prev = row
    return out.reshape(height, width, channels)
