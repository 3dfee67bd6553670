"""Pure domain logic: no textual, httpx or sqlite3 here (enforced by tests/test_import_hygiene.py)."""
