"""The markers that fence untrusted data inside the document prompts, and their neutraliser.

The prompt files in ``prompts/`` put inserted data between these markers; the pipeline passes
untrusted text through :func:`neutralise_markers` first, so a document cannot forge a marker.
"""

from __future__ import annotations

import re

DOC_BEGIN = "<<<DOCUMENT TEXT>>>"
DOC_END = "<<<END OF DOCUMENT TEXT>>>"
REPHRASE_BEGIN = "<<<QA PAIRS TO REPHRASE>>>"
REPHRASE_END = "<<<END OF QA PAIRS TO REPHRASE>>>"
CANDIDATES_BEGIN = "<<<QUESTIONS TO ANSWER>>>"
CANDIDATES_END = "<<<END OF QUESTIONS TO ANSWER>>>"
DISTRACTORS_BEGIN = "<<<ANSWERS NEEDING DISTRACTORS>>>"
DISTRACTORS_END = "<<<END OF ANSWERS NEEDING DISTRACTORS>>>"
DONT_KNOW = "I don't know"

_BRACKET_RUN = re.compile(r"<{3,}|>{3,}")


def neutralise_markers(text: str) -> str:
    """Untrusted text made unable to open or close a marker: runs of 3+ '<' or '>' are spaced."""
    return _BRACKET_RUN.sub(lambda m: " ".join(m.group()), text)
