"""Model providers: one small interface, one implementation per file."""

from quiztui.providers.base import ChatRequest, ChatResult, Provider, StreamInterrupted

__all__ = ["ChatRequest", "ChatResult", "Provider", "StreamInterrupted"]
