"""Checkpoints stored with int8 weights (hf_punctcase.quantization, `hf-punctcase quantize`): what is on
disk, and that they restore as the original through every way of loading."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import assert_same_restoration, run_cli, tiny_config

import hf_punctcase
from hf_punctcase.export.remote_code import REMOTE_CODE_TASK
from hf_punctcase.atomic_files import _umask
from hf_punctcase.quantization import (
    is_storage_quantized,
    quantize_checkpoint,
    simulate_int8_storage,
    stop_simulating_int8_storage,
    storage_quantization,
    weights_size,
)

SENTENCES = [
    "so what are the risks i am not technical",
    "we think that this is a good idea but you know it was really hard to say",
    "and then they went home because nobody could tell me how much it costs",
    "the doctor asked whether the patient had any pain in her chest or fever yesterday",
    "i bought an iphone and nasa said what",
    "it was a good idea but nobody could say how much",
]


@pytest.fixture(scope="module")
def decisive_model_dir(tmp_path_factory, tiny_tokenizer) -> str:
    """A tiny model whose heads are scaled up: a random tiny model's labels are near-ties that any
    rounding of its weights can flip, which would make comparing labels meaningless."""
    torch.manual_seed(1)
    model = hf_punctcase.JointTokenClassificationModel(tiny_config()).eval()
    with torch.no_grad():
        for head in (model.punct_classifier, model.case_classifier):
            head.weight.mul_(60.0)
    path = tmp_path_factory.mktemp("decisive")
    model.save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def quantized_dir(tmp_path_factory, decisive_model_dir) -> str:
    return str(quantize_checkpoint(decisive_model_dir, tmp_path_factory.mktemp("quantized") / "int8"))


def _restore(pipe) -> list[tuple[str, list[tuple[str, str]]]]:
    return [
        (result["text"], [(word["punctuation"], word["casing"]) for word in result["words"]])
        for result in pipe(SENTENCES)
    ]


def _encoder_weights(model_dir: str) -> list[str]:
    """Names of the encoder's Linear and Embedding weights of the model in ``model_dir``."""
    model = hf_punctcase.JointTokenClassificationModel(hf_punctcase.JointTokenClassificationConfig.from_pretrained(model_dir))
    return [
        f"{name}.weight"
        for name, module in model.named_modules()
        if name.startswith("encoder.") and isinstance(module, (torch.nn.Linear, torch.nn.Embedding))
    ]


def test_weights_are_stored_as_int8_per_row_and_the_folder_is_smaller(decisive_model_dir, quantized_dir):
    from safetensors import safe_open

    with safe_open(os.path.join(quantized_dir, "model.safetensors"), framework="pt") as handle:
        stored = {name: (handle.get_slice(name).get_dtype(), handle.get_slice(name).get_shape()) for name in handle.keys()}
    names = _encoder_weights(decisive_model_dir)
    assert "encoder.embeddings.word_embeddings.weight" in names and len(names) > 10
    for name in names:
        base = name.removesuffix(".weight")
        assert name not in stored, name  # no float copy left
        dtype, shape = stored[f"{base}._weight_qdata"]
        assert dtype == "I8", (name, dtype)
        assert stored[f"{base}._weight_scale"][1] == [shape[0], 1], name  # one scale per row
    # the heads keep their precision
    assert stored["punct_classifier.weight"][0] == "F32" and stored["case_classifier.weight"][0] == "F32"
    assert weights_size(quantized_dir) < 0.5 * weights_size(decisive_model_dir)  # fp32 source; a tiny model has a large header

    assert not is_storage_quantized(decisive_model_dir) and is_storage_quantized(quantized_dir)
    config = storage_quantization(quantized_dir)
    assert config["quant_method"] == "torchao" and config["include_input_output_embeddings"] is True
    (int8,) = config["quant_type"]["default"]["_data"]["fqn_to_config"].values()
    assert int8["_type"] == "Int8WeightOnlyConfig" and int8["_data"]["granularity"]["_type"] == "PerRow"
    for name in ("tokenizer.json", "tokenizer_config.json", "modeling.py", "pipeline.py"):
        assert os.path.isfile(os.path.join(quantized_dir, name)), name
    assert oct(os.stat(quantized_dir).st_mode & 0o777) == oct(0o777 & ~_umask())  # not mkdtemp's 0o700
    assert not [name for name in os.listdir(os.path.dirname(quantized_dir)) if name.startswith(".")]  # no leftovers


def test_quantized_checkpoint_restores_as_the_original(decisive_model_dir, quantized_dir):
    original = hf_punctcase.load_pipeline(decisive_model_dir, dtype=torch.float32)
    quantized = hf_punctcase.load_pipeline(quantized_dir, dtype=torch.float32)
    # loading turns the int8 weights back into plain parameters of the dtype asked for
    weight = quantized.model.encoder.embeddings.word_embeddings.weight
    assert type(weight) is torch.nn.Parameter and weight.dtype == torch.float32
    assert not getattr(quantized.model, "is_quantized", False)
    expected = _restore(original)
    # Labels equal wherever the original's best label leads by more than int8 rounding can move it
    # (0.1 a probability, below): a near tie on the last word may go either way.
    assert_same_restoration(quantized(SENTENCES, return_probabilities=True), original(SENTENCES, return_probabilities=True), atol=0.1)
    assert sum(a == b for a, b in zip(_restore(quantized), expected)) >= len(expected) - 1
    # the comparison means something: the labels vary, and the weights were really rounded
    labels = {label for _, words in expected for label in words}
    assert len({punct for punct, _ in labels}) >= 2 and len({case for _, case in labels}) >= 2
    text = SENTENCES[1]
    before = original(text, return_probabilities=True)["probabilities"]["punct"]
    after = quantized(text, return_probabilities=True)["probabilities"]["punct"]
    assert 0 < abs(before - after).max() < 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_pipeline_loads_it_in_bf16_and_fp32(decisive_model_dir, quantized_dir, dtype):
    from transformers import pipeline

    assert hf_punctcase.checkpoints.check_model_dir(quantized_dir) == quantized_dir
    pipe = pipeline("punct-case", model=quantized_dir, dtype=dtype)
    # every weight computes in the dtype asked for, the int8 ones included
    assert pipe.model.dtype == dtype
    assert {weight.dtype for weight in pipe.model.parameters()} == {dtype}
    # bf16 rounding on top of int8 can flip a near-tie, so compare probabilities and count agreements
    original = hf_punctcase.load_pipeline(decisive_model_dir, dtype=torch.float32)
    agree = total = 0
    for text in SENTENCES:
        expected, result = original(text, return_probabilities=True), pipe(text, return_probabilities=True)
        for task in ("punct", "case"):
            assert abs(expected["probabilities"][task] - result["probabilities"][task]).max() < 0.1
        for before, after in zip(expected["words"], result["words"]):
            total += 2
            agree += (before["punctuation"] == after["punctuation"]) + (before["casing"] == after["casing"])
    assert agree >= 0.95 * total
    pipe.model.to(torch.float32)  # a plain float model after loading: it casts like any other
    assert {weight.dtype for weight in pipe.model.parameters()} == {torch.float32}
    assert len(pipe(SENTENCES)) == len(SENTENCES)


def test_load_pipeline_default_dtype(quantized_dir):
    pipe = hf_punctcase.load_pipeline(quantized_dir)
    assert {weight.dtype for weight in pipe.model.parameters()} == {pipe.model.dtype}
    assert len(_restore(pipe)) == len(SENTENCES)


def test_trust_remote_code_without_the_plugin(quantized_dir, tmp_path):
    script = f"""
import json, sys, torch
from transformers import AutoModelForTokenClassification, pipeline
model = AutoModelForTokenClassification.from_pretrained({quantized_dir!r}, trust_remote_code=True, dtype=torch.bfloat16)
assert {{weight.dtype for weight in model.parameters()}} == {{torch.bfloat16}}
p = pipeline({REMOTE_CODE_TASK!r}, model={quantized_dir!r}, trust_remote_code=True, dtype=torch.float32)
print(json.dumps({{"results": [[r["text"], [[w["punctuation"], w["casing"]] for w in r["words"]]] for r in p({SENTENCES!r})],
    "embedding": type(p.model.encoder.embeddings.word_embeddings.weight).__name__,
    "class": type(model).__name__, "plugin_imported": "hf_punctcase" in sys.modules}}))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["plugin_imported"] is False and out["class"] == "JointTokenClassificationModel"
    assert out["embedding"] == "Parameter"
    expected = _restore(hf_punctcase.load_pipeline(quantized_dir, dtype=torch.float32))
    assert [(text, [tuple(word) for word in words]) for text, words in out["results"]] == expected


def test_a_loaded_quantized_model_saves_again_as_int8(quantized_dir, tmp_path):
    from hf_punctcase.hub import stage_checkpoint

    staged = stage_checkpoint(quantized_dir, tmp_path / "staged")  # what `hf-punctcase push` uploads
    assert is_storage_quantized(staged)
    assert weights_size(staged) == pytest.approx(weights_size(quantized_dir), rel=0.01)
    assert _restore(hf_punctcase.load_pipeline(staged, dtype=torch.float32)) == _restore(
        hf_punctcase.load_pipeline(quantized_dir, dtype=torch.float32)
    )


def test_a_loaded_quantized_model_trains_and_saves_as_plain_floats(quantized_dir, tmp_path):
    model = hf_punctcase.JointTokenClassificationModel.from_pretrained(quantized_dir, dtype=torch.float32)
    assert all(type(weight) is torch.nn.Parameter and weight.requires_grad for weight in model.parameters())
    assert getattr(model.config, "quantization_config", None) is None
    batch = {"input_ids": torch.tensor([[2, 10, 11, 12, 3]]), "attention_mask": torch.ones(1, 5, dtype=torch.long)}
    labels = torch.tensor([[-100, 1, 0, 2, -100]])
    model.train()
    model(**batch, punct_labels=labels).loss.backward()
    assert model.encoder.embeddings.word_embeddings.weight.grad is not None
    model.eval()
    with torch.no_grad():
        expected = model(**batch).punct_logits
    model.save_pretrained(tmp_path / "plain")
    assert not is_storage_quantized(tmp_path / "plain")
    reloaded = hf_punctcase.JointTokenClassificationModel.from_pretrained(tmp_path / "plain", dtype=torch.float32).eval()
    with torch.no_grad():
        torch.testing.assert_close(reloaded(**batch).punct_logits, expected)


def test_source_and_target_errors(decisive_model_dir, quantized_dir, tmp_path):
    with pytest.raises(FileExistsError, match="exists"):
        quantize_checkpoint(decisive_model_dir, quantized_dir)
    assert is_storage_quantized(quantized_dir)
    with pytest.raises(ValueError, match="already stored quantized"):
        quantize_checkpoint(quantized_dir, tmp_path / "twice")
    for holder in (decisive_model_dir, os.path.dirname(decisive_model_dir)):
        with pytest.raises(ValueError, match="holds the checkpoint itself"):
            quantize_checkpoint(decisive_model_dir, holder, overwrite=True)
    assert not is_storage_quantized(decisive_model_dir)
    assert not (tmp_path / "twice").exists()


def test_a_failure_leaves_the_target_as_it_was(monkeypatch, tiny_model_dir, tmp_path):
    import hf_punctcase.quantization as quantization

    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("mine")

    def fail(folder, staging):
        (staging / "model.safetensors").write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(quantization, "save_quantized", fail)
    with pytest.raises(OSError, match="No space left"):
        quantize_checkpoint(tiny_model_dir, target, overwrite=True)
    assert os.listdir(target) == ["keep.txt"] and (target / "keep.txt").read_text() == "mine"
    assert os.listdir(tmp_path) == ["out"]  # the half-written folder is gone


def test_cli_quantize_refuses_to_overwrite_then_replaces_with_overwrite(monkeypatch, capsys, tiny_model_dir, tmp_path):
    target = tmp_path / "out"
    code, out, err = run_cli(monkeypatch, capsys, ["quantize", tiny_model_dir, str(target)])
    assert code == 0, err
    assert out.startswith(f"wrote {target}: weights ") and "MB (int8)" in out
    assert is_storage_quantized(target)

    (target / "keep.txt").write_text("mine")
    before = sorted(os.listdir(target))
    code, out, err = run_cli(monkeypatch, capsys, ["quantize", tiny_model_dir, str(target)])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "exists" in err and "--overwrite" in err
    assert sorted(os.listdir(target)) == before and (target / "keep.txt").read_text() == "mine"

    code, _, err = run_cli(monkeypatch, capsys, ["quantize", tiny_model_dir, str(target), "--overwrite"])
    assert code == 0, err
    assert not (target / "keep.txt").exists() and is_storage_quantized(target)
    assert sorted(os.listdir(tmp_path)) == ["out"]  # nothing left beside it


def test_cli_quantize_missing_source_is_one_line(monkeypatch, capsys, tmp_path):
    code, out, err = run_cli(monkeypatch, capsys, ["quantize", str(tmp_path / "nope"), str(tmp_path / "out")])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "does not exist" in err and str(tmp_path / "nope") in err
    assert not (tmp_path / "out").exists()
    assert os.listdir(tmp_path) == []


def test_card_facts_name_int8_storage(decisive_model_dir, quantized_dir):
    from hf_punctcase.cards.checkpoint import card_data_for_checkpoint
    from hf_punctcase.cards.weights import INT8_WEIGHTS, parameter_count, stored_dtype

    assert stored_dtype(quantized_dir) == "I8" and stored_dtype(decisive_model_dir) == "F32"
    assert parameter_count(quantized_dir) == parameter_count(decisive_model_dir)  # scales are not parameters
    assert card_data_for_checkpoint(quantized_dir).weights_dtype == INT8_WEIGHTS


def test_training_for_int8_storage_computes_what_the_stored_model_computes(decisive_model_dir, quantized_dir, tiny_tokenizer):
    """simulate_int8_storage rounds exactly as int8 storage does, trains the float weights underneath,
    and leaves the parameter names (so Trainer checkpoints) as they were."""
    batch = tiny_tokenizer(SENTENCES, padding=True, return_tensors="pt")
    model = hf_punctcase.JointTokenClassificationModel.from_pretrained(decisive_model_dir, dtype=torch.float32).eval()
    float_weights = {name: value.clone() for name, value in model.state_dict().items()}
    with torch.no_grad():
        in_float = model(**batch).punct_logits
    assert simulate_int8_storage(model) == len(_encoder_weights(decisive_model_dir))
    assert set(model.state_dict()) == set(float_weights)
    stored = hf_punctcase.JointTokenClassificationModel.from_pretrained(quantized_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        simulated, from_storage = model(**batch), stored(**batch)
    for head in ("punct_logits", "case_logits"):
        assert torch.equal(simulated[head], from_storage[head]), head
    assert not torch.equal(simulated.punct_logits, in_float)  # the rounding is there to see

    # gradients reach the float weights through the rounding (straight through)
    model.train()
    out = model(**batch, punct_labels=torch.zeros_like(batch["input_ids"]), case_labels=torch.zeros_like(batch["input_ids"]))
    out.loss.backward()
    assert model.encoder.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    assert all(p.grad is not None for n, p in model.named_parameters() if n.startswith("encoder.") and n.endswith(".weight") and p.dim() == 2)

    stop_simulating_int8_storage(model)
    kinds = {type(module) for module in model.modules()}
    assert not any(kind.__name__.startswith("FakeQuantized") for kind in kinds)
    assert all(torch.equal(value, float_weights[name]) for name, value in model.state_dict().items())


def test_an_int8_stored_checkpoint_exports_to_onnx_from_its_dequantized_weights(quantized_dir, tmp_path):
    from hf_punctcase.export.onnx import export_onnx

    fp32 = export_onnx(quantized_dir, tmp_path / "fp32")
    config = json.loads((fp32.path / "config.json").read_text())
    assert "quantization_config" not in config  # the graph's weights are plain, not torchao's
    assert fp32.parity["punct_agreement"] == 1.0 and fp32.parity["case_agreement"] == 1.0
    pipe = hf_punctcase.load_pipeline(str(fp32.path))
    assert _restore(pipe) == _restore(hf_punctcase.load_pipeline(quantized_dir, dtype=torch.float32))
    int8 = export_onnx(quantized_dir, tmp_path / "int8", int8=True, per_channel=True)
    assert "quantization_config" not in json.loads((int8.path / "config.json").read_text())
    plan = hf_punctcase.load_pipeline(str(int8.path)).execution_plan
    assert (plan.runtime, plan.precision) == ("onnxruntime", "int8")


def test_int8_storage_is_read_bit_for_bit_as_torchao_dequantizes_it(quantized_dir):
    """The plugin's own reader (no torchao) against transformers' torchao integration on the same folder."""
    from transformers import PreTrainedModel

    from hf_punctcase.models.common.modeling import int8_stored_state_dict
    from hf_punctcase.quantization import import_torchao_quietly

    import_torchao_quietly()
    through_torchao = PreTrainedModel.from_pretrained.__func__(
        hf_punctcase.JointTokenClassificationModel, quantized_dir, dtype=torch.float32
    )
    expected = {
        name: (tensor.dequantize() if hasattr(tensor, "dequantize") and type(tensor) is not torch.Tensor else tensor)
        for name, tensor in through_torchao.state_dict().items()
    }
    assert any(type(tensor) is not torch.Tensor for tensor in through_torchao.state_dict().values())
    read = int8_stored_state_dict(quantized_dir)
    assert set(read) == set(expected)
    for name, tensor in expected.items():
        assert read[name].dtype == tensor.dtype and torch.equal(read[name], tensor), name


def test_an_int8_stored_checkpoint_loads_and_restores_where_torchao_is_not_installed(decisive_model_dir, quantized_dir):
    """A plain install has no torchao: loading hides it from the process and restores as the original."""
    script = f"""
import importlib.util, sys
find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] == "torchao" else find_spec(name, *a)
class NoTorchao:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torchao":
            raise ModuleNotFoundError("No module named 'torchao'")
sys.meta_path.insert(0, NoTorchao())
import hf_punctcase
pipe = hf_punctcase.load_pipeline({quantized_dir!r}, runtime="torch", dtype="float32")
print(pipe({SENTENCES[0]!r})["text"])
assert "torchao" not in sys.modules
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    original = hf_punctcase.load_pipeline(decisive_model_dir, runtime="torch", dtype="float32")
    assert done.stdout.strip() == original(SENTENCES[0])["text"]


def test_writing_int8_storage_without_torchao_says_which_extra_to_install(monkeypatch, decisive_model_dir, tmp_path):
    import transformers.utils

    monkeypatch.setattr(transformers.utils, "is_torchao_available", lambda: False)
    with pytest.raises(ImportError, match=r"needs torchao: pip install 'hf_punctcase\[quantize\]'"):
        quantize_checkpoint(decisive_model_dir, tmp_path / "int8")
    assert not (tmp_path / "int8").exists()
