"""Masking configured secrets (API keys) in text: ``sk-…4242``.

A server may repeat the key it was sent in an error body (a 401 saying which key it refused); that
text becomes a verdict's reason, a batch error, the run summary, a report line and stderr. Every
such string is masked where it enters the program — the providers' error messages — so the key
itself is never stored, printed, logged or reported: the first three and last four characters are
enough for a person to tell which key it was.
"""

from __future__ import annotations

from collections.abc import Iterable

# Shorter values are not masked verbatim (a two-letter "key" would mask every such pair).
MIN_SECRET_CHARS = 6


def mask(secret: str) -> str:
    """``sk-…4242``: enough to tell keys apart, too little to use one."""
    return f"{secret[:3]}…{secret[-4:]}" if len(secret) >= 12 else "…"


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret masked (longest first)."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, mask(secret))
    return text


__all__ = ["MIN_SECRET_CHARS", "mask", "mask_secrets"]
