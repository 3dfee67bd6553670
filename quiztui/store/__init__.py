"""SQLite run store: runs, questions, assertions, verdicts with raw replies, usage, cache."""

from quiztui.store.runs import RunRecord, Store

__all__ = ["RunRecord", "Store"]
