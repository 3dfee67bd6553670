"""Source documents for ``quiztui generate``: PDF (via pypdf) or text/Markdown, cut into chunks.

``read_document(path)`` returns the document's text with the offsets at which its pages start
(PDF; pages are joined with a line break) and its lines start, so a position in the text can be
named as page and line. Every problem is a :class:`DocumentError` naming the file, on one line.
``chunk_document`` cuts the text into chunks of about ``chunk_chars`` characters at paragraph,
else sentence, else word boundaries; each chunk knows its start offset.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from quiztui.core.locate import DEFAULT_MIN_RATIO, Locator, line_starts, text_position
from quiztui.errors import QuiztuiError

DEFAULT_CHUNK_CHARS = 6000
_PDF_MAGIC = b"%PDF-"
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*\s+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SPACE = re.compile(r"\s+")


class DocumentError(QuiztuiError):
    """A document could not be read as text."""


@dataclass(frozen=True)
class Document:
    path: str  # as the user gave it, for messages
    text: str
    kind: str  # "pdf" or "text"
    page_starts: tuple[int, ...] = ()  # offset of each page's first character (PDF only)
    line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "line_starts", line_starts(self.text))

    @property
    def pages(self) -> int | None:
        return len(self.page_starts) if self.page_starts else None

    def position(self, offset: int) -> tuple[int | None, int]:
        """(page, line) of an offset; for a PDF the line counts within the page."""
        return text_position(offset, self.line_starts, self.page_starts)

    def locator(self, min_ratio: float = DEFAULT_MIN_RATIO) -> Locator:
        return Locator(self.text, self.page_starts, min_ratio=min_ratio)


@dataclass(frozen=True, slots=True)
class Chunk:
    number: int  # 1-based
    start: int  # offset of the chunk's first character in the document text
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def read_document(path: str | Path) -> Document:
    shown = str(path)
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise DocumentError(f"{shown}: is a directory, not a document") from None
    except PermissionError:
        raise DocumentError(f"{shown}: permission denied") from None
    except OSError as exc:
        raise DocumentError(f"{shown}: cannot read file: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".pdf" or data.startswith(_PDF_MAGIC):
        return _read_pdf(data, shown)
    return _read_text(data, shown)


def _read_text(data: bytes, shown: str) -> Document:
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{shown}: binary data, not a text document (PDF, .txt or .md)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DocumentError(
            f"{shown}: line {line}: byte 0x{data[exc.start]:02x} is not UTF-8 (save as UTF-8)"
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise DocumentError(f"{shown}: the document is empty")
    return Document(shown, text, "text")


def _read_pdf(data: bytes, shown: str) -> Document:
    try:
        from pypdf import PdfReader
        from pypdf.errors import DependencyError, FileNotDecryptedError
    except ImportError:  # pragma: no cover - pypdf is a dependency
        raise DocumentError(f"{shown}: reading PDF needs pypdf (pip install pypdf)") from None
    # pypdf reports recoverable oddities through logging and warnings; the outcome is what counts.
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise DocumentError(f"{shown}: the PDF is encrypted (password protected)")
            pages = [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except FileNotDecryptedError:
        raise DocumentError(f"{shown}: the PDF is encrypted (password protected)") from None
    except DependencyError:
        raise DocumentError(
            f"{shown}: the PDF is AES-encrypted; reading it needs the 'cryptography' package"
        ) from None
    except Exception as exc:  # pypdf raises assorted errors (not only PdfReadError) on damage
        raise DocumentError(f"{shown}: not a readable PDF: {_one_line(exc)}") from None
    finally:
        logger.setLevel(level)
    if not pages:
        raise DocumentError(f"{shown}: the PDF has no pages")
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for page_text in pages:
        page_text = page_text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
        starts.append(offset)
        parts.append(page_text)
        offset += len(page_text) + 1  # pages are joined with one line break
    text = "\n".join(parts)
    if not text.strip():
        raise DocumentError(
            f"{shown}: no extractable text in {len(pages)} page(s) (a scanned PDF? run OCR first)"
        )
    return Document(shown, text, "pdf", tuple(starts))


def _one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split()) or type(exc).__name__
    return message[:200]


def chunk_document(document: Document | str, chunk_chars: int = DEFAULT_CHUNK_CHARS) -> list[Chunk]:
    """Chunks of about ``chunk_chars`` characters, cut at paragraph/sentence/word boundaries.

    A cut is looked for in the second half of each window: the last paragraph break, else the
    last sentence end, else the last whitespace; a text without any is cut hard. Whitespace
    between chunks belongs to neither. Chunks never overlap and cover every non-blank character.
    """
    if chunk_chars < 1:
        raise ValueError("chunk_chars must be >= 1")
    text = document.text if isinstance(document, Document) else document
    chunks: list[Chunk] = []
    pos = _skip_space(text, 0)
    while pos < len(text):
        if len(text) - pos <= chunk_chars:
            cut = len(text)
        else:
            cut = _cut(text, pos, pos + chunk_chars)
        piece = text[pos:cut].rstrip()
        if piece:
            chunks.append(Chunk(len(chunks) + 1, pos, piece))
        pos = _skip_space(text, cut)
    return chunks


def _cut(text: str, start: int, limit: int) -> int:
    """Where to end a chunk that starts at ``start`` and may reach ``limit``."""
    floor = start + (limit - start) // 2
    window = text[floor:limit]
    for pattern in (_PARAGRAPH_BREAK, _SENTENCE_END, _SPACE):
        ends = [m.end() for m in pattern.finditer(window)]
        if ends:
            return floor + ends[-1]
    return limit


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos
