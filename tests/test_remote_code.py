"""The trust_remote_code bundle written at save time, and standard transformers tooling on our checkpoints."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

import hf_punctcase
from hf_punctcase.export.remote_code import SHARED_MODULES, bundle_modules, flatten_module


def _run_without_plugin(script: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    # stdin closed: a trust_remote_code prompt would read EOF, and its text would show on stdout
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL
    )


def test_saved_checkpoint_carries_flat_code_with_single_dot_imports(tiny_model_dir):
    files = {name: open(os.path.join(tiny_model_dir, name), encoding="utf-8").read() for name in bundle_modules(hf_punctcase.JointTokenClassificationModel)}
    for name, source in files.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and not (node.module or "").startswith("hf_punctcase"), (name, node.module)
                if node.level == 1:
                    assert f"{node.module}.py" in files, (name, node.module)
    config = json.loads(open(os.path.join(tiny_model_dir, "config.json")).read())
    assert config["auto_map"]["AutoConfig"] == "configuration.JointTokenClassificationConfig"
    assert config["custom_pipelines"]["punct-case-remote-code"]["impl"] == "pipeline.PunctCasePipeline"
    assert set(SHARED_MODULES) <= set(files)


def test_flattening_refuses_a_module_that_imports_outside_the_bundle():
    # the CLI imports the registry, which the bundle does not carry
    with pytest.raises(ValueError, match="does not carry"):
        flatten_module("hf_punctcase.registry", {"hf_punctcase.labels": "labels"})


def test_config_names_the_punctuation_labels_and_the_output_has_logits(tiny_model, tiny_tokenizer):
    import torch

    assert tiny_model.config.id2label == dict(enumerate(tiny_model.config.punct_labels))
    batch = tiny_tokenizer(["so what are the risks"], return_tensors="pt")
    with torch.no_grad():
        output = tiny_model(**batch)
    assert torch.equal(output.logits, output.punct_logits)


def test_token_classification_pipeline_and_auto_tokenizer_without_the_plugin(tiny_model_dir, tmp_path):
    script = f"""
from transformers import AutoTokenizer, pipeline
tokenizer = AutoTokenizer.from_pretrained({tiny_model_dir!r}, trust_remote_code=False)
p = pipeline("token-classification", model={tiny_model_dir!r}, trust_remote_code=True, aggregation_strategy="none",
             ignore_labels=[])
labels = {{entity["entity"] for entity in p("so what are the risks i am not technical")}}
assert labels and labels <= {{"O", "COMMA", "PERIOD", "QUESTION"}}, labels
print("OK", type(tokenizer).__name__)
"""
    result = _run_without_plugin(script, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "OK" in result.stdout and "Do you wish" not in result.stdout


def test_auto_tokenizer_with_the_plugin_never_prompts(tiny_model_dir, tmp_path):
    script = f"""
import hf_punctcase
from transformers import AutoTokenizer
AutoTokenizer.from_pretrained({tiny_model_dir!r})
print("OK")
"""
    result = _run_without_plugin(script, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "OK" and "Do you wish" not in result.stderr


def test_checkpoints_carry_the_code_the_run_started_with_when_files_change_on_disk(tmp_path, monkeypatch, tiny_tokenizer):
    """A training run saves a checkpoint every few minutes for hours; editing the package meanwhile (an
    import added to a bundled module) made its next save fail, and a changed file would have put code
    the run never ran into its checkpoints. The bundle is read once, as the run starts."""
    import importlib
    import textwrap

    from conftest import tiny_config

    from hf_punctcase.export.remote_code import bundle_sources
    from hf_punctcase.training.run import hold_remote_code

    package = tmp_path / "edited_family"
    package.mkdir()
    module = package / "modeling.py"
    module.write_text(textwrap.dedent('''
        from hf_punctcase.models.joint_transformer.modeling import JointTokenClassificationModel


        class EditedModel(JointTokenClassificationModel):
            """A model whose module is edited while it trains."""
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    model_class = importlib.import_module("edited_family.modeling").EditedModel
    model = model_class(tiny_config())
    hold_remote_code(model)  # as a training run does when it starts
    started_with = bundle_sources(model_class)["modeling.py"]
    module.write_text(module.read_text() + "\nfrom hf_punctcase.hub import push_to_hub  # an edit made mid-run\n")
    model.save_pretrained(tmp_path / "checkpoint")
    assert (tmp_path / "checkpoint" / "modeling.py").read_text() == started_with
    assert "an edit made mid-run" not in started_with
