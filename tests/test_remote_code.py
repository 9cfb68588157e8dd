"""The trust_remote_code bundle written at save time, and standard transformers tooling on our checkpoints."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

import hf_punctcase
from hf_punctcase.export.remote_code import REMOTE_CODE_TASK, SHARED_FILES, bundle_files, flatten_module


def _run_without_plugin(script: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    # stdin closed: a trust_remote_code prompt would read EOF, and its text would show on stdout
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL
    )


def test_saved_checkpoint_carries_flat_code_with_single_dot_imports(tiny_model_dir):
    config = json.loads(open(os.path.join(tiny_model_dir, "config.json")).read())
    bundle = bundle_files(hf_punctcase.JointTokenClassificationModel, config)
    files = {name: open(os.path.join(tiny_model_dir, name), encoding="utf-8").read() for name in bundle}
    for name, source in files.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and not (node.module or "").startswith("hf_punctcase"), (name, node.module)
                if node.level == 1:
                    assert f"{node.module}.py" in files, (name, node.module)
    assert config["auto_map"]["AutoConfig"] == "configuration.JointTokenClassificationConfig"
    assert config["custom_pipelines"]["punct-case-remote-code"]["impl"] == "pipeline.PunctCasePipeline"
    assert set(SHARED_FILES) <= set(files)


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
    started_with = bundle_sources(model_class, model.config)["modeling.py"]
    module.write_text(module.read_text() + "\nfrom hf_punctcase.hub import push_to_hub  # an edit made mid-run\n")
    model.save_pretrained(tmp_path / "checkpoint")
    assert (tmp_path / "checkpoint" / "modeling.py").read_text() == started_with
    assert "an edit made mid-run" not in started_with


def _blocking_the_plugin(script: str) -> str:
    """``script`` run where ``import hf_punctcase`` fails, as where the plugin is not installed."""
    return (
        "import sys\n"
        "class _NoPlugin:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'hf_punctcase' or name.startswith('hf_punctcase.'):\n"
        "            raise ImportError('hf_punctcase is not installed here')\n"
        "sys.meta_path.insert(0, _NoPlugin())\n" + script
    )


def test_a_bundle_carries_the_options_of_the_heads_its_config_lists_and_no_other(tiny_model_dir):
    from conftest import tiny_config

    from hf_punctcase.labels import DISFLUENCY_LABELS

    plain = bundle_files(hf_punctcase.JointTokenClassificationModel, tiny_config())
    assert not {"disfluency.py", "dictation.py", "paragraphs.py"} & set(plain)
    disfluent = bundle_files(hf_punctcase.JointTokenClassificationModel, tiny_config(disfluency_labels=list(DISFLUENCY_LABELS)))
    assert set(disfluent) - set(plain) == {"disfluency.py"}
    assert not any("layout" in name or "cli" in name for name in disfluent)


def test_flattening_refuses_modules_that_would_clash_or_come_in_the_wrong_order(tmp_path, monkeypatch):
    from hf_punctcase.export.remote_code import flatten_file

    package = tmp_path / "flatpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def helper():\n    return 1\n")
    (package / "b.py").write_text("from .a import helper as first\n\ndef helper():\n    return first()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = {"flatpkg.a": "both", "flatpkg.b": "both"}
    with pytest.raises(ValueError, match="both define 'helper'"):
        flatten_file("both.py", ("flatpkg.a", "flatpkg.b"), names)
    with pytest.raises(ValueError, match="holds after it"):
        flatten_file("both.py", ("flatpkg.b", "flatpkg.a"), names)


@pytest.fixture(scope="module")
def tiny_heads_dir(tmp_path_factory, tiny_tokenizer) -> str:
    """A tiny model with every built-in head, saved as a training run saves it."""
    import torch
    from conftest import tiny_config

    from hf_punctcase.labels import COMMAND_LABELS, DISFLUENCY_LABELS, PARAGRAPH_LABELS

    torch.manual_seed(0)
    config = tiny_config(
        disfluency_labels=list(DISFLUENCY_LABELS), command_labels=list(COMMAND_LABELS), paragraph_labels=list(PARAGRAPH_LABELS)
    )
    path = tmp_path_factory.mktemp("tiny_heads")
    hf_punctcase.JointTokenClassificationModel(config).eval().save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


def test_every_option_restores_the_same_where_the_plugin_cannot_be_imported(tiny_heads_dir, tmp_path):
    calls = {
        "plain": {},
        "remove_disfluencies": {"remove_disfluencies": True},
        "spoken_punctuation": {"spoken_punctuation": True},
        "paragraphs": {"paragraphs": True, "return_paragraphs": True},
        "together": {"remove_disfluencies": True, "spoken_punctuation": True, "paragraphs": True},
    }
    text = "so um what are the risks period new paragraph i am not technical comma and uh how long will it take"
    script = _blocking_the_plugin(f"""
import json, torch
from transformers import pipeline
p = pipeline({REMOTE_CODE_TASK!r}, model={tiny_heads_dir!r}, trust_remote_code=True, dtype=torch.float32)
print(json.dumps({{name: p({text!r}, **options) for name, options in {calls!r}.items()}}))
""")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    remote = json.loads(done.stdout.strip().splitlines()[-1])
    pipe = hf_punctcase.load_pipeline(tiny_heads_dir, runtime="torch", dtype="float32")
    for name, options in calls.items():
        assert remote[name] == json.loads(json.dumps(pipe(text, **options))), name


def test_the_default_saved_carries_at_most_fourteen_code_files_and_restores_without_the_plugin(tmp_path):
    pipe = hf_punctcase.load_pipeline(runtime="torch", dtype="float32")
    pipe.model.save_pretrained(tmp_path / "default")
    pipe.tokenizer.save_pretrained(tmp_path / "default")
    code = sorted(name for name in os.listdir(tmp_path / "default") if name.endswith(".py"))
    assert len(code) <= 14, code
    text = "um so what are the risks period i am not technical"
    script = _blocking_the_plugin(f"""
import json, torch
from transformers import pipeline
p = pipeline({REMOTE_CODE_TASK!r}, model={str(tmp_path / "default")!r}, trust_remote_code=True, dtype=torch.float32)
print(json.dumps([p({text!r})["text"], p({text!r}, remove_disfluencies=True, spoken_punctuation=True)["text"]]))
""")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [
        pipe(text)["text"], pipe(text, remove_disfluencies=True, spoken_punctuation=True)["text"]
    ]


def test_the_old_names_of_the_options_keep_working_with_a_warning():
    import importlib

    from hf_punctcase.options import DISFLUENCY
    from hf_punctcase.options.disfluency import merge_fluent

    with pytest.warns(FutureWarning, match="hf_punctcase.options.disfluency.DISFLUENCY"):
        from hf_punctcase.tasks import DISFLUENCY as old
    assert old is DISFLUENCY
    sys.modules.pop("hf_punctcase.fluency", None)
    with pytest.warns(FutureWarning, match="hf_punctcase.options.disfluency"):
        fluency = importlib.import_module("hf_punctcase.fluency")
    assert fluency.merge_fluent is merge_fluent
