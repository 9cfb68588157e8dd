"""recipes/restore_corpus.py killed for real (SIGKILL) midway resumes from its finished blocks: no
record twice, none missing, the output equal byte for byte to an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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
