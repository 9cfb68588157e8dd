"""The rule that picks runtime and precision, on every kind of machine (described, not detected), and
the cached int8 graph the default runs on CPUs without bf16 instructions."""

from __future__ import annotations

import json
import os
import select
import signal

import pytest
import torch

import hf_punctcase
from hf_punctcase.embedded import DEFAULT_MODEL_DIR, ON_DEVICE_MODEL_DIR
from hf_punctcase.hardware import Hardware, detect_hardware
from hf_punctcase.loading import plan_execution

PLAIN = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2")
AMX = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", amx=True, avx512_bf16=True, vnni=True)
ZEN4 = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX512", avx512_bf16=True, vnni=True)
GRAVITON = Hardware(cpu="test CPU", machine="aarch64", cpus=2, isa="DEFAULT", arm_bf16=True)
H100 = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2", cuda=("H100",), cuda_bf16=True)
T4 = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2", cuda=("T4",), cuda_bf16=False)


@pytest.mark.parametrize(
    "hardware, model, device, expected",
    [
        (PLAIN, "default", None, ("onnxruntime", "int8", "cpu")),
        (ZEN4, "default", None, ("torch", "bfloat16", "cpu")),
        (GRAVITON, "default", None, ("onnxruntime", "int8", "cpu")),
        (AMX, "default", None, ("torch", "bfloat16", "cpu")),
        (PLAIN, "CHECKPOINT", None, ("torch", "float32", "cpu")),
        (ZEN4, "CHECKPOINT", None, ("torch", "bfloat16", "cpu")),
        (GRAVITON, "CHECKPOINT", "cpu", ("torch", "bfloat16", "cpu")),
        (AMX, "CHECKPOINT", -1, ("torch", "bfloat16", "cpu")),
        (H100, "default", "cuda:0", ("torch", "bfloat16", "cuda:0")),
        (T4, "CHECKPOINT", 0, ("torch", "float16", "cuda:0")),
        (AMX, "on-device", None, ("onnxruntime", "int8", "cpu")),
        (PLAIN, None, None, ("onnxruntime", "int8", "cpu")),
    ],
)
def test_the_rule_on_every_kind_of_machine(hardware, model, device, expected, tiny_model_dir):
    model = tiny_model_dir if model == "CHECKPOINT" else model
    plan = plan_execution(model, device=device, hardware=hardware)
    assert (plan.runtime, plan.precision, plan.device) == expected
    assert plan.reason and plan.describe().startswith(f"{plan.runtime} {plan.precision} on {plan.device}: ")
    assert (plan.torch_dtype is None) == (plan.runtime == "onnxruntime")


def test_a_dtype_asked_for_wins_and_the_int8_graph_can_be_left_out(tiny_model_dir):
    plan = plan_execution("default", dtype=torch.float32, hardware=AMX)
    assert (plan.runtime, plan.torch_dtype, plan.reason) == ("torch", torch.float32, "the dtype asked for")
    assert plan_execution("default", dtype="bfloat16", hardware=PLAIN).torch_dtype == torch.bfloat16
    assert plan_execution("default", hardware=PLAIN, int8_graph=False).precision == "float32"
    assert plan_execution("default", hardware=ZEN4, int8_graph=False).precision == "bfloat16"


def test_this_machine_is_described_and_the_pipeline_says_how_it_runs(tiny_model_dir):
    hardware = detect_hardware()
    assert hardware.cpus >= 1 and hardware.isa and hardware.cpu
    assert json.loads(json.dumps(hardware.as_dict()))["description"] == hardware.describe()
    pipe = hf_punctcase.load_pipeline(tiny_model_dir)
    assert pipe.execution_plan == plan_execution(tiny_model_dir)
    assert pipe.model.dtype == pipe.execution_plan.torch_dtype
    given = hf_punctcase.PunctCasePipeline(model=pipe.model, tokenizer=pipe.tokenizer)
    assert given.execution_plan.reason == "the model as given"
    assert hf_punctcase.load_pipeline("on-device").execution_plan.runtime == "onnxruntime"


def test_the_int8_graph_is_built_once_and_kept(tiny_model_dir, tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    from hf_punctcase.export.cache import build_int8_graph, cached_int8_graph

    def int8_graph(folder):
        model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(folder)
        return build_int8_graph(folder, model, AutoTokenizer.from_pretrained(folder))

    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))
    assert cached_int8_graph(tiny_model_dir) is None
    folder = int8_graph(tiny_model_dir)
    assert cached_int8_graph(tiny_model_dir) == folder
    assert folder.parent == tmp_path / "cache" / "onnx" and (folder / "model.onnx").is_file()
    info = json.loads((folder / "onnx_export.json").read_text())
    assert info["quantization"]["weight_type"] == "uint8" and info["quantization"]["op_types"] == ["MatMul"]
    built = os.stat(folder / "model.onnx").st_mtime_ns
    assert int8_graph(tiny_model_dir) == folder and os.stat(folder / "model.onnx").st_mtime_ns == built
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_an_unwritable_cache_falls_back_to_torch_and_says_why(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(blocker / "cache"))  # under a file: cannot be made
    monkeypatch.setattr("hf_punctcase.loading.detect_hardware", lambda: PLAIN)
    pipe = hf_punctcase.load_pipeline()
    plan = pipe.execution_plan
    assert plan.runtime == "torch" and plan.precision == "float32" and "could not be built" in plan.reason
    assert pipe.model.dtype == torch.float32


def test_dynamically_quantized_graphs_restore_a_transcript_whatever_its_batch():
    from hf_punctcase.runtime import OnDeviceRestorer

    texts = [
        "so what are the risks i am not technical",
        "hello how are you doing today i hope you are well and that the trip was not too long",
        "the doctor asked whether the patient had any pain",
        "okay so the first thing we need to do is look at the numbers from last year then we can compare them",
    ] * 2
    alone = [OnDeviceRestorer("on-device", batch_size=1)(text, return_probabilities=True) for text in texts]
    side_by_side = OnDeviceRestorer("on-device", batch_size=4)
    side_by_side.backend.sequence_workers = 2  # a batch's sequences run on two threads, whatever the CPU count
    for restorer in (side_by_side, hf_punctcase.load_pipeline("on-device")):
        batched = restorer(texts, batch_size=4, return_probabilities=True) if not isinstance(restorer, OnDeviceRestorer) \
            else restorer(texts, return_probabilities=True)
        for one, other in zip(alone, batched):
            assert one["text"] == other["text"]
            for task in one["probabilities"]:
                assert (one["probabilities"][task] == other["probabilities"][task]).all()
    assert ON_DEVICE_MODEL_DIR.is_dir() and DEFAULT_MODEL_DIR.is_dir()


def test_per_token_int8_export_agrees_with_torch_and_ignores_the_batch(tiny_model_dir, tmp_path, monkeypatch, capsys):
    import onnx
    from conftest import assert_same_restoration, run_cli

    code, out, err = run_cli(monkeypatch, capsys, ["export-onnx", tiny_model_dir, str(tmp_path / "out"), "--per-token"])
    assert code == 0, err
    assert "(int8, per-token activation scales)" in out
    ops = {node.op_type for node in onnx.load(str(tmp_path / "out" / "model.onnx")).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" not in ops
    pipe = hf_punctcase.load_pipeline(str(tmp_path / "out"))
    assert not pipe.backend.one_sequence_at_a_time  # per-token scales: batches run whole
    texts = ["so what are the risks i am not technical", "the doctor asked whether the patient had any pain in her chest"]
    alone = [pipe(text, batch_size=1, return_probabilities=True) for text in texts]
    assert_same_restoration(pipe(texts, batch_size=2, return_probabilities=True), alone, atol=1e-5)
    with pytest.raises(SystemExit) as exit_info:
        run_cli(monkeypatch, capsys, ["export-onnx", tiny_model_dir, str(tmp_path / "x"), "--per-token", "--int8"])
    assert exit_info.value.code == 2 and "choose one" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_worker_restores_with_a_backend_made_before_the_fork():
    # datasets.map(num_proc=...) forks workers after the model is loaded: the threads that run a batch's
    # sequences side by side do not survive the fork and must be made again in the child.
    from hf_punctcase.runtime import OnDeviceRestorer

    restorer = OnDeviceRestorer("on-device", batch_size=4)
    restorer.backend.sequence_workers = 2
    texts = ["so what are the risks i am not technical", "the doctor asked whether the patient had any pain"] * 2
    expected = [result["text"] for result in restorer(texts)]
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.write(write_end, "\n".join(result["text"] for result in restorer(texts)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    readable, _, _ = select.select([read_end], [], [], 120)
    if not readable:  # the child hangs on threads that the fork did not copy
        os.kill(child, signal.SIGKILL)
    with os.fdopen(read_end, "rb") as pipe:
        received = pipe.read().decode() if readable else None
    os.waitpid(child, 0)
    assert received is not None, "the forked child did not finish within 120 s"
    assert received.split("\n") == expected


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_reduced_precision_on_the_cpu_restores_a_transcript_whatever_its_batch(dtype, tiny_model_dir):
    """bf16 kernels (AMX, avx512_bf16) round a product by its shape: no padded sequence or batch mate
    may reach the model, so a text gets the same labels and the same probabilities alone and batched."""
    import numpy as np

    pipe = hf_punctcase.load_pipeline(tiny_model_dir, dtype=dtype)
    shapes: list[tuple[int, ...]] = []
    pipe.model.register_forward_pre_hook(lambda module, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    texts = ["so what are the risks i am not technical " * n for n in (1, 7, 2, 30)] + ["hello"]
    alone = [pipe(text, return_probabilities=True) for text in texts]
    alone_shapes, shapes[:] = sorted(shapes), []
    batched = pipe(texts, batch_size=4, return_probabilities=True)
    assert sorted(shapes) == alone_shapes and all(shape[0] == 1 for shape in shapes)
    for one, other in zip(batched, alone):
        assert one["text"] == other["text"]
        for task in one["probabilities"]:
            np.testing.assert_array_equal(one["probabilities"][task], other["probabilities"][task])
