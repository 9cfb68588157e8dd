"""One resolution of a model name, one check of a folder per load, formats found by their dispatchers."""

from __future__ import annotations

import pytest
import torch

import hf_punctcase
from hf_punctcase import checkpoints
from hf_punctcase.checkpoints import ResolvedModel, resolve
from hf_punctcase.embedded import ACCURATE_MODEL_DIR, DEFAULT_MODEL_DIR, ON_DEVICE_MODEL_DIR
from hf_punctcase.formats import FORMATS, format_named, format_of


def test_names_resolve_to_what_they_name(tmp_path):
    default = resolve(None)
    assert default.source == "embedded" and default.folder == DEFAULT_MODEL_DIR and default.format.name == "torch"
    assert resolve("default").folder == DEFAULT_MODEL_DIR
    accurate = resolve("accurate")
    assert accurate.folder == ACCURATE_MODEL_DIR and accurate.format.name == "torch"
    on_device = resolve("on-device")
    assert on_device.folder == ON_DEVICE_MODEL_DIR and on_device.runtime == "onnxruntime"
    hub = resolve("someone/punct-model")
    assert hub.source == "hub" and hub.folder is None and hub.format is None
    assert resolve(hub) is hub
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve("not-here", local_only=True)  # a command that writes from a folder never reads it as a repo id
    with pytest.raises(TypeError, match="not int"):
        resolve(5)


def test_a_folder_is_told_by_its_files_and_a_folder_of_neither_names_both(tmp_path, tiny_model_dir):
    assert format_of(tiny_model_dir) is format_named("torch")
    assert format_of(ON_DEVICE_MODEL_DIR) is format_named("onnx")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "tokenizer_config.json").write_text("{}")
    with pytest.raises(FileNotFoundError) as error:
        resolve(tmp_path)
    for model_format in FORMATS:
        assert model_format.files in str(error.value)
    with pytest.raises(ValueError, match="no model format 'ctranslate2'"):
        format_named("ctranslate2")


@pytest.fixture()
def checks(monkeypatch):
    """Counts every folder check that reads the files (a folder that passed, unchanged, is not read again)."""
    counted: list[str] = []
    check = checkpoints._checked_format

    def counting(folder, trust_remote_code=False):
        counted.append(str(folder))
        return check(folder, trust_remote_code)

    monkeypatch.setattr(checkpoints, "_checked_format", counting)
    monkeypatch.setattr(checkpoints, "_PASSED", {})
    return counted


def test_each_loader_checks_a_folder_once(checks, tiny_model_dir, monkeypatch):
    from transformers import pipeline

    from hf_punctcase.runtime import OnDeviceRestorer

    hf_punctcase.load_pipeline(tiny_model_dir, dtype=torch.float32)
    assert checks == [str(tiny_model_dir)]  # by resolve; the auto class finds it passed
    checks.clear()
    monkeypatch.setattr(checkpoints, "_PASSED", {})
    pipeline("punct-case", model=str(tiny_model_dir), dtype=torch.float32)
    assert checks == [str(tiny_model_dir)]  # by the auto class
    monkeypatch.setattr(checkpoints, "_PASSED", {})
    for load in (hf_punctcase.load_pipeline, OnDeviceRestorer):
        checks.clear()
        monkeypatch.setattr(checkpoints, "_PASSED", {})
        load("on-device")
        assert checks == [str(ON_DEVICE_MODEL_DIR)]
    checks.clear()
    monkeypatch.setattr(checkpoints, "_PASSED", {})
    hf_punctcase.load_pipeline(resolve(tiny_model_dir), dtype=torch.float32)
    assert checks == [str(tiny_model_dir)]  # by resolve, before the call: loading does not check again


def test_a_folder_changed_after_it_passed_is_checked_again_and_remembered_once(checks, tiny_model_dir, tmp_path):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    checkpoints.checked_format(folder)
    checkpoints.checked_format(folder)
    assert checks == [str(folder)]
    config = folder / "config.json"
    config.write_text(config.read_text() + "\n")
    checkpoints.checked_format(folder)
    assert checks == [str(folder)] * 2
    assert list(checkpoints._PASSED) == [(str(folder.resolve()), False)]
    config.write_text("[]")  # a fault written after it passed is found
    with pytest.raises(ValueError):
        checkpoints.checked_format(folder)


def test_the_torch_free_runtime_refuses_a_torch_checkpoint_and_says_what_to_do(tiny_model_dir):
    from hf_punctcase.runtime import OnDeviceRestorer

    with pytest.raises(ValueError, match="not an ONNX export: export it with hf-punctcase export-onnx"):
        OnDeviceRestorer(tiny_model_dir)


def test_a_resolved_model_is_accepted_wherever_a_name_is(tiny_model_dir):
    resolved = resolve(tiny_model_dir)
    assert isinstance(resolved, ResolvedModel)
    pipe = hf_punctcase.load_pipeline(resolved, dtype=torch.float32)
    assert pipe("hello there")["text"].lower().startswith("hello")
