"""recipes/restore_corpus.py killed for real (SIGKILL) midway resumes from its finished blocks: no
record twice, none missing, the output equal byte for byte to an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hf_punctcase

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "restore_corpus.py"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", "TQDM_DISABLE": "1"}


def command(source: Path, output: Path, model: str) -> list[str]:
    return [
        sys.executable, str(RECIPE), "--input", str(source), "--output", str(output), "--model", model,
        "--batch_size", "8", "--block_size", "4",
    ]


def test_a_run_killed_midway_resumes_without_duplicates_or_gaps(tiny_model_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"so what are the risks number {i} i am not technical we think\n" for i in range(600)))
    whole = tmp_path / "whole.jsonl"
    result = subprocess.run(command(source, whole, tiny_model_dir), capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]

    output = tmp_path / "resumed.jsonl"
    blocks = tmp_path / "resumed.jsonl.blocks"
    process = subprocess.Popen(command(source, output, tiny_model_dir), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while len(list(blocks.glob("block-*.jsonl"))) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    written = sorted(blocks.glob("block-*.jsonl"))
    assert not output.exists() and 3 <= len(written) < 150, "the run was not killed midway"

    result = subprocess.run(command(source, output, tiny_model_dir), capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resuming after {len(written)} blocks ({4 * len(written)} records)" in result.stderr
    assert output.read_bytes() == whole.read_bytes()
    lines = output.read_text().splitlines()
    assert len(lines) == 600 and [json.loads(line)["text"] for line in lines] == source.read_text().splitlines()
    assert not blocks.exists()


def test_a_rerun_with_other_arguments_refuses_the_blocks_of_the_first(tiny_model_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("we think\n")
    blocks = tmp_path / "out.jsonl.blocks"
    blocks.mkdir()
    (blocks / "run.json").write_text(json.dumps({"inputs": []}))
    result = subprocess.run(command(source, tmp_path / "out.jsonl", tiny_model_dir), capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode != 0 and "the blocks there are of another run" in result.stderr


def test_parquet_in_and_out_with_the_fluent_text_and_each_words_labels(tmp_path):
    """The embedded default model (it has a disfluency head): --remove_disfluencies and --words_field
    give, record by record, what the pipeline gives, through Parquet input and output."""
    import datasets

    sys.path.insert(0, str(RECIPE.parent))
    import restore_corpus

    texts = [f"so um what are the the risks number {i} i am not technical" for i in range(5)] + ["", "uh we think so"]
    source = tmp_path / "in.parquet"
    datasets.Dataset.from_dict({"id": list(range(len(texts))), "transcript": texts}).to_parquet(source)
    output = tmp_path / "out.parquet"
    restore_corpus.main([
        "--input", str(source), "--text_field", "transcript", "--output", str(output), "--model", "default",
        "--remove_disfluencies", "--words_field", "words", "--batch_size", "3", "--block_size", "2",
    ])
    expected = hf_punctcase.load_pipeline("default")(texts, batch_size=3, remove_disfluencies=True)
    restored = datasets.Dataset.from_parquet(str(output)).to_list()
    assert [row["id"] for row in restored] == list(range(len(texts)))
    assert [row["transcript"] for row in restored] == texts
    assert [row["restored"] for row in restored] == [result["text"] for result in expected]
    assert "um" not in restored[0]["restored"].lower().split()
    for row, result in zip(restored, expected):
        assert [word["word"] for word in row["words"]] == [word["word"] for word in result["words"]]
        assert [word["removed"] for word in row["words"]] == [word["removed"] for word in result["words"]]
    assert not (tmp_path / "out.parquet.blocks").exists()
    # written like every other output: the permissions a new file gets, not a temporary file's 0600
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(output.stat().st_mode) == 0o666 & ~umask


# ---- bad input: one line naming the file and the record, exit 2, the blocks already written kept ----

GOOD = '{"text": "so what are the risks"}\n'
BAD_INPUTS = {
    "malformed JSON line": ("in.jsonl", (GOOD + '{"text": "i am not\n' + GOOD).encode(), "in.jsonl, line 2: not JSON"),
    "missing text field": ("in.jsonl", (GOOD + '{"transcript": "we think"}\n').encode(), "line 2: no field 'text' (its fields: transcript)"),
    "number as text": ("in.jsonl", (GOOD + '{"text": 5}\n').encode(), "line 2: the field 'text' holds int, not text"),
    "null text": ("in.jsonl", (GOOD + '{"text": null}\n').encode(), "line 2: the field 'text' holds null, not text"),
    "array line": ("in.jsonl", (GOOD + '["we think"]\n').encode(), "line 2: a JSON list, not an object"),
    "not UTF-8": ("in.txt", b"so what are the risks\nwe caf\xe9 think\n", "in.txt, line 2: not UTF-8 (byte 7 of the line)"),
    "empty file": ("in.jsonl", b"", "in.jsonl: holds no record"),
    "corrupt Parquet": ("in.parquet", b"PAR1 not a parquet file", "in.parquet: cannot be read as Parquet"),
}


def restore_corpus_module():
    sys.path.insert(0, str(RECIPE.parent))
    import restore_corpus

    return restore_corpus


@pytest.mark.parametrize("fault", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_a_bad_record_ends_the_run_with_one_line_naming_it(fault, tiny_model_dir, tmp_path, capsys):
    name, content, message = BAD_INPUTS[fault]
    source = tmp_path / name
    source.write_bytes(content)
    output = tmp_path / "out.jsonl"
    argv = ["--input", str(source), "--output", str(output), "--model", str(tiny_model_dir), "--batch_size", "1", "--block_size", "1"]
    assert restore_corpus_module().cli(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("restore_corpus: error: ") and message in lines[0], lines
    assert not output.exists()
    if content.startswith(GOOD.encode()):  # the record before the bad one was restored and kept
        blocks = sorted((tmp_path / "out.jsonl.blocks").glob("block-*.jsonl"))
        assert [json.loads(block.read_text())["text"] for block in blocks] == ["so what are the risks"]


def test_an_unreadable_file_is_named(tiny_model_dir, tmp_path, capsys, monkeypatch):
    from hf_punctcase import corpus_files

    source = tmp_path / "in.txt"
    source.write_text("we think\n")

    def unreadable(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(corpus_files, "open", unreadable, raising=False)  # root reads any file: the fault is injected
    argv = ["--input", str(source), "--output", str(tmp_path / "out.jsonl"), "--model", str(tiny_model_dir)]
    assert restore_corpus_module().cli(argv) == 2
    assert capsys.readouterr().err.splitlines() == [f"restore_corpus: error: {source}: cannot be read (Permission denied) (--skip_bad_records leaves such records out)"]


@pytest.mark.parametrize("pattern", ["nothing-*.jsonl", "missing.jsonl", "in.csv"])
def test_an_input_naming_no_readable_file_is_one_line(pattern, tiny_model_dir, tmp_path, capsys):
    (tmp_path / "in.csv").write_text("text\nwe think\n")
    argv = ["--input", str(tmp_path / pattern), "--output", str(tmp_path / "out.jsonl"), "--model", str(tiny_model_dir)]
    assert restore_corpus_module().cli(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("restore_corpus: error: --input "), lines


def test_skip_bad_records_restores_the_rest_and_lists_the_bad_ones(tiny_model_dir, tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    good = [f"so what are the risks number {i}" for i in range(5)]
    lines = [json.dumps({"text": good[0]}), '{"text": ', json.dumps({"text": good[1]}), json.dumps({"other": 1})]
    lines += [json.dumps({"text": text}) for text in good[2:]] + ['{"text": 3}']
    source.write_text("\n".join(lines) + "\n")
    empty = tmp_path / "more.jsonl"
    empty.write_text("")
    output = tmp_path / "out.jsonl"
    argv = [
        "--input", str(source), str(empty), "--output", str(output), "--model", str(tiny_model_dir),
        "--batch_size", "2", "--block_size", "2", "--skip_bad_records",
    ]
    assert restore_corpus_module().cli(argv) == 0
    assert [json.loads(line)["text"] for line in output.read_text().splitlines()] == good
    skipped = [json.loads(line) for line in (tmp_path / "out.jsonl.skipped.jsonl").read_text().splitlines()]
    assert [(entry["file"], entry["record"]) for entry in skipped] == [
        (str(source), 2), (str(source), 4), (str(source), 8), (str(empty), None)
    ]
    assert "skipped 4 bad records" in capsys.readouterr().err
    # A rerun over a clean input leaves no list behind.
    source.write_text("".join(json.dumps({"text": text}) + "\n" for text in good))
    output.unlink()
    assert restore_corpus_module().cli(argv[:2] + argv[3:]) == 0
    assert not (tmp_path / "out.jsonl.skipped.jsonl").exists()
