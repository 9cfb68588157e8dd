"""The torch-free runtime: the same text as the pipeline, its tokenizer against transformers', and
importing and running it where torch and transformers are missing (blocked here, and absent in a
fresh virtual environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, pipeline

import hf_punctcase
from hf_punctcase.export.onnx import export_onnx
from hf_punctcase.runtime import OnDeviceRestorer, RuntimeTokenizer

REPO = Path(__file__).resolve().parents[1]
TEXTS = [
    "so what are the risks i am not technical",
    " ".join(["we think that this is a good idea but you know it was really hard to say"] * 30),
    "nasa bought an iphone for 3.5 dollars 😀 café don't",
    "",
    "x" * 150 + " okay",  # an over-long token: passed through, the unknown token for the model
]


@pytest.fixture(scope="module", params=["joint_transformer", "cnn_bilstm"])
def exported(request, tmp_path_factory) -> tuple[str, Path]:
    source = request.getfixturevalue("tiny_model_dir" if request.param == "joint_transformer" else "tiny_cnn_dir")
    return source, export_onnx(source, tmp_path_factory.mktemp("runtime") / "onnx").path


def _strip_arrays(results):
    return json.loads(json.dumps(results, default=lambda value: value.tolist()))


def test_runtime_gives_the_pipelines_results(exported):
    source, folder = exported
    onnx_pipe = pipeline("punct-case", model=str(folder))
    torch_pipe = hf_punctcase.load_pipeline(source, dtype=torch.float32)
    restorer = OnDeviceRestorer(folder, window_words=40, context_words=10, batch_size=3)
    options = {"window_words": 40, "context_words": 10, "batch_size": 3}
    assert restorer.max_length == onnx_pipe.max_length == torch_pipe.max_length
    expected = onnx_pipe(TEXTS, **options)
    assert restorer(TEXTS) == expected
    assert [r["text"] for r in torch_pipe(TEXTS, **options)] == [r["text"] for r in expected]
    # one input, pre-split words, a batch of word lists, and every option the pipeline has
    assert restorer(TEXTS[0]) == onnx_pipe(TEXTS[0])
    words = TEXTS[2].split()
    assert restorer(words, is_split_into_words=True) == onnx_pipe(words, is_split_into_words=True)
    assert restorer([words, words[:2]], is_split_into_words=True) == onnx_pipe([words, words[:2]], is_split_into_words=True)
    for extra in (
        {"return_sentences": True},
        {"return_probabilities": True},
        {"tasks": ("punct",)},
        {"tasks": ("case",), "keep_punctuation": True},
        {"consistent_casing": False},
        {"ends_sentence": False},
    ):
        text = "so, what are the risks? i am not technical"
        assert _strip_arrays(restorer(text, **extra)) == _strip_arrays(onnx_pipe(text, **extra)), extra
    # windows that vote, as the pipeline's
    assert restorer(TEXTS, vote_windows=True) == onnx_pipe(TEXTS, vote_windows=True, **options)
    # one window a batch, or every window in one call: the same
    assert OnDeviceRestorer(folder, batch_size=1)(TEXTS) == OnDeviceRestorer(folder, batch_size=64)(TEXTS)


def test_runtime_refuses_what_the_pipeline_refuses(exported):
    restorer = OnDeviceRestorer(exported[1])
    with pytest.raises(TypeError, match="is_split_into_words"):
        restorer(["so", 3])
    with pytest.raises(ValueError, match="whitespace"):
        restorer(["so what"], is_split_into_words=True)
    with pytest.raises(ValueError, match="context_words"):
        restorer("so", window_words=10, context_words=5)
    with pytest.raises(FileNotFoundError):
        OnDeviceRestorer(exported[1] / "nope")


def test_runtime_tokenizer_matches_transformers(exported):
    folder = exported[1]
    ours, theirs = RuntimeTokenizer.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    assert (ours.pad_token_id, ours.unk_token, ours.model_max_length) == (theirs.pad_token_id, theirs.unk_token, theirs.model_max_length)
    batch = [["so", "what", "are", "the", "risks"] * 20, ["café", "3.5", "don't", "😀", "ǅ", theirs.unk_token], []]
    for kwargs in ({"truncation": True, "max_length": 12}, {"truncation": True, "max_length": 10**9}):
        mine, reference = ours(batch, is_split_into_words=True, **kwargs), theirs(batch, is_split_into_words=True, **kwargs)
        assert mine["input_ids"] == reference["input_ids"] and mine["attention_mask"] == reference["attention_mask"]
        assert [mine.word_ids(i) for i in range(3)] == [reference.word_ids(i) for i in range(3)]
    assert ours("")["input_ids"] == theirs("")["input_ids"]


def test_runtime_tokenizer_matches_the_default_models():
    folder = hf_punctcase.DEFAULT_MODEL_DIR
    ours, theirs = RuntimeTokenizer.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    batch = [["Hello", "wörld", "i'm", "3,000", "[UNK]", "tokenization"], ["a"] * 400]
    for max_length in (16, 512):
        mine = ours(batch, is_split_into_words=True, truncation=True, max_length=max_length)
        reference = theirs(batch, is_split_into_words=True, truncation=True, max_length=max_length)
        assert mine["input_ids"] == reference["input_ids"]
        assert [mine.word_ids(i) for i in range(2)] == [reference.word_ids(i) for i in range(2)]


#: The start of a script run where torch, transformers, datasets and accelerate cannot be imported.
_BLOCKING = """
import importlib.abc, json, sys, time
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "datasets", "accelerate"):
            raise ImportError(f"{name} is blocked")
sys.meta_path.insert(0, Block())
"""

_BLOCKED_RUN = _BLOCKING + """
start = time.perf_counter()
import hf_punctcase
from hf_punctcase.runtime import OnDeviceRestorer
imported = time.perf_counter() - start
restorer = OnDeviceRestorer(sys.argv[1])
texts = json.loads(sys.argv[2])
result = restorer(texts)
heavy = sorted(name for name in sys.modules if name.split(".")[0] in ("torch", "transformers"))
print(json.dumps({"texts": [r["text"] for r in result], "heavy": heavy, "plugin": hf_punctcase.PLUGIN_AVAILABLE,
                  "import_seconds": imported}))
"""


def _run_blocked(script: str, folder, inputs, cwd) -> dict:
    """What ``script`` prints last, as JSON, run with the package's source on the path and ``folder`` and
    ``inputs`` (as JSON) as its arguments; the run must succeed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder), json.dumps(inputs)],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_runtime_runs_with_torch_and_transformers_blocked(exported, tmp_path):
    folder = exported[1]
    found = _run_blocked(_BLOCKED_RUN, folder, TEXTS, tmp_path)
    assert found["heavy"] == [] and found["plugin"] is False
    assert found["texts"] == [r["text"] for r in pipeline("punct-case", model=str(folder))(TEXTS)]


@pytest.mark.slow
def test_runtime_in_a_fresh_virtual_environment_without_torch(tiny_cnn_dir, tmp_path):
    """A clean venv with only what the runtime needs (onnxruntime, tokenizers, numpy, at the versions
    constraints.txt pins), installed by pip as it is configured (its cache and indexes):
    the package's source on PYTHONPATH imports without torch and restores the pipeline's text."""
    folder = export_onnx(tiny_cnn_dir, tmp_path / "onnx", int8=True).path
    venv = tmp_path / "venv"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
         "-c", str(REPO / "constraints.txt"), "onnxruntime", "tokenizers", "numpy"],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    installed = time.perf_counter() - start
    if install.returncode != 0:
        last = (install.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"pip could not install onnxruntime, tokenizers and numpy into a fresh venv here: {last}")
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True, timeout=60)
    assert probe.returncode != 0, "the fresh venv must not have torch"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(REPO)
    start = time.perf_counter()
    result = subprocess.run(
        [str(python), "-c", _BLOCKED_RUN, str(folder), json.dumps(TEXTS)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL,
    )
    ran = time.perf_counter() - start
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["heavy"] == [] and found["plugin"] is False
    assert found["texts"] == [r["text"] for r in pipeline("punct-case", model=str(folder))(TEXTS)]
    print(
        f"\nfresh venv: created and installed in {installed:.1f} s; import of the runtime "
        f"{found['import_seconds']:.2f} s; import + load + restore in {ran:.1f} s"
    )


_BLOCKED_STREAM = _BLOCKING + """
from hf_punctcase import StreamingRestorer
from hf_punctcase.runtime import OnDeviceRestorer
stream = StreamingRestorer(OnDeviceRestorer(sys.argv[1]))
words = json.loads(sys.argv[2])
entries = [e for i in range(0, len(words), 7) for e in stream.push(words[i:i + 7])] + stream.flush()
heavy = sorted(name for name in sys.modules if name.split(".")[0] in ("torch", "transformers"))
print(json.dumps({"words": [e["word"] for e in entries], "heavy": heavy}))
"""


def test_a_stream_runs_on_the_torch_free_runtime_as_on_the_pipeline(exported, tmp_path):
    from hf_punctcase import StreamingRestorer

    folder = exported[1]
    words = TEXTS[1].split()[:150] + TEXTS[2].split()
    restorer = OnDeviceRestorer(folder)

    def streamed(engine) -> list[str]:
        stream = StreamingRestorer(engine)
        return [e["word"] for i in range(0, len(words), 7) for e in stream.push(words[i:i + 7])] + [e["word"] for e in stream.flush()]

    # The pipeline's own equal settings: the stream's windows, restored whole.
    whole = restorer(words, is_split_into_words=True, window_words=40, context_words=10)
    assert streamed(restorer) == [e["word"] for e in whole["words"]]
    assert streamed(restorer) == streamed(hf_punctcase.load_pipeline(str(folder)))
    found = _run_blocked(_BLOCKED_STREAM, folder, words, tmp_path)
    assert found["heavy"] == [] and found["words"] == [e["word"] for e in whole["words"]]
