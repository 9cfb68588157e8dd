"""OpenVINO as a third runtime through the format seam: an OpenVINO folder loads through the same
``from_pretrained`` and pipeline, a torch checkpoint runs as its cached OpenVINO graph when asked (or
where the plan picks it: CPUs with AMX or avx512_bf16), and results agree with torch and ignore the batch."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
import transformers

import hf_punctcase
from hf_punctcase.checkpoints import CheckpointError
from hf_punctcase.execution import ONNXRUNTIME, OPENVINO, TORCH
from hf_punctcase.export import cache
from hf_punctcase.hardware import Hardware
from hf_punctcase.loading import INT8_GRAPH, Artifacts, plan

from conftest import assert_same_restoration

pytest.importorskip("openvino", reason="OpenVINO is not installed")
from hf_punctcase.backends.openvino import OpenVinoBackend
from hf_punctcase.formats.openvino import OPENVINO_MODEL_FILE, OPENVINO_WEIGHTS_FILE, OpenVinoModel  # noqa: E402

TEXTS = ["so what are the risks i am not technical " * n for n in (1, 6, 2)] + ["hello there"]
AMX = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", amx=True, avx512_bf16=True, vnni=True, openvino=True)
AMX_WITHOUT_OPENVINO = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", amx=True, avx512_bf16=True, vnni=True)
ZEN = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", avx512_bf16=True, vnni=True, openvino=True)
PLAIN = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2", openvino=True)
PREFERS_GRAPH = Artifacts(folder=None, runtime=TORCH, preferred_cpu_runtime=INT8_GRAPH)


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def openvino_folder(tiny_model_dir, own_cache):
    """The tiny checkpoint's OpenVINO graph, as the cache builds it: a folder of the OpenVINO format."""
    from transformers import AutoTokenizer

    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(tiny_model_dir)
    return cache.build_graph(tiny_model_dir, model, AutoTokenizer.from_pretrained(tiny_model_dir), "openvino")


def test_the_plan_picks_openvino_bf16_on_bf16_cpus_for_a_checkpoint_that_prefers_a_graph():
    assert plan(PREFERS_GRAPH, AMX).runtime == OPENVINO and plan(PREFERS_GRAPH, AMX).precision == "bf16"
    on_zen = plan(PREFERS_GRAPH, ZEN)
    assert (on_zen.runtime, on_zen.precision) == (OPENVINO, "bf16") and on_zen.reason.startswith("avx512_bf16: ")
    assert plan(PREFERS_GRAPH, AMX_WITHOUT_OPENVINO).runtime == TORCH  # not installed: torch bf16
    assert plan(Artifacts(folder=None, runtime=TORCH), AMX).runtime == TORCH  # a checkpoint that prefers nothing
    assert plan(PREFERS_GRAPH, PLAIN).runtime == ONNXRUNTIME  # no bf16 instructions: the int8 graph
    assert plan(PREFERS_GRAPH, AMX, dtype="float32").runtime == TORCH  # a dtype asked for wins
    forced = plan(Artifacts(folder=None, runtime=TORCH), PLAIN, runtime="openvino")
    assert (forced.runtime, forced.precision, forced.reason) == (OPENVINO, "fp32", "the runtime asked for")
    assert plan(PREFERS_GRAPH, PLAIN, runtime="torch").runtime == TORCH  # not the int8 graph built from it
    assert plan(PREFERS_GRAPH, AMX, runtime="torch") == plan(PREFERS_GRAPH, AMX_WITHOUT_OPENVINO)  # torch bf16
    with pytest.raises(ValueError, match="runtime must be one of auto, torch, onnxruntime, openvino"):
        plan(PREFERS_GRAPH, PLAIN, runtime="tensorrt")
    with pytest.raises(ValueError, match="an export run by onnxruntime: it cannot run with openvino"):
        plan(Artifacts(folder=None, runtime=ONNXRUNTIME), PLAIN, runtime="openvino")
    with pytest.raises(ValueError, match="runs on the CPU in the precision it picks"):
        plan(PREFERS_GRAPH, PLAIN, runtime="openvino", dtype="bfloat16")


def test_an_openvino_folder_loads_through_from_pretrained_and_the_pipeline(openvino_folder, tiny_model_dir):
    assert sorted(path.name for path in openvino_folder.glob("openvino_model.*")) == [OPENVINO_WEIGHTS_FILE, OPENVINO_MODEL_FILE]
    assert not (openvino_folder / "model.onnx").exists()
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(openvino_folder)
    assert isinstance(model, OpenVinoModel)
    pipe = transformers.pipeline("punct-case", model=str(openvino_folder))
    assert pipe.execution_plan.runtime == OPENVINO and pipe.execution_plan == hf_punctcase.load_pipeline(openvino_folder).execution_plan
    expected = hf_punctcase.load_pipeline(tiny_model_dir, dtype=torch.float32)(TEXTS, return_probabilities=True)
    if pipe.execution_plan.precision == "fp32":
        assert_same_restoration(pipe(TEXTS, return_probabilities=True), expected, atol=1e-4)
    with pytest.raises(ValueError, match="runs on the CPU, not on cuda:0"):
        hf_punctcase.load_pipeline(openvino_folder, device="cuda:0")


def test_an_openvino_folder_takes_the_thread_count_load_pipeline_passes_every_graph(openvino_folder):
    # load_pipeline names OpenVINO's threads intra_op_num_threads, as ONNX Runtime's; an OpenVINO folder
    # refused the name before.
    pipe = hf_punctcase.load_pipeline(openvino_folder, intra_op_num_threads=1)
    assert pipe.model.backend._config["INFERENCE_NUM_THREADS"] == 1
    assert pipe(TEXTS) == hf_punctcase.load_pipeline(openvino_folder)(TEXTS)
    with pytest.raises(ValueError, match="disagree"):
        hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(openvino_folder, num_threads=2, intra_op_num_threads=1)


def test_a_torch_checkpoint_runs_as_its_openvino_graph_when_asked(tiny_model_dir, own_cache, monkeypatch):
    first = hf_punctcase.load_pipeline(tiny_model_dir, runtime="openvino")
    assert isinstance(first.model, OpenVinoModel) and first.execution_plan.runtime == OPENVINO
    expected = hf_punctcase.load_pipeline(tiny_model_dir, dtype=torch.float32)(TEXTS, return_probabilities=True)
    if first.execution_plan.precision == "fp32":
        assert_same_restoration(first(TEXTS, return_probabilities=True), expected, atol=1e-4)
    # Built once: a second load runs the cached graph without loading the torch model.
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    def no_torch_model(*args, **kwargs):
        raise AssertionError("the torch model was loaded")

    monkeypatch.setattr(_BaseAutoModelClass, "from_pretrained", classmethod(no_torch_model))
    again = transformers.pipeline("punct-case", model=str(tiny_model_dir), model_kwargs={"runtime": "openvino"})
    assert isinstance(again.model, OpenVinoModel) and again(TEXTS) == first(TEXTS)
    with pytest.raises(ValueError, match="runtime must be one of"):
        hf_punctcase.load_pipeline(tiny_model_dir, runtime="tensorrt")


def test_in_bf16_each_sequence_runs_alone_and_the_batch_changes_nothing(openvino_folder):
    """Asked for bf16 (which OpenVINO computes where the CPU has bf16 units), a batch's sequences run
    one at a time on their own tokens: the probabilities alone and batched are the same."""
    backend = OpenVinoBackend(openvino_folder / OPENVINO_MODEL_FILE, precision="bf16")
    rng = np.random.default_rng(0)
    lengths = (9, 31, 17)
    ids = np.zeros((3, 31), dtype=np.int64)
    mask = np.zeros((3, 31), dtype=np.int64)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(5, 90, size=length)
        mask[row, :length] = 1
    batched = backend(ids, mask)
    for row, length in enumerate(lengths):
        alone = backend(ids[row : row + 1, :length], mask[row : row + 1, :length])
        for task in alone:
            np.testing.assert_array_equal(batched[task][row, :length], alone[task][0])


def test_a_broken_openvino_folder_is_one_error(openvino_folder, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(openvino_folder, broken)
    (broken / OPENVINO_WEIGHTS_FILE).unlink()
    with pytest.raises(CheckpointError, match=f"{OPENVINO_MODEL_FILE} has no {OPENVINO_WEIGHTS_FILE} beside it"):
        hf_punctcase.load_pipeline(broken)
    shutil.copyfile(openvino_folder / OPENVINO_WEIGHTS_FILE, broken / OPENVINO_WEIGHTS_FILE)
    (broken / OPENVINO_MODEL_FILE).write_text(json.dumps({"not": "xml"}))
    with pytest.raises(CheckpointError, match="is not an OpenVINO IR graph"):
        hf_punctcase.load_pipeline(broken)
