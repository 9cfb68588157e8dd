"""Saving the pipeline's model writes the portable checkpoint whatever runtime the plan picked: the same
files from every graph runtime, weights and the code that loads them where the plugin is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import hf_punctcase
from hf_punctcase.export.remote_code import REMOTE_CODE_TASK
from hf_punctcase.quantization import quantize_checkpoint

TEXT = "so what are the risks i am not technical and how long will it take"


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def int8_dir(tiny_model_dir, tmp_path_factory) -> str:
    """A checkpoint stored as the embedded models are: int8 weights, no code files of its own."""
    folder = quantize_checkpoint(tiny_model_dir, tmp_path_factory.mktemp("int8") / "model")
    for name in os.listdir(folder):
        if name.endswith(".py"):
            os.remove(folder / name)
    return str(folder)


def test_the_saved_checkpoint_does_not_depend_on_the_runtime_the_plan_picked(int8_dir, own_cache, tmp_path):
    saved = {}
    for runtime in ("onnxruntime", "openvino"):
        pipe = hf_punctcase.load_pipeline(int8_dir, runtime=runtime)
        assert pipe.model.runtime == runtime
        pipe.model.save_pretrained(tmp_path / runtime)
        saved[runtime] = {name: (tmp_path / runtime / name).read_bytes() for name in sorted(os.listdir(tmp_path / runtime))}
    assert saved["onnxruntime"] == saved["openvino"]
    files = set(saved["openvino"])
    assert "model.safetensors" in files and "modeling.py" in files and not files & {"model.onnx", "openvino_model.xml"}
    config = json.loads(saved["openvino"]["config.json"])
    assert "auto_map" in config and "quantization_config" not in config


def test_a_model_the_plan_cast_to_bf16_saves_the_checkpoint_as_a_graph_does(int8_dir, own_cache, tmp_path, monkeypatch):
    import torch

    from hf_punctcase.hardware import Hardware

    graph = hf_punctcase.load_pipeline(int8_dir, runtime="onnxruntime")
    graph.model.save_pretrained(tmp_path / "graph")
    # A CPU with bf16 units, whatever this one has: the plan runs the torch model in bf16 there.
    amx = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", amx=True, avx512_bf16=True, vnni=True)
    monkeypatch.setattr("hf_punctcase.loading.detect_hardware", lambda: amx)
    pipe = hf_punctcase.load_pipeline(int8_dir, runtime="torch")
    assert pipe.model.dtype == torch.bfloat16
    pipe.model.save_pretrained(tmp_path / "torch")
    for folder in ("graph", "torch"):
        assert sorted(os.listdir(tmp_path / folder)) == sorted(os.listdir(tmp_path / "graph"))
    for name in os.listdir(tmp_path / "graph"):
        assert (tmp_path / "torch" / name).read_bytes() == (tmp_path / "graph" / name).read_bytes(), name
    # The pipeline's own model stays as the plan made it.
    assert pipe.model.dtype == torch.bfloat16


def test_a_checkpoint_saved_from_a_graph_loads_where_the_plugin_is_not_installed(int8_dir, own_cache, tmp_path):
    pipe = hf_punctcase.load_pipeline(int8_dir, runtime="openvino")
    pipe.save_pretrained(tmp_path / "saved")
    script = f"""
import json, sys, torch
from transformers import pipeline
p = pipeline({REMOTE_CODE_TASK!r}, model={str(tmp_path / "saved")!r}, trust_remote_code=True, dtype=torch.float32)
print(json.dumps({{"text": p({TEXT!r})["text"], "plugin_imported": "hf_punctcase" in sys.modules}}))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["plugin_imported"] is False
    assert out["text"] == hf_punctcase.load_pipeline(int8_dir, runtime="torch", dtype="float32")(TEXT)["text"]
