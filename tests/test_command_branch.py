"""The spoken-command head's own top layers (``command_branch_layers``): they start as the encoder's,
only the command head reads them, training them leaves every other head's output as it was, and they
are saved, loaded, stored as int8 and exported like the encoder's layers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import tiny_config
from transformers import AutoTokenizer

import hf_punctcase
from hf_punctcase.export.onnx import export_onnx
from hf_punctcase.labels import COMMAND_LABELS
from hf_punctcase.models.joint_transformer.modeling import encoder_layers
from hf_punctcase.quantization import stored_int8_modules
from hf_punctcase.training.model import freeze_except

TEXTS = ["the patient had chest pain period does it hurt", "hello there"]


@pytest.fixture(scope="module")
def command_model_dir(tiny_tokenizer, tmp_path_factory) -> str:
    """A tiny checkpoint with a command head and no branch."""
    torch.manual_seed(0)
    model = hf_punctcase.JointTokenClassificationModel(tiny_config(command_labels=list(COMMAND_LABELS))).eval()
    folder = tmp_path_factory.mktemp("command_model")
    model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return str(folder)


def with_branch(folder: str, layers: int = 1):
    config = json.loads((Path(folder) / "config.json").read_text())
    config = hf_punctcase.JointTokenClassificationConfig.from_dict({**config, "command_branch_layers": layers})
    return hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(folder, config=config).eval()


def logits_of(model, tokenizer) -> dict[str, torch.Tensor]:
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        output = model(**batch)
    return {name: value for name, value in output.items() if name.endswith("_logits")}


def test_a_branch_starts_as_the_encoders_top_layers_and_changes_nothing(command_model_dir, tiny_tokenizer):
    plain = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(command_model_dir).eval()
    branched = with_branch(command_model_dir)
    top = encoder_layers(branched.encoder)[-1].state_dict()
    assert all(torch.equal(value, top[name]) for name, value in branched.command_branch[0].state_dict().items())
    before, after = logits_of(plain, tiny_tokenizer), logits_of(branched, tiny_tokenizer)
    assert before.keys() == after.keys() and "command_logits" in after
    assert all(torch.allclose(before[name], after[name], atol=1e-6) for name in before)


def test_training_the_branch_moves_the_command_head_alone_and_it_is_saved(command_model_dir, tiny_tokenizer, tmp_path):
    model = with_branch(command_model_dir, layers=2)
    before = logits_of(model, tiny_tokenizer)
    freeze_except(model, ["command_branch", "command_classifier"])
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    batch = tiny_tokenizer(TEXTS, return_tensors="pt", padding=True)
    labels = torch.full(batch["input_ids"].shape, -100)
    labels[:, 1:4] = COMMAND_LABELS.index("PERIOD")
    for _ in range(5):
        loss = model(**batch, command_labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    after = logits_of(model, tiny_tokenizer)
    assert not torch.allclose(before["command_logits"], after["command_logits"])
    assert all(torch.equal(before[name], after[name]) for name in before if name != "command_logits")
    model.save_pretrained(tmp_path / "trained")
    tiny_tokenizer.save_pretrained(tmp_path / "trained")
    loaded = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(tmp_path / "trained").eval()
    assert loaded.config.command_branch_layers == 2 and len(loaded.command_branch) == 2
    reloaded = logits_of(loaded, tiny_tokenizer)
    assert all(torch.allclose(after[name], reloaded[name], atol=1e-6) for name in after)


def test_the_branch_is_stored_as_int8_like_the_encoder(command_model_dir):
    names = stored_int8_modules(with_branch(command_model_dir))
    assert any(name.startswith("command_branch.0.") for name in names)
    assert not any("classifier" in name for name in names)


def test_a_branch_exports_to_onnx_with_the_torch_labels(command_model_dir, tmp_path):
    model = with_branch(command_model_dir)
    with torch.no_grad():
        for parameter in model.command_branch.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(tmp_path / "branched")
    AutoTokenizer.from_pretrained(command_model_dir).save_pretrained(tmp_path / "branched")
    export = export_onnx(tmp_path / "branched", tmp_path / "onnx")
    assert export.parity["punct_agreement"] == 1.0 and export.parity["max_probability_difference"] < 1e-4
    torch_pipe = hf_punctcase.load_pipeline(str(tmp_path / "branched"), dtype=torch.float32)
    onnx_pipe = hf_punctcase.load_pipeline(str(tmp_path / "onnx"))
    a = torch_pipe(TEXTS[0], return_probabilities=True)["probabilities"]["command"]
    b = onnx_pipe(TEXTS[0], return_probabilities=True)["probabilities"]["command"]
    assert np.abs(np.asarray(a) - np.asarray(b)).max() < 1e-4


def test_the_cached_int8_graph_quantizes_the_branch_as_it_does_the_encoders_layers(command_model_dir, tmp_path):
    """The per-token int8 graph (the default's on CPUs without bf16 instructions) rewrites a branch's
    attention and intermediate products like the encoder's, and keeps its feed-forward output in fp32."""
    import onnx

    from hf_punctcase.export.cache import keeps_float

    model = with_branch(command_model_dir)
    with torch.no_grad():  # trained away from the encoder's layer (an exact copy would share its weights)
        for parameter in model.command_branch.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(tmp_path / "branched")
    AutoTokenizer.from_pretrained(command_model_dir).save_pretrained(tmp_path / "branched")
    export_onnx(tmp_path / "branched", tmp_path / "int8", int8="per_token", keep_float=keeps_float)
    float_products = [
        node.name for node in onnx.load(str(tmp_path / "int8" / "model.onnx")).graph.node
        if node.op_type == "MatMul" and "command_branch" in node.name
    ]
    assert any("/output/dense/" in name for name in float_products)
    assert not [name for name in float_products if any(part in name for part in ("/query/", "/key/", "/value/", "/intermediate/"))]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"command_labels": list(COMMAND_LABELS), "command_branch_layers": 3}, "between 0 and the encoder's 2 layers"),
        ({"command_branch_layers": 1}, "needs the spoken-command head"),
    ],
)
def test_a_branch_the_config_cannot_have_is_one_error(fields, message):
    with pytest.raises(ValueError, match=message):
        tiny_config(**fields)


def _branched_folder(command_model_dir, tiny_tokenizer, folder: Path, layers: int = 1) -> Path:
    """A checkpoint whose branch differs from the encoder's top layer, so that its output shows."""
    model = with_branch(command_model_dir, layers)
    with torch.no_grad():
        for parameter in model.command_branch.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return folder


def test_a_forward_without_the_command_task_leaves_the_branch_out(command_model_dir, tiny_tokenizer):
    model = with_branch(command_model_dir, layers=2)
    calls = []
    model.command_branch[0].register_forward_hook(lambda *_: calls.append(1))
    batch = tiny_tokenizer(TEXTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        full = model(**batch)
        assert len(calls) == 1
        cut = model(**batch, tasks=("punct", "case"))
    assert len(calls) == 1 and cut.get("command_logits") is None
    assert torch.equal(full.punct_logits, cut.punct_logits) and torch.equal(full.case_logits, cut.case_logits)
    with pytest.raises(ValueError, match="left out of tasks"):
        model(**batch, tasks=("punct", "case"), command_labels=torch.zeros_like(batch["input_ids"]))


@pytest.mark.parametrize("runtime", ["torch", "onnx", "openvino"])
def test_the_command_head_runs_only_for_the_calls_that_use_it(command_model_dir, tiny_tokenizer, tmp_path, runtime):
    """Every runtime gives the same other fields with and without the command head, leaves the head's
    fields out of calls that do not ask for it, and (the graph runtimes) runs a graph without the
    branch's nodes for them."""
    folder = _branched_folder(command_model_dir, tiny_tokenizer, tmp_path / "branched")
    if runtime == "onnx":
        export_onnx(folder, tmp_path / "onnx")
        folder = tmp_path / "onnx"
    if runtime == "torch":
        pipe = hf_punctcase.load_pipeline(str(folder), runtime="torch", dtype=torch.float32)
    else:  # the export's own runtime, or the OpenVINO graph built from the checkpoint into the cache
        pipe = hf_punctcase.load_pipeline(str(folder), runtime=None if runtime == "onnx" else runtime)
    asked = pipe(TEXTS, return_commands=True)
    plain = pipe(TEXTS)
    for with_head, without in zip(asked, plain):
        assert all("command" in entry and "command_score" in entry for entry in with_head["words"])
        assert not any("command" in entry or "command_score" in entry for entry in without["words"])
        assert [{k: v for k, v in e.items() if not k.startswith("command")} for e in with_head["words"]] == without["words"]
    backend = pipe.backend
    ids = _ids(tiny_tokenizer, "pt" if runtime == "torch" else "np")
    with torch.no_grad():
        cut = backend(*ids, tasks=("punct", "case"))
        full = backend(*ids)
    assert set(cut) == {"punct", "case"} and "command" in full
    assert all(np.allclose(cut[task], full[task], atol=1e-6) for task in cut)
    if runtime == "onnx":
        import onnx

        whole = len(onnx.load(str(backend.path)).graph.node)
        assert len(backend._graph_cut_to(("punct", "case")).graph.node) < whole
    if runtime == "openvino":
        request, _ = backend._graph(("punct", "case"))
        full_request, _ = backend._graph(backend.outputs)
        assert len(request.get_compiled_model().get_runtime_model().get_ops()) < len(full_request.get_compiled_model().get_runtime_model().get_ops())


def _ids(tokenizer, tensors: str):
    batch = tokenizer(TEXTS, return_tensors=tensors, padding=True)
    return batch["input_ids"], batch["attention_mask"]


def test_the_onnx_runtime_backend_holds_the_sessions_its_calls_use_and_cuts_without_onnx_too(
    command_model_dir, tiny_tokenizer, tmp_path, monkeypatch
):
    from hf_punctcase.backends.onnxruntime import OnnxBackend

    export_onnx(_branched_folder(command_model_dir, tiny_tokenizer, tmp_path / "branched"), tmp_path / "onnx")
    ids = _ids(tiny_tokenizer, "np")
    backend = OnnxBackend(tmp_path / "onnx")
    whole, cut = tuple(backend.outputs), ("punct", "case")
    full = backend(*ids)
    first = backend(*ids, tasks=cut)
    assert set(backend._sessions) == {whole, cut}  # a call ran the whole graph: it stays
    fresh = OnnxBackend(tmp_path / "onnx")
    assert all(np.array_equal(fresh(*ids, tasks=cut)[task], first[task]) for task in cut)
    assert set(fresh._sessions) == {cut}  # made on loading, let go once a cut one ran and no call had used it
    # Without the onnx package the whole graph runs and the call still gets its tasks alone.
    monkeypatch.setitem(__import__("sys").modules, "onnx", None)
    alone = OnnxBackend(tmp_path / "onnx")
    assert alone._graph_cut_to(cut) is None
    result = alone(*ids, tasks=cut)
    assert set(result) == set(cut) and all(np.allclose(result[task], full[task], atol=1e-6) for task in cut)
