"""Offline sentence embeddings for the ``embedding`` grader (the optional ``embed`` extra).

Importing this package loads neither onnxruntime nor tokenizers; :func:`load_embedder` does, and
raises :class:`EmbedExtraMissing` (a one-line install hint) when the extra is not installed.
"""

from __future__ import annotations

from quiztui.embed.minilm import (
    EMBEDDING_DIM,
    INSTALL_HINT,
    MODEL_NAME,
    Embedder,
    EmbedExtraMissing,
    EmbedModelInvalid,
    embed_available,
    extra_missing,
    load_embedder,
)

__all__ = [
    "EMBEDDING_DIM",
    "INSTALL_HINT",
    "MODEL_NAME",
    "EmbedExtraMissing",
    "EmbedModelInvalid",
    "Embedder",
    "embed_available",
    "extra_missing",
    "load_embedder",
]
