"""The embedded on-device model (a CNN-BiLSTM as an int8 ONNX graph) and the recipe that ships it."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from transformers import pipeline

import hf_punctcase
from hf_punctcase.evaluation import evaluate_pipeline
from hf_punctcase.checkpoints import resolve
from hf_punctcase.formats import is_onnx_dir
from hf_punctcase.runtime import OnDeviceRestorer

from conftest import run_cli, tiny_corpus_texts
from test_default_model import SAMPLE

REPO = Path(__file__).resolve().parents[1]


def test_the_on_device_model_is_shipped_as_an_int8_onnx_graph_of_at_most_8_mb():
    folder = hf_punctcase.ON_DEVICE_MODEL_DIR
    assert resolve("on-device").location == str(folder) and is_onnx_dir(folder)
    assert sorted(path.name for path in folder.iterdir()) == [
        "README.md", "config.json", "model.onnx", "onnx_export.json", "tokenizer.json", "tokenizer_config.json",
    ]
    assert (folder / "model.onnx").stat().st_size <= 8 * 2**20
    info = json.loads((folder / "onnx_export.json").read_text())
    assert info["precision"] == "int8" and info["model_type"] == "cnn_bilstm_punct_case"
    assert info["parity"]["punct_agreement"] >= 0.995 and info["parity"]["case_agreement"] >= 0.995
    assert json.loads((folder / "config.json").read_text())["vocab_size"] == 5000


def test_pipeline_and_torch_free_runtime_restore_the_same_text():
    restorer = pipeline("punct-case", model=hf_punctcase.ON_DEVICE_MODEL_DIR)
    on_device = OnDeviceRestorer()  # the embedded on-device model by default
    text = "so what are the risks i am not technical"
    result = restorer(text)
    assert [token.lower().rstrip(".,?") for token in result["text"].split()] == text.split()
    assert result["text"].startswith("So what are the risks? I am")
    assert on_device(text)["text"] == result["text"]
    long_text = " ".join(" ".join(body.split()).lower().replace(",", "").replace(".", "").replace("?", "")
                         for _, body in SAMPLE)
    assert on_device(long_text)["text"] == restorer(long_text)["text"]


def test_a_whole_text_ends_a_sentence():
    """The model reads no word after a text's last one and alone leaves these short texts open; the
    restorer closes them with the sentence end the model finds likeliest, unless told the text is a piece."""
    restorer = OnDeviceRestorer()
    assert restorer("what time is it")["text"] == "What time is it?"
    assert restorer("the patient reports chest pain since tuesday")["text"] == "The patient reports chest pain since Tuesday."
    piece = restorer("what time is it", ends_sentence=False, return_probabilities=True)
    labels = restorer.scheme.punct_labels
    assert piece["words"][-1]["punctuation"] == labels[int(piece["probabilities"]["punct"][-1].argmax())] == "O"


def test_quality_floor_on_a_written_sample():
    """A floor, not an exact output: the written talk, call and clinic sample of the default's test."""
    scores = evaluate_pipeline(hf_punctcase.load_pipeline("on-device"), SAMPLE)
    assert scores["punct_overall_f1"] >= 0.55, scores
    assert scores["case_overall_f1"] >= 0.70, scores


def test_cli_restores_with_the_on_device_model(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, ["restore", "--model", "on-device", "so what are the risks i am not technical"])
    assert code == 0 and out.strip().startswith("So what are the risks")


def test_the_embedded_card_is_the_published_one_and_names_the_teachers_data():
    card = (hf_punctcase.ON_DEVICE_MODEL_DIR / "README.md").read_text()
    assert card == (REPO / "model_cards" / "on_device.md").read_text()
    assert 'hf_punctcase.load_pipeline("on-device")' in card and "OnDeviceRestorer" in card
    assert "trust_remote_code=True" not in card  # an ONNX graph ships no code
    assert "Switchboard" in card and "non-commercial" in card


def test_export_recipe_ships_a_checkpoint_as_the_on_device_model(tmp_path, tiny_cnn_dir):
    """recipes/export_default.py --model on-device: int8 ONNX, parity on the TED dev transcripts, the dev
    figures of what was shipped, and one card in two places."""
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(tiny_cnn_dir, checkpoint)
    data = tmp_path / "data" / "iwslt"
    data.mkdir(parents=True)
    texts = tiny_corpus_texts(num_texts=60)[:-1]
    (data / "dev2010_cased.txt").write_text("\n".join(texts[:30]) + "\n")
    (data / "tst2012_cased.txt").write_text("\n".join(texts[30:]) + "\n")
    target, card = tmp_path / "on_device", tmp_path / "card.md"
    command = [
        sys.executable, str(REPO / "recipes" / "export_default.py"), "--model", "on-device", "--checkpoint",
        str(checkpoint), "--target", str(target), "--card", str(card), "--data-dir", str(tmp_path / "data"),
        "--recipe-command", "python recipes/finetune.py recipes/configs/on_device_cnn_bilstm.yaml",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "parity with torch" in done.stdout and "TED dev2010+tst2012: punct overall F1" in done.stdout
    assert "SwDA val: files absent" in done.stdout  # a set without files is skipped and said so
    assert is_onnx_dir(target) and not list(target.glob("*.safetensors"))
    info = json.loads((target / "onnx_export.json").read_text())
    assert info["precision"] == "int8" and info["quantization"]["per_channel"] is False
    assert info["parity"]["words"] == sum(len(text.split()) for text in texts)
    text = card.read_text()
    assert (target / "README.md").read_text() == text
    assert "int8 per-tensor dynamically quantised ONNX graph" in text and "## ONNX export" in text
    assert "| TED dev2010+tst2012 |" in text
    assert json.loads((checkpoint / "dev_evaluation.json").read_text())["TED dev2010+tst2012"]["words"] > 0
    restored = hf_punctcase.load_pipeline(str(target))("so what are the risks")
    assert [token.lower().rstrip(".,?") for token in restored["text"].split()] == ["so", "what", "are", "the", "risks"]


def test_an_unknown_embedded_name_is_not_taken_for_one():
    with pytest.raises(FileNotFoundError, match="on-devices"):
        hf_punctcase.load_pipeline("./on-devices")
