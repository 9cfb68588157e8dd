"""Loading replaces nothing of transformers: its ``pipeline`` loads every checkpoint and export folder
(the embedded ones by their path constants) in any import order, and runs it as
``hf_punctcase.load_pipeline`` does, with the same plan."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import transformers

import hf_punctcase
from hf_punctcase import AutoModelForJointTokenClassification
from hf_punctcase.formats.onnx import OnnxModel

TEXT = "so what are the risks i am not technical"

# Run in a fresh interpreter, so that the import order is the one written.
ORDER_SCRIPT = """
import json, sys
if sys.argv[1] == "transformers-first":
    import transformers
    from transformers import pipeline
    before = transformers.pipeline
    import hf_punctcase
else:
    import hf_punctcase
    import transformers
    from transformers import pipeline
    before = transformers.pipeline
import transformers.pipelines
results = {"untouched": transformers.pipeline is before and transformers.pipelines.pipeline is before
           and not hasattr(transformers, "AutoModelForJointTokenClassification")}
for name, folder in hf_punctcase.EMBEDDED_MODELS.items():
    ours, theirs = hf_punctcase.load_pipeline(name), pipeline("punct-case", model=folder)
    results[name] = {
        "same_plan": ours.execution_plan == theirs.execution_plan,
        "plan": ours.execution_plan.describe(),
        "same_text": ours(sys.argv[2])["text"] == theirs(sys.argv[2])["text"],
        "model": type(theirs.model).__name__,
    }
print(json.dumps(results))
"""


@pytest.mark.parametrize("order", ["transformers-first", "plugin-first"])
def test_transformers_pipeline_loads_the_embedded_folders_in_either_import_order(order):
    done = subprocess.run([sys.executable, "-c", ORDER_SCRIPT, order, TEXT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["untouched"]
    assert set(results) == {"untouched", *hf_punctcase.EMBEDDED_MODELS}
    for name in hf_punctcase.EMBEDDED_MODELS:
        assert results[name]["same_plan"] and results[name]["same_text"], results[name]
    assert results["on-device"]["model"] == "OnnxModel"


def test_importing_the_plugin_replaces_nothing_of_transformers():
    assert transformers.pipeline.__module__ == "transformers.pipelines"
    assert not hasattr(transformers.pipeline, "__wrapped__")
    assert "AutoModelForJointTokenClassification" not in vars(transformers.models.auto)


def test_the_auto_class_loads_an_export_folder_as_its_onnx_model(tiny_model_dir):
    model = AutoModelForJointTokenClassification.from_pretrained(hf_punctcase.ON_DEVICE_MODEL_DIR)
    assert isinstance(model, OnnxModel) and model.config.model_type == "cnn_bilstm_punct_case"
    with pytest.raises(ValueError, match="precision was fixed at export"):
        AutoModelForJointTokenClassification.from_pretrained(hf_punctcase.ON_DEVICE_MODEL_DIR, dtype="bfloat16")
    with pytest.raises(TypeError, match="cannot use"):
        AutoModelForJointTokenClassification.from_pretrained(hf_punctcase.ON_DEVICE_MODEL_DIR, output_attentions=True)
    # a model object given to the pipeline runs as it is; one loaded by name runs as planned
    torch_model = AutoModelForJointTokenClassification.from_pretrained(tiny_model_dir)
    given = transformers.pipeline("punct-case", model=torch_model, tokenizer=tiny_model_dir)
    assert given.execution_plan.reason == "the model as given"
    by_name = transformers.pipeline("punct-case", model=tiny_model_dir)
    assert by_name.execution_plan == hf_punctcase.loading.plan_execution(tiny_model_dir)


def test_a_checkpoint_says_what_it_prefers_on_a_cpu(tiny_model_dir):
    from hf_punctcase.loading import INT8_GRAPH

    shipped = json.loads((hf_punctcase.DEFAULT_MODEL_DIR / "config.json").read_text())
    assert shipped["preferred_cpu_runtime"] == INT8_GRAPH
    assert json.loads((hf_punctcase.ON_DEVICE_MODEL_DIR / "config.json").read_text()).get("preferred_cpu_runtime") is None
    assert hf_punctcase.JointTokenClassificationConfig.from_pretrained(tiny_model_dir).preferred_cpu_runtime is None


def test_a_cached_int8_graph_runs_without_loading_the_torch_model(monkeypatch):
    import torch
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    from hf_punctcase.hardware import Hardware

    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("the shortcut is for machines whose only device is the CPU")
    plain = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2")  # no bf16 instructions: the default's int8 graph
    monkeypatch.setattr("hf_punctcase.loading.detect_hardware", lambda: plain)
    first = hf_punctcase.load_pipeline()  # builds the graph where it is not cached yet
    assert isinstance(first.model, OnnxModel) and first.execution_plan.precision == "int8"

    def no_torch_model(*args, **kwargs):
        raise AssertionError("the torch model was loaded")

    monkeypatch.setattr(_BaseAutoModelClass, "from_pretrained", classmethod(no_torch_model))
    again = transformers.pipeline("punct-case", model=hf_punctcase.DEFAULT_MODEL_DIR)
    assert isinstance(again.model, OnnxModel) and again.execution_plan == first.execution_plan
    assert again(TEXT)["text"] == first(TEXT)["text"]
