"""Share checkpoints through the Hugging Face Hub.

    from hf_punctcase.hub import push_to_hub
    push_to_hub("runs/swda/final", "org/punct-case-swda")              # weights, config, code, tokenizer, card

    pipeline("punct-case", model="org/punct-case-swda")                 # with the plugin imported
    pipeline(model="org/punct-case-swda", trust_remote_code=True)       # without it
    pipeline("punct-case", model="org/punct-case-swda", revision="<commit sha>")   # pinned

A pushed repo holds everything a user needs: safetensors weights, a config whose ``auto_map`` answers
AutoConfig, AutoModel, AutoModelForTokenClassification and AutoModelForJointTokenClassification and
whose ``custom_pipelines`` names the pipeline code, the code files (relative imports only), the
tokenizer (the MIXED-case lexicon lives in the config) and a README model card.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .cards.checkpoint import card_for_checkpoint
from .cards.weights import stored_dtype


def stage_checkpoint(checkpoint: str | os.PathLike, target: str | os.PathLike, card: str | None = None) -> Path:
    """Write into ``target`` what a pushed repo holds: the checkpoint re-saved through the plugin (so
    that code files, ``auto_map`` and ``custom_pipelines`` are current), its tokenizer and its card
    (``card`` if given, else the checkpoint's README.md, else one generated from its
    training_summary.json). An ONNX export (hf_punctcase.export.onnx) is copied as it is: its files
    are what the runtime reads."""
    import shutil

    import torch
    from transformers import AutoTokenizer

    from .auto import AutoModelForJointTokenClassification
    from .quantization import is_storage_quantized, save_quantized
    from .checkpoints import resolve
    from .execution import ONNXRUNTIME

    resolved = resolve(checkpoint, local_only=True)
    source = resolved.folder
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    if resolved.runtime == ONNXRUNTIME:
        shutil.copytree(source, target, dirs_exist_ok=True)
        if card is not None:
            (target / "README.md").write_text(card, encoding="utf-8")
        return target
    # Keep the checkpoint's dtypes: on disk (fp16, or int8 weights) and at load (it asks for fp32).
    config = json.loads((source / "config.json").read_text())
    if is_storage_quantized(source):
        # Loading turns int8 weights into floats; they are stored as int8 again (the same int8 values:
        # each row's largest weight is what its scale was taken from).
        with tempfile.TemporaryDirectory() as plain:
            AutoModelForJointTokenClassification.from_pretrained(source, dtype=torch.float32).save_pretrained(plain)
            AutoTokenizer.from_pretrained(source).save_pretrained(plain)
            save_quantized(Path(plain), target)
    else:
        model = AutoModelForJointTokenClassification.from_pretrained(source, dtype=_stored_dtype(source))
        model.save_pretrained(target)
        AutoTokenizer.from_pretrained(source).save_pretrained(target)
    saved = json.loads((target / "config.json").read_text())
    if config.get("dtype") and saved.get("dtype") != config["dtype"]:
        saved["dtype"] = config["dtype"]
        (target / "config.json").write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n")
    if card is None:
        readme = source / "README.md"
        card = readme.read_text(encoding="utf-8") if readme.is_file() else card_for_checkpoint(source)
    (target / "README.md").write_text(card, encoding="utf-8")
    return target


def _stored_dtype(folder: Path):
    import torch

    return {"F16": torch.float16, "BF16": torch.bfloat16}.get(stored_dtype(folder), torch.float32)


def push_to_hub(
    checkpoint: str | os.PathLike,
    repo_id: str,
    *,
    card: str | None = None,
    revision: str | None = None,
    private: bool | None = None,
    token: str | bool | None = None,
    commit_message: str = "Upload punct-case model",
    create_pr: bool = False,
):
    """Upload a checkpoint folder to ``repo_id`` (created if missing) in one commit; returns the
    ``CommitInfo`` (its ``oid`` is the commit to pin with ``revision=``)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    with tempfile.TemporaryDirectory() as tmp:
        folder = stage_checkpoint(checkpoint, tmp, card)
        check_card_metadata((folder / "README.md").read_text(encoding="utf-8"))
        api.create_repo(repo_id, private=private, exist_ok=True)
        operations = [
            CommitOperationAdd(path_in_repo=path.relative_to(folder).as_posix(), path_or_fileobj=str(path))
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        ]
        return api.create_commit(
            repo_id, operations, commit_message=commit_message, revision=revision, create_pr=create_pr
        )


def check_card_metadata(card: str) -> dict:
    """The card's YAML front matter as a dict; raises ValueError if it is missing, not valid YAML, or not
    valid model-card metadata for ``huggingface_hub.ModelCard`` (a ``model-index`` it cannot read), checked
    here, before anything is uploaded."""
    import yaml
    from huggingface_hub import ModelCard

    if not card.startswith("---\n") or "\n---" not in card[4:]:
        raise ValueError("the model card has no YAML front matter (--- ... ---)")
    try:
        metadata = yaml.safe_load(card[4 : card.index("\n---", 4)])
    except yaml.YAMLError as error:
        raise ValueError(f"the model card's YAML front matter is not valid: {error}") from None
    if not isinstance(metadata, dict):
        raise ValueError("the model card's YAML front matter is not a mapping")
    ModelCard(card)  # raises ValueError on metadata the Hub's card classes cannot read (model-index, eval results)
    return metadata
