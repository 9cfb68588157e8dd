"""Fault injection: checkpoints whose files are all there and parse, but whose contents disagree (weights
and config, config fields of the wrong type, tokenizers the tokenizers library cannot read, pickles
and ONNX graphs that are not whole), and arguments that are not a dtype or not a punct-case model.

Each checkpoint fault is made in a copy of a tiny checkpoint and tried through ``load_pipeline`` and
``hf-punctcase restore``: one error (exit code 2 and one line on stderr from the command line) naming the
folder and what is wrong, before any model is built. transformers' own ``pipeline("punct-case")`` reads
config.json itself first and reports faults its own way; where the auto class finds one, transformers'
error holds the library's message (the last test here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import BertConfig, BertModel, pipeline

import hf_punctcase
from conftest import run_cli
from hf_punctcase.checkpoints import CheckpointError
from hf_punctcase.embedded import ACCURATE_MODEL_DIR, ON_DEVICE_MODEL_DIR


def _edit_json(folder: Path, name: str, edit) -> None:
    data = json.loads((folder / name).read_text())
    edit(data)
    (folder / name).write_text(json.dumps(data))


def _edit_encoder(**fields):
    return lambda folder: _edit_json(folder, "config.json", lambda config: config["encoder"].update(fields))


def _edit_config(**fields):
    return lambda folder: _edit_json(folder, "config.json", lambda config: config.update(fields))


def _edit_tensors(folder: Path, edit) -> None:
    tensors = load_file(folder / "model.safetensors")
    edit(tensors)
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})


def _drop_query_and_key(folder: Path) -> None:
    def drop(tensors):
        for name in [n for n in tensors if n.endswith(("attention.self.query.weight", "attention.self.key.weight"))]:
            del tensors[name]

    _edit_tensors(folder, drop)


class _RunsCode:
    def __reduce__(self):
        return (print, ("code from the pickle ran",))


def _pickle_with_code(folder: Path) -> None:
    torch.save({"weight": _RunsCode()}, folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()


def _random_bin(folder: Path) -> None:
    (folder / "pytorch_model.bin").write_bytes(os.urandom(5000))
    (folder / "model.safetensors").unlink()


#: name → (how to break a copy of the tiny checkpoint, what the message must say)
CHECKPOINT_FAULTS = {
    "query and key weights missing": (
        _drop_query_and_key, "the weights do not fit the model config.json describes: they lack encoder.encoder.layer.0.attention.self.query.weight"
    ),
    "a tensor the model lacks": (
        lambda f: _edit_tensors(f, lambda t: t.update(extra=torch.zeros(3))), "they have extra extra"
    ),
    "position table smaller than the weights'": (
        _edit_encoder(max_position_embeddings=4),
        "config.json makes encoder.embeddings.position_embeddings.weight [4, 32] but the weights' is [128, 32]",
    ),
    "10,000 encoder layers": (
        _edit_encoder(num_hidden_layers=10_000),
        "config.json encoder num_hidden_layers is 10000 but the weights hold 2 layers (encoder.encoder.layer.0-1)",
    ),
    "lexicon an int": (_edit_config(mixed_case_lexicon=5), "config.json mixed_case_lexicon must be dict[str, str] | None, got 5"),
    "encoder a string": (_edit_config(encoder="bert"), "config.json encoder must be PreTrainedConfig | dict | None, got 'bert'"),
    "unknown activation": (_edit_encoder(hidden_act="banana"), "config.json encoder hidden_act 'banana' is not an activation"),
    "head count that does not divide the hidden size": (
        _edit_encoder(num_attention_heads=3), "config.json encoder num_attention_heads 3 does not divide encoder hidden_size 32"
    ),
    "tokenizer model of unknown type": (
        lambda f: _edit_json(f, "tokenizer.json", lambda t: t["model"].update(type="Banana")),
        "tokenizer.json is not a tokenizer the tokenizers library reads",
    ),
    "tokenizer normalizer of unknown type": (
        lambda f: _edit_json(f, "tokenizer.json", lambda t: t.update(normalizer={"type": "Banana"})),
        "tokenizer.json is not a tokenizer the tokenizers library reads",
    ),
    "vocabulary without its unknown token": (
        lambda f: _edit_json(f, "tokenizer.json", lambda t: t["model"]["vocab"].pop("[UNK]")),
        "tokenizer.json names the unknown token '[UNK]' (model.unk_token) but its vocabulary lacks it",
    ),
    "tokenizer_config.json a JSON string": (
        lambda f: (f / "tokenizer_config.json").write_text('"hello"'), "tokenizer_config.json does not hold a JSON object"
    ),
    "pytorch_model.bin that runs code": (_pickle_with_code, "pytorch_model.bin holds more than weights, so it was not loaded"),
    "pytorch_model.bin of random bytes": (_random_bin, "pytorch_model.bin is not a PyTorch weights file"),
}


def _truncate_onnx(keep):
    def truncate(folder: Path) -> None:
        data = (folder / "model.onnx").read_bytes()
        (folder / "model.onnx").write_bytes(data[: keep(len(data))])

    return truncate


ONNX_FAULTS = {
    "export config.json mixed_case_lexicon an int": (
        lambda f: _edit_json(f, "config.json", lambda c: c.update(mixed_case_lexicon=5)),
        "config.json mixed_case_lexicon must be an object of strings or null, got 5",
    ),
    "export config.json lowercase_input a string": (
        lambda f: _edit_json(f, "config.json", lambda c: c.update(lowercase_input="yes")),
        "config.json lowercase_input must be true or false, got 'yes'",
    ),
    "model.onnx truncated in half": (_truncate_onnx(lambda n: n // 2), "model.onnx is truncated or not an ONNX model"),
    "model.onnx short by one byte": (_truncate_onnx(lambda n: n - 1), "model.onnx is truncated or not an ONNX model"),
    "model.onnx of random bytes": (
        lambda f: (f / "model.onnx").write_bytes(os.urandom(4096)), "model.onnx is truncated or not an ONNX model"
    ),
}


@pytest.fixture(params=[*CHECKPOINT_FAULTS, *ONNX_FAULTS])
def broken(request, tmp_path, tiny_model_dir):
    faults, source = (CHECKPOINT_FAULTS, tiny_model_dir) if request.param in CHECKPOINT_FAULTS else (ONNX_FAULTS, ON_DEVICE_MODEL_DIR)
    break_it, message = faults[request.param]
    folder = tmp_path / "checkpoint"
    shutil.copytree(source, folder)
    break_it(folder)
    return folder, message


def test_a_checkpoint_that_disagrees_with_itself_is_one_error(broken, monkeypatch, capsys):
    folder, message = broken
    with pytest.raises(CheckpointError) as caught:
        hf_punctcase.load_pipeline(folder)
    text = str(caught.value)
    assert text.startswith(f"model path {folder}: ") and message in text and "\n" not in text, text
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "-m", str(folder), "so what are the risks"])
    assert code == 2 and out == ""
    assert err.startswith(f"hf-punctcase: error: model path {folder}: ") and err.count("\n") == 1 and message in err, err
    assert "code from the pickle ran" not in out + err


def test_transformers_pipeline_reports_a_fault_the_auto_class_finds(tmp_path, tiny_model_dir):
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    _drop_query_and_key(folder)
    with pytest.raises(ValueError) as caught:
        pipeline("punct-case", model=str(folder))
    assert f"model path {folder}: " in str(caught.value) and "query.weight" in str(caught.value)


def test_whole_checkpoints_of_every_kind_pass(tiny_model_dir, tiny_cnn_dir):
    from hf_punctcase.checkpoints import check_model_dir
    from hf_punctcase.embedded import DEFAULT_MODEL_DIR

    # The default and accurate models' weights are int8 (stored as data and scales), the CNN's an LSTM's.
    for folder in (tiny_model_dir, tiny_cnn_dir, DEFAULT_MODEL_DIR, ACCURATE_MODEL_DIR, ON_DEVICE_MODEL_DIR):
        assert check_model_dir(folder) == str(folder)


def test_a_pytorch_bin_of_plain_weights_still_loads(tmp_path, tiny_model_dir):
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    assert hf_punctcase.load_pipeline(folder, dtype="float32")("so what")["text"].lower().startswith("so")


@pytest.mark.parametrize(
    "dtype, error, message",
    [("banana", ValueError, "dtype 'banana' is not one of auto, float32, bfloat16, float16"),
     ("float8", ValueError, "dtype 'float8' is not one of"),
     (torch.float64, ValueError, "dtype 'torch.float64' is not one of"),
     (5, TypeError, "dtype must be one of auto, float32, bfloat16, float16 (a name or a torch.dtype), not int 5")],
)
def test_a_dtype_that_is_not_one_is_named(tiny_model_dir, dtype, error, message):
    with pytest.raises(error) as caught:
        hf_punctcase.load_pipeline(tiny_model_dir, dtype=dtype)
    assert message in str(caught.value)
    # transformers' own pipeline: inside its error for a model that fails to load
    with pytest.raises((error, ValueError)) as caught:
        pipeline("punct-case", model=tiny_model_dir, dtype=dtype)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "model",
    [torch.nn.Linear(2, 2), BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37))],
    ids=["Linear", "BertModel"],
)
def test_a_model_object_that_is_not_punct_case_is_named(model, tiny_tokenizer):
    expected = f"must be a punct-case model, whose config lists punct_labels .* got {type(model).__name__}"
    with pytest.raises(TypeError, match=expected):
        pipeline("punct-case", model=model, tokenizer=tiny_tokenizer)
    with pytest.raises(TypeError, match=expected):  # the pipeline class built directly
        hf_punctcase.PunctCasePipeline(model=model, tokenizer=tiny_tokenizer)


def test_a_punct_case_model_object_is_taken(tiny_model, tiny_tokenizer):
    pipe = pipeline("punct-case", model=tiny_model, tokenizer=tiny_tokenizer)
    assert pipe("so what")["text"].lower().startswith("so")


def test_a_library_warning_while_a_folder_is_checked_does_not_surround_its_one_line_error(tmp_path, tiny_model_dir):
    """torch warns of a pickle protocol it was not written for before it refuses the file: a user of the
    command line sees the one line naming the fault, and nothing else (a real process: pytest would
    otherwise catch the warning itself)."""
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "model.safetensors").unlink()
    torch.save({"weight": _RunsCode()}, folder / "pytorch_model.bin", pickle_protocol=4, _use_new_zipfile_serialization=False)
    result = subprocess.run(
        [sys.executable, "-m", "hf_punctcase.cli", "restore", "-m", str(folder), "so what"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"hf-punctcase: error: model path {folder}: pytorch_model.bin is not a PyTorch weights file (torch.load cannot unpickle it)"
    ]
