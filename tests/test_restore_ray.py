"""hf_punctcase.Restorer on Ray Data: a local cluster of its own (loopback only), one actor loading the
model once, the pipeline's texts in input order; and recipes/restore_corpus.py --engine ray."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

import hf_punctcase

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'hf_punctcase[ray]')")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recipes"))
import restore_corpus  # noqa: E402

TEXTS = [f"so what are the risks number {i} i am not technical" for i in range(10)] + ["", "we think"]


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def test_map_batches_with_restorer_actors_gives_the_pipelines_texts(local_cluster, tiny_model_dir):
    expected = [r["text"] for r in hf_punctcase.load_pipeline(tiny_model_dir)(TEXTS)]
    dataset = ray.data.from_items([{"id": i, "text": text} for i, text in enumerate(TEXTS)], override_num_blocks=3)
    restored = dataset.map_batches(
        hf_punctcase.Restorer, fn_constructor_kwargs={"model": tiny_model_dir, "batch_size": 4},
        batch_size=4, concurrency=1, batch_format="numpy",
    ).take_all()
    assert [row["restored"] for row in restored] == expected
    assert [int(row["id"]) for row in restored] == list(range(len(TEXTS)))


def test_recipe_engine_ray_equals_engine_datasets(local_cluster, tiny_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": text}) + "\n" for i, text in enumerate(TEXTS)))
    outputs = {}
    for engine in ("datasets", "ray"):
        outputs[engine] = tmp_path / f"{engine}.jsonl"
        restore_corpus.main([
            "--engine", engine, "--input", str(source), "--output", str(outputs[engine]),
            "--model", tiny_model_dir, "--batch_size", "4", "--block_size", "5",
        ])
    assert outputs["ray"].read_bytes() == outputs["datasets"].read_bytes()
    assert len(outputs["ray"].read_text().splitlines()) == len(TEXTS)


def test_recipe_with_as_many_actors_as_the_cluster_has_cpus_finishes(local_cluster, tiny_model_dir, tmp_path):
    """Two actors on the two-CPU cluster: each holds a CPU for the whole run, and the reading of the
    input must still be scheduled beside them (the run is given 240 s, where it takes seconds)."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": text}) + "\n" for i, text in enumerate(TEXTS * 5)))
    output = tmp_path / "out.jsonl"
    argv = [
        "--engine", "ray", "--num_proc", "2", "--input", str(source), "--output", str(output),
        "--model", tiny_model_dir, "--batch_size", "4", "--block_size", "7",
    ]
    run = threading.Thread(target=restore_corpus.main, args=(argv,), daemon=True)
    run.start()
    run.join(timeout=240)
    assert not run.is_alive(), "the run stalled: the actors left no CPU to read the input"
    expected = [r["text"] for r in hf_punctcase.load_pipeline(tiny_model_dir)(TEXTS * 5)]
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [row["id"] for row in rows] == list(range(len(TEXTS) * 5))
    assert [row["restored"] for row in rows] == expected


def test_recipe_engine_ray_names_a_bad_record_in_one_line_or_skips_it(local_cluster, tiny_model_dir, tmp_path, capsys):
    """The input is read in a Ray task: its BadRecord comes back through Ray's error and is still one
    line; with --skip_bad_records the task lists it in the side file."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": "we think"}) + "\n" + '{"text": \n' + json.dumps({"text": "so what"}) + "\n")
    output = tmp_path / "out.jsonl"
    argv = ["--engine", "ray", "--input", str(source), "--output", str(output), "--model", tiny_model_dir, "--batch_size", "4"]
    assert restore_corpus.cli(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"restore_corpus: error: {source}, line 2: not JSON (Expecting value: line 1 column 10 (char 9)) "
                     "(--skip_bad_records leaves such records out)"]
    assert restore_corpus.cli(argv + ["--skip_bad_records"]) == 0
    assert [json.loads(line)["text"] for line in output.read_text().splitlines()] == ["we think", "so what"]
    assert [json.loads(line)["record"] for line in (tmp_path / "out.jsonl.skipped.jsonl").read_text().splitlines()] == [2]
