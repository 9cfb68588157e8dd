"""ONNX export of both families (fp32 and int8), the pipeline's ONNX backend, the export folder's files
and checks, and ``hf-punctcase export-onnx``."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import pipeline

import hf_punctcase
from hf_punctcase.export import onnx_graph
from hf_punctcase.export.onnx import PARITY_TEXTS, export_onnx, label_agreement
from hf_punctcase.formats.onnx import OnnxModel
from hf_punctcase.backends import OnnxBackend, TorchBackend
from hf_punctcase.checkpoints import CheckpointError
from hf_punctcase.formats import is_onnx_dir

from conftest import run_cli

TEXTS = [
    "so what are the risks i am not technical",
    " ".join(["the doctor asked whether the patient had any pain in her chest"] * 25),  # several windows
    "nasa bought an iphone 3.5 😀 café",
    "",
    "a",
]


@pytest.fixture(scope="module", params=["joint_transformer", "cnn_bilstm"])
def family_dir(request) -> str:
    return request.getfixturevalue("tiny_model_dir" if request.param == "joint_transformer" else "tiny_cnn_dir")


@pytest.fixture(scope="module")
def fp32_export(family_dir, tmp_path_factory):
    return export_onnx(family_dir, tmp_path_factory.mktemp("onnx") / "fp32")


def test_fp32_export_writes_one_model_with_config_tokenizer_record_and_card(fp32_export, family_dir):
    folder = fp32_export.path
    assert sorted(os.listdir(folder)) == [
        "README.md", "config.json", "model.onnx", "onnx_export.json", "tokenizer.json", "tokenizer_config.json"
    ]
    info = json.loads((folder / "onnx_export.json").read_text())
    assert info["precision"] == "fp32" and info["quantization"] is None
    assert info["inputs"] == ["input_ids", "attention_mask"] and info["outputs"] == ["punct_logits", "case_logits"]
    assert info["model_type"] == json.loads(Path(family_dir, "config.json").read_text())["model_type"]
    config = json.loads((folder / "config.json").read_text())
    assert "auto_map" not in config and "custom_pipelines" not in config  # their code stays with the checkpoint
    assert is_onnx_dir(folder) and not is_onnx_dir(family_dir)
    assert hf_punctcase.checkpoints.check_model_dir(folder) == str(folder)
    assert "## ONNX export" in (folder / "README.md").read_text()
    assert str(folder.parent) not in (folder / "README.md").read_text() + json.dumps(info)  # no machine paths


def test_graph_has_dynamic_batch_and_sequence_axes(fp32_export):
    import onnxruntime as ort

    session = ort.InferenceSession(str(fp32_export.path / "model.onnx"), providers=["CPUExecutionProvider"])
    for node in [*session.get_inputs(), *session.get_outputs()]:
        assert node.shape[:2] == ["batch", "sequence"], (node.name, node.shape)
    backend = OnnxBackend(fp32_export.path)
    for shape in [(1, 1), (3, 17), (5, 90)]:
        probs = backend(np.full(shape, 5), np.ones(shape))
        assert probs["punct"].shape == (*shape, 4) and probs["case"].shape == (*shape, 4)
        np.testing.assert_allclose(probs["punct"].sum(-1), 1.0, rtol=1e-5)


def test_fp32_onnx_gives_the_torch_labels(fp32_export, family_dir):
    assert fp32_export.parity["punct_agreement"] == 1.0 and fp32_export.parity["case_agreement"] == 1.0
    assert fp32_export.parity["identical_texts"] == len(PARITY_TEXTS)
    torch_pipe = hf_punctcase.load_pipeline(family_dir, dtype=torch.float32)
    onnx_pipe = pipeline("punct-case", model=str(fp32_export.path))
    assert isinstance(onnx_pipe.model, OnnxModel) and isinstance(onnx_pipe.backend, OnnxBackend)
    assert isinstance(torch_pipe.backend, TorchBackend)
    assert onnx_pipe.max_length == torch_pipe.max_length
    options = {"window_words": 30, "context_words": 8, "batch_size": 4}
    expected = torch_pipe(TEXTS, return_probabilities=True, **options)
    found = onnx_pipe(TEXTS, return_probabilities=True, **options)
    for left, right in zip(expected, found):
        assert left["text"] == right["text"]
        assert [w["punctuation"] for w in left["words"]] == [w["punctuation"] for w in right["words"]]
        for task in ("punct", "case"):
            np.testing.assert_allclose(left["probabilities"][task], right["probabilities"][task], atol=1e-5)
    agreement = label_agreement(
        lambda texts, **kw: torch_pipe(texts, **kw, **options), lambda texts, **kw: onnx_pipe(texts, **kw, **options), TEXTS
    )
    assert agreement["punct_agreement"] == agreement["case_agreement"] == 1.0
    # load_pipeline takes the same folder
    assert hf_punctcase.load_pipeline(fp32_export.path)(TEXTS[0])["text"] == expected[0]["text"]


def test_streaming_and_saving_work_on_an_onnx_folder(fp32_export, tmp_path):
    onnx_pipe = pipeline("punct-case", model=str(fp32_export.path))
    words = TEXTS[1].split()
    stream = hf_punctcase.StreamingRestorer(str(fp32_export.path), window_words=40, context_words=10)
    entries = [entry for i in range(0, len(words), 7) for entry in stream.push(words[i : i + 7])] + stream.flush()
    expected = onnx_pipe(words, is_split_into_words=True, window_words=40, context_words=10, batch_size=1)
    assert [entry["word"] for entry in entries] == [entry["word"] for entry in expected["words"]]
    onnx_pipe.save_pretrained(tmp_path / "saved")
    again = pipeline("punct-case", model=str(tmp_path / "saved"))
    assert isinstance(again.model, OnnxModel) and again(TEXTS[0]) == onnx_pipe(TEXTS[0])


def test_int8_export_quantises_the_weights(family_dir, fp32_export, tmp_path):
    import onnx

    for per_channel in (False, True):
        result = export_onnx(family_dir, tmp_path / f"int8-{per_channel}", int8=True, per_channel=per_channel)
        info = json.loads((result.path / "onnx_export.json").read_text())
        assert info["precision"] == "int8" and info["quantization"]["per_channel"] is per_channel
        assert sorted(os.listdir(result.path)) == sorted(os.listdir(fp32_export.path))  # one model.onnx, no fp32 left
        ops = Counter(node.op_type for node in onnx.load(str(result.path / "model.onnx")).graph.node)
        assert ops["MatMulInteger"] + ops["DynamicQuantizeLSTM"] > 0, ops
        assert 0.0 <= result.parity["punct_agreement"] <= 1.0 and result.parity["words"] > 0
        restored = pipeline("punct-case", model=str(result.path))(TEXTS[0])["text"].split()
        assert [w.rstrip(".,?").lower() for w in restored] == TEXTS[0].split()


def test_an_onnx_folder_is_checked_and_runs_only_on_the_cpu(fp32_export, tmp_path):
    import shutil

    with pytest.raises(ValueError, match="CPU"):
        pipeline("punct-case", model=str(fp32_export.path), device="cuda")
    with pytest.raises(ValueError, match="precision"):
        pipeline("punct-case", model=str(fp32_export.path), dtype=torch.bfloat16)
    broken = tmp_path / "broken"
    shutil.copytree(fp32_export.path, broken)
    (broken / "model.onnx").write_bytes(b"")
    with pytest.raises(CheckpointError, match="model.onnx is empty"):
        hf_punctcase.load_pipeline(broken)
    (broken / "model.onnx").unlink()
    with pytest.raises(FileNotFoundError, match="model.onnx"):
        hf_punctcase.checkpoints.check_model_dir(broken)


def test_export_never_overwrites_and_never_leaves_a_partial_folder(tiny_cnn_dir, tmp_path, monkeypatch):
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="exists"):
        export_onnx(tiny_cnn_dir, existing)
    assert os.listdir(existing) == ["keep.txt"] and (existing / "keep.txt").read_text() == "mine"

    def broken_quantisation(*args, **kwargs):
        raise RuntimeError("quantisation failed")

    monkeypatch.setattr(onnx_graph, "quantize_int8", broken_quantisation)
    with pytest.raises(RuntimeError, match="quantisation failed"):
        export_onnx(tiny_cnn_dir, tmp_path / "new", int8=True)
    with pytest.raises(RuntimeError, match="quantisation failed"):
        export_onnx(tiny_cnn_dir, existing, int8=True, overwrite=True)
    # neither the new folder nor a staging folder is left, and the existing one is as it was
    assert sorted(os.listdir(tmp_path)) == ["existing"]
    assert os.listdir(existing) == ["keep.txt"]
    monkeypatch.undo()
    export_onnx(tiny_cnn_dir, existing, overwrite=True)
    assert (existing / "model.onnx").is_file() and not (existing / "keep.txt").exists()
    assert sorted(os.listdir(tmp_path)) == ["existing"]


# ---- command line --------------------------------------------------------------------------------


def test_cli_exports_and_prints_the_agreement(tiny_cnn_dir, tmp_path, monkeypatch, capsys):
    output = tmp_path / "out"
    code, out, err = run_cli(monkeypatch, capsys, ["export-onnx", tiny_cnn_dir, str(output)])
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].startswith(f"wrote {output}: model.onnx") and "(fp32)" in lines[0]
    assert "punctuation 100.0%, casing 100.0%" in lines[1] and f"{len(PARITY_TEXTS)}/{len(PARITY_TEXTS)}" in lines[1]
    before = {name: (output / name).read_bytes() for name in os.listdir(output)}
    # a second export to the same folder is refused in one line, and the folder is untouched
    code, out, err = run_cli(monkeypatch, capsys, ["export-onnx", tiny_cnn_dir, str(output), "--int8"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("hf-punctcase: error: output") and "--overwrite" in err
    assert {name: (output / name).read_bytes() for name in os.listdir(output)} == before
    parity = tmp_path / "parity.txt"
    parity.write_text("so what are the risks\n\nhello how are you\n", encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, [
        "export-onnx", tiny_cnn_dir, str(output), "--int8", "--per-channel", "--overwrite", "--parity-file", str(parity),
    ])
    assert code == 0, err
    assert "(uint8 weights, per channel)" in out and "of 2 transcripts" in out
    assert json.loads((output / "onnx_export.json").read_text())["precision"] == "int8"


def test_cli_faults_are_one_line(tiny_cnn_dir, tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, ["export-onnx", str(tmp_path / "nope"), str(tmp_path / "out")])
    assert code == 2 and err.count("\n") == 1 and "does not exist" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, out, err = run_cli(monkeypatch, capsys, ["export-onnx", tiny_cnn_dir, str(tmp_path / "out"), "--parity-file", str(empty)])
    assert code == 2 and "holds no transcript" in err
    with pytest.raises(SystemExit) as exit_info:
        run_cli(monkeypatch, capsys, ["export-onnx", tiny_cnn_dir, str(tmp_path / "out"), "--per-channel"])
    assert exit_info.value.code == 2 and "--per-channel applies to --int8" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
