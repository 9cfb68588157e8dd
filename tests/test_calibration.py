"""Calibration windows for static int8 (hf_punctcase.export.calibration): training documents of each
corpus asked for, an equal share each, cut and tokenised as the pipeline's engine cuts them."""

import json
import lzma

import numpy as np
from tokenizers import Tokenizer

from hf_punctcase.export.calibration import WINDOWS_PER_DOCUMENT, calibration_windows, corpus_texts
from hf_punctcase.export.onnx import export_onnx
from hf_punctcase.inputs import transcript
from hf_punctcase.restoration import RestoreOptions
from hf_punctcase.runtime import OnDeviceRestorer


def _write_shards(folder, documents):
    folder.mkdir(parents=True, exist_ok=True)
    with lzma.open(folder / "part-00000.jsonl.xz", "wt", encoding="utf-8") as handle:
        for document in documents:
            handle.write(json.dumps(document) + "\n")


def test_each_corpus_gives_its_share_of_training_windows_as_the_engine_cuts_them(tmp_path, monkeypatch, tiny_model_dir):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    long_turn = " ".join(f"Podcast words {i}, and more of them." for i in range(300))
    _write_shards(root / "spoken" / "changelog", [
        {"id": f"show/episode-{i}.md", "speakers": ["Host"], "paragraphs": [long_turn]} for i in range(40)
    ])
    _write_shards(root / "spoken" / "ungd", [
        {"id": f"Session {year - 1945} - {year}/C{i}.txt", "date": str(year), "paragraphs": ["We meet in peace today."]}
        for year in (2004, 2005) for i in range(20)
    ])
    export_onnx(tiny_model_dir, tmp_path / "onnx")
    engine = OnDeviceRestorer(tmp_path / "onnx").engine

    windows = calibration_windows(engine, 10, ["changelog", "ungd"], root)

    assert len(windows) == 10
    for window in windows:
        assert set(window) == {"input_ids", "attention_mask"}
        assert window["input_ids"].dtype == np.int64 and window["input_ids"].shape == window["attention_mask"].shape
        assert window["input_ids"].shape[0] == 1 and window["attention_mask"].all()
    # The first half from the podcasts, at most WINDOWS_PER_DOCUMENT a document, exactly as the engine cuts
    # the first training document; the rest from the debates.
    first = next(corpus_texts("changelog", root))
    expected = [
        encoded.input_ids
        for encoded, _ in engine.windows(transcript(" ".join(w.lower() for w in first)), RestoreOptions())
    ][:WINDOWS_PER_DOCUMENT]
    assert [list(w["input_ids"][0]) for w in windows[: len(expected)]] == [list(ids) for ids in expected]
    decoded = [Tokenizer.from_file(f"{tiny_model_dir}/tokenizer.json").decode(list(w["input_ids"][0])) for w in windows]
    assert all("podcast" in text for text in decoded[:5]) and all("peace" in text for text in decoded[5:])
    assert not any(any(ch in text for ch in ",.") for text in decoded)  # lowercased, no marks: as ASR gives them
