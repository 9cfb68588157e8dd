"""Model cards (README.md of a checkpoint) generated from what training and evaluation recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


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
    lines = [
        "---",
        "library_name: transformers",
        "pipeline_tag: token-classification",
        f"license: {data.licence}",
        *([f"license_name: {data.licence_name}"] if data.licence_name else []),
        "language: [en]",
        "tags: [punctuation-restoration, truecasing, asr, hf_punctcase]",
        "---",
        "",
        f"# {data.model_name}",
        "",
        "Restores punctuation (, . ?) and casing (Word, WORD, iPhone) in lowercase, unpunctuated ASR "
        "transcripts: a joint token classifier (Sunkara et al. 2020) with a punctuation head and a casing head "
        "that reads the punctuation softmax.",
        "",
        "## Usage",
        "```python",
        "import hf_punctcase",
        "from transformers import pipeline",
        'p = pipeline("punct-case")  # this model is the embedded default' if data.model_name.endswith("default")
        else 'p = pipeline("punct-case", model="PATH")',
        'p("so what are the risks i am not technical")["text"]',
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
        "- Medical text: this checkpoint is not a medical device and has seen little clinical language; "
        "do not rely on it for clinical documentation without human review.",
    ]
    lines += [f"- {note}" for note in data.notes]
    return "\n".join(lines) + "\n"
