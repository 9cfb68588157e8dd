"""The cached graphs (the int8 ONNX Runtime graph and the OpenVINO graph) survive faults: two processes
building one at once, a cache folder that cannot take it, a truncated or damaged graph, graphs left by
another version. Each ends with the graph rebuilt or the model run without it, in at most one warning
line; never a wrong result, a traceback or a hang."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import hf_punctcase
from hf_punctcase.export import cache
from hf_punctcase.formats.base import GraphModel
from hf_punctcase.hardware import Hardware
from hf_punctcase.loading import INT8_GRAPH

TEXT = "so what are the risks i am not technical we think it is fine"
#: A CPU without AMX or avx512_bf16, where a checkpoint that prefers its int8 graph runs it: the plan tested on any CPU.
PLAIN_CPU = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2")


@pytest.fixture()
def prefers_graph(tiny_model_dir, tmp_path, monkeypatch):
    """A copy of the tiny checkpoint that prefers a compiled graph on CPUs, a cache of its own, and a
    machine whose CPU has neither AMX nor avx512_bf16."""
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "preferred_cpu_runtime": INT8_GRAPH}))
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("hf_punctcase.loading.detect_hardware", lambda: PLAIN_CPU)
    return folder


#: Each kind of cached graph: how a pipeline asks for it (the int8 graph is the plan's on PLAIN_CPU; the
#: OpenVINO graph, the plan's on bf16 CPUs, is asked for so that it runs in fp32 on any CPU), the file a
#: fault damages (the weights), and what messages call it.
KINDS = {
    "int8": SimpleNamespace(kind="int8", load={}, weights="model.onnx", what="int8 ONNX Runtime graph"),
    "openvino": SimpleNamespace(kind="openvino", load={"runtime": "openvino"}, weights="openvino_model.bin", what="OpenVINO graph"),
}


@pytest.fixture(params=sorted(KINDS))
def graph_kind(request):
    if request.param == "openvino":
        pytest.importorskip("openvino", reason="OpenVINO is not installed")
    return KINDS[request.param]


def warnings_of(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_graph_is_built_once_recorded_and_then_found(graph_kind, prefers_graph, caplog):
    with caplog.at_level(logging.WARNING):
        built = hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)
    assert isinstance(built.model, GraphModel) and built.execution_plan.runtime == built.model.runtime
    assert len(warnings_of(caplog)) == 1 and f"building the {graph_kind.what}" in warnings_of(caplog)[0]
    graph = cache.cached_graph(prefers_graph, graph_kind.kind)
    record = json.loads((graph / cache.CACHE_RECORD).read_text())["files"]
    assert record[graph_kind.weights]["size"] == (graph / graph_kind.weights).stat().st_size
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)
    assert warnings_of(caplog) == [] and again(TEXT) == built(TEXT)


@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes", "record missing"])
def test_a_damaged_graph_is_removed_and_built_again_never_run(damage, graph_kind, prefers_graph, caplog):
    expected = hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)(TEXT)
    graph = cache.cached_graph(prefers_graph, graph_kind.kind)
    model = graph / graph_kind.weights
    data = model.read_bytes()
    if damage == "truncated":
        model.write_bytes(data[: len(data) // 2])
    elif damage == "same size, other bytes":
        middle = len(data) // 2
        model.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    else:
        (graph / cache.CACHE_RECORD).unlink()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        rebuilt = hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)
    messages = warnings_of(caplog)
    assert "is damaged" in messages[0] and f"building the {graph_kind.what}" in messages[1] and len(messages) == 2
    assert isinstance(rebuilt.model, GraphModel) and rebuilt(TEXT) == expected
    assert cache.cached_graph(prefers_graph, graph_kind.kind) == graph and model.read_bytes() != data[: len(data) // 2]


@pytest.mark.parametrize("fault", ["cache path is a file", "cache folder read-only", "disk full"])
def test_a_cache_that_cannot_take_the_graph_runs_the_model_without_it(fault, graph_kind, prefers_graph, tmp_path, monkeypatch, caplog):
    if fault == "cache path is a file":
        (tmp_path / "cache").write_text("not a folder")
    elif fault == "cache folder read-only":
        (tmp_path / "cache" / "onnx").mkdir(parents=True)
        real_access = os.access
        # Root writes anywhere whatever the mode: the refusal a user's account gets is injected.
        monkeypatch.setattr(cache.os, "access", lambda path, mode: False if Path(path) == tmp_path / "cache" / "onnx" else real_access(path, mode))
    else:
        monkeypatch.setattr(cache.shutil, "disk_usage", lambda path: SimpleNamespace(total=10 << 30, used=10 << 30, free=1 << 20))
    with caplog.at_level(logging.WARNING):
        pipe = hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)
    messages = warnings_of(caplog)
    assert len(messages) == 1 and "could not be built" in messages[0] and "running torch" in messages[0], messages
    assert not isinstance(pipe.model, GraphModel) and f"the {graph_kind.kind} graph could not be built" in pipe.execution_plan.reason
    assert pipe(TEXT)["text"].split()[0].lower().startswith("so")
    assert not [path for path in tmp_path.rglob("*") if path.suffix in (".onnx", ".xml", ".bin")]


def test_graphs_left_by_other_versions_are_removed_once_the_new_one_is_in_place(graph_kind, prefers_graph):
    target = cache.graph_folder(prefers_graph, graph_kind.kind)
    stale = target.with_name(target.name.rsplit("-", 1)[0] + "-0123456789abcdef")
    stale.mkdir(parents=True)
    (stale / graph_kind.weights).write_bytes(b"an older build")
    other_checkpoint = target.parent / f"final-01234567-{graph_kind.kind}-0123456789abcdef"
    other_checkpoint.mkdir()
    hf_punctcase.load_pipeline(prefers_graph, **graph_kind.load)
    assert cache.cached_graph(prefers_graph, graph_kind.kind) == target and not stale.exists()
    assert other_checkpoint.exists()  # another checkpoint's graph is not this one's to remove


def _build_in_a_process(folder: str, cache_folder: str, kind: str, queue) -> None:
    os.environ["HF_PUNCTCASE_CACHE"] = cache_folder
    from transformers import AutoTokenizer

    from hf_punctcase import AutoModelForJointTokenClassification
    from hf_punctcase.export.cache import build_graph

    model = AutoModelForJointTokenClassification.from_pretrained(folder)
    queue.put(str(build_graph(folder, model, AutoTokenizer.from_pretrained(folder), kind)))


def test_two_processes_building_at_once_both_finish_with_one_graph(graph_kind, prefers_graph, tmp_path):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    arguments = (str(prefers_graph), str(tmp_path / "cache"), graph_kind.kind, queue)
    builders = [context.Process(target=_build_in_a_process, args=arguments) for _ in range(2)]
    for builder in builders:
        builder.start()
    for builder in builders:
        builder.join(timeout=300)
        assert builder.exitcode == 0
    built = {queue.get(timeout=10), queue.get(timeout=10)}
    assert len(built) == 1
    graphs = [path for path in (tmp_path / "cache" / "onnx").iterdir()]
    assert graphs == [Path(built.pop())]  # no staging folder left behind
    assert cache.cached_graph(prefers_graph, graph_kind.kind) == graphs[0]


def test_the_int8_graph_cut_to_a_calls_tasks_is_kept_for_later_processes_and_cut_again_when_damaged(
    tiny_tokenizer, tmp_path, monkeypatch
):
    import torch
    from conftest import tiny_config

    from hf_punctcase.labels import COMMAND_LABELS
    from hf_punctcase.formats.onnx import CachedCutsBackend

    # A checkpoint with a spoken-command head: a plain call runs the graph cut to the other heads.
    torch.manual_seed(0)
    folder = tmp_path / "checkpoint"
    hf_punctcase.JointTokenClassificationModel(tiny_config(command_labels=list(COMMAND_LABELS))).save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "preferred_cpu_runtime": INT8_GRAPH}))
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("hf_punctcase.loading.detect_hardware", lambda: PLAIN_CPU)

    expected = hf_punctcase.load_pipeline(folder)(TEXT)["text"]
    kept = list((tmp_path / "cache").rglob("model.cut-*.onnx"))
    assert len(kept) == 1 and "command" not in kept[0].name
    described = list((tmp_path / "cache").rglob("model.outputs-*.json"))
    assert len(described) == 1
    # A later process loads the kept cut and cuts nothing, and makes no session of the whole graph.
    with monkeypatch.context() as patch:
        patch.setattr(
            CachedCutsBackend, "_graph_cut_to",
            lambda self, tasks: None if tasks == tuple(self.outputs) else pytest.fail("the graph was cut again"),
        )
        later = hf_punctcase.load_pipeline(folder)
        assert isinstance(later.backend, CachedCutsBackend) and later.backend._sessions == {}
        assert later(TEXT)["text"] == expected
        # A call that runs every head runs the whole graph, made when first asked for.
        assert later(TEXT, spoken_punctuation=True)["words"][0]["command"] in COMMAND_LABELS
    # A damaged cut is cut again and replaced; damaged names are read off the whole graph again.
    kept[0].write_bytes(b"not a graph")
    described[0].write_text("{not json")
    assert hf_punctcase.load_pipeline(folder)(TEXT)["text"] == expected
    assert kept[0].stat().st_size > 1000
    assert json.loads(described[0].read_text())["inputs"] == ["input_ids", "attention_mask"]
