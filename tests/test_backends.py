"""The backend protocol (hf_punctcase.backends.Backend), kept by every runtime the plan can pick."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import hf_punctcase
from hf_punctcase.backends import Backend
from hf_punctcase.tasks import tasks_of

RUNTIMES = ["torch", "onnxruntime", "openvino"]


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))


def _batch(tokenizer, texts):
    encoded = tokenizer(texts, padding=True, return_tensors="np")
    return encoded["input_ids"], encoded["attention_mask"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_runtime_keeps_the_backend_protocol(tiny_model_dir, own_cache, runtime):
    pipe = hf_punctcase.load_pipeline(tiny_model_dir, runtime=runtime)
    backend = pipe.backend
    assert isinstance(backend, Backend) and type(backend).__module__ == f"hf_punctcase.backends.{runtime}"
    config = pipe.model.config
    labels = {task.name: task.labels_in(config) for task in tasks_of(config)}
    texts = ["the cat sat", "a dog ran to the park and then it sat down on the mat", "so"]
    input_ids, attention_mask = _batch(pipe.tokenizer, texts)

    every = backend(input_ids, attention_mask)
    assert list(every) == list(labels)
    for task, probs in every.items():
        assert probs.dtype == np.float32 and probs.shape == (*input_ids.shape, len(labels[task]))
        real = attention_mask.astype(bool)
        assert np.allclose(probs[real].sum(-1), 1.0, atol=1e-5)
    assert list(backend(input_ids, attention_mask, tasks=("punct",))) == ["punct"]
    with pytest.raises(ValueError, match="no output for nothing"):
        backend(input_ids, attention_mask, tasks=("nothing",))

    # Batch independence: each sequence alone gives what it gives in the batch.
    for row, text in enumerate(texts):
        alone_ids, alone_mask = _batch(pipe.tokenizer, [text])
        alone = backend(alone_ids, alone_mask)
        size = int(alone_mask.sum())
        for task in labels:
            np.testing.assert_allclose(every[task][row, :size], alone[task][0, :size], atol=1e-5)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_runtime_checks_the_heads_the_config_lists(tiny_model_dir, own_cache, runtime):
    backend = hf_punctcase.load_pipeline(tiny_model_dir, runtime=runtime).backend
    config = hf_punctcase.load_pipeline(tiny_model_dir, runtime="torch").model.config
    labels = {task.name: task.labels_in(config) for task in tasks_of(config)}
    backend.check_heads(labels)
    with pytest.raises(ValueError, match="no disfluency_logits output"):
        backend.check_heads({**labels, "disfluency": ("O", "D")})
    with pytest.raises(ValueError, match=r"gives \d+ punct classes but config.json has 9 punct labels"):
        backend.check_heads({**labels, "punct": tuple(f"P{i}" for i in range(9))})


def _warnings_of(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "always::FutureWarning", "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return result.stderr


def test_the_backends_old_places_still_work_with_a_warning_naming_the_new_one():
    stderr = _warnings_of("import hf_punctcase.runtime.onnx_backend as old; from hf_punctcase.backends.onnxruntime import OnnxBackend; assert old.OnnxBackend is OnnxBackend")
    assert "hf_punctcase.runtime.onnx_backend is now hf_punctcase.backends.onnxruntime" in stderr
    stderr = _warnings_of(
        "import hf_punctcase.pipelines as p; from hf_punctcase.backends.torch import TorchBackend; assert p.TorchBackend is TorchBackend"
    )
    assert "hf_punctcase.pipelines.TorchBackend is now hf_punctcase.backends.torch.TorchBackend" in stderr


def test_importing_the_backends_imports_no_runtime():
    code = "import sys, hf_punctcase.backends; print(sorted(m for m in ('onnxruntime', 'openvino') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert result.stdout.strip() == "[]"
