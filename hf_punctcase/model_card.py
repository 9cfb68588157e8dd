"""Model cards (README.md of a checkpoint) generated from what training and evaluation recorded."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .encoders import PYPI_PACKAGES


@dataclass
class TrainingDataset:
    name: str
    words: int | None  # None: the record has only the total (an MLM corpus mix)
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
    extra_sections: dict[str, str] = field(default_factory=dict)  # title → markdown (e.g. an ablation table)
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
    lines += [
        f"| {d.name}{' — ' + d.description if d.description else ''} | {'see Training' if d.words is None else f'{d.words:,}'} | {d.licence} |"
        for d in data.datasets
    ]
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
    for title, body in data.extra_sections.items():
        lines += [f"## {title}", "", body.strip(), ""]
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


def stored_dtype(folder: str | os.PathLike) -> str:
    """The safetensors dtype name ("F32", "F16", "BF16", ...) a checkpoint's weights are stored in
    (of its first tensor; "F32" where there is none)."""
    from safetensors import safe_open

    weights = sorted(Path(folder).glob("*.safetensors"))
    if not weights:
        return "F32"
    with safe_open(str(weights[0]), framework="pt") as handle:
        name = next(iter(handle.keys()), None)
        return handle.get_slice(name).get_dtype() if name else "F32"


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
    """(readable name, Hub id or None) of the encoder a checkpoint started from. A PyPI encoder is named
    by its package, not by the local path it was unpacked to (a card must not carry a machine's paths)."""
    for hub_id, package in PYPI_PACKAGES.items():
        if hub_id.lower() in source.lower().replace("_", "-"):
            return f"sentence-transformers/{hub_id} (Apache-2.0; from PyPI: {package})", f"sentence-transformers/{hub_id}"
    return source, None


def _mlm_record(encoder: str | None) -> dict | None:
    """The record recipes/mlm_adapt.py left with a domain-adapted encoder (mlm_summary.json), if any."""
    path = Path(encoder) / "mlm_summary.json" if encoder else None
    return json.loads(path.read_text()) if path is not None and path.is_file() else None


def _mlm_corpora(record: dict) -> list[str]:
    if "corpora" in record:
        return [*record["corpora"], *record.get("unlabeled", [])]
    # Records written before the corpora were stored: read them off the recorded command line.
    names, collecting = [], False
    for token in shlex.split(record.get("command", "")):
        if token.startswith("--"):
            collecting = token in ("--corpora", "--unlabeled")
        elif collecting:
            names.append(token)
    return names


def _mlm_datasets(record: dict) -> list[TrainingDataset]:
    """The text of the MLM adaptation: unlabelled use, but its licences follow the weights all the same."""
    datasets = [_corpus_dataset(spec, None) for spec in _mlm_corpora(record)]
    for d in datasets:
        d.description = "MLM adaptation" + (f", {d.description}" if d.description else "")
    return datasets


def checkpoint_step(checkpoint: str | os.PathLike | None) -> int | None:
    """The step a Trainer checkpoint was saved at, or None without one. A recipe resumed from a checkpoint
    records it, so that its card does not pass the time of the last leg off as the time of the whole run."""
    if not checkpoint:
        return None
    return json.loads((Path(checkpoint) / "trainer_state.json").read_text())["global_step"]


def _timed_steps(record: dict) -> str:
    minutes, steps, resumed = record["train_seconds"] / 60, record["global_step"], record.get("resumed_from_step")
    if resumed is None:
        return f"{minutes:.0f} min, {steps} steps"
    return f"{steps} steps (resumed from step {resumed}; steps {resumed}–{steps} took {minutes:.0f} min)"


def _mlm_description(record: dict) -> str:
    return (
        f"MLM adaptation ({record.get('masking', 'random')} masking): {_timed_steps(record)} over "
        f"{record['words']:,} words"
    )


def _training_record(folder: Path) -> dict | None:
    path = folder / "training_summary.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _stage_description(summary: dict) -> str:
    epoch = summary.get("epoch", (summary.get("dev_metrics") or {}).get("epoch"))
    text = _timed_steps(summary)
    if epoch is not None:
        text += f", {epoch:.2f} epoch of {summary['train_words']:,} words (≈ {epoch * summary['train_words'] / 1e6:.1f}M words seen)"
    if summary.get("distillation"):
        record = summary["distillation"]
        text += (
            f", distilled from {record['teacher']} (temperature {record['temperature']:g}, soft-target weight "
            f"{record['distill_weight']:g})"
        )
    return text


def _teacher_datasets(summary: dict) -> list[TrainingDataset]:
    """A distilled student learns from its teacher's training data too: it carries those licences."""
    teacher = (summary.get("distillation") or {}).get("teacher")
    record = _training_record(Path(teacher)) if teacher and Path(teacher).is_dir() else None
    if record is None:
        return []
    datasets = [d for _, stage in _training_chain(Path(teacher), record) for d in _datasets(stage)]
    for d in datasets:
        d.description = "teacher's data" + (f", {d.description}" if d.description else "")
    return datasets


def _training_chain(folder: Path, summary: dict) -> list[tuple[Path, dict]]:
    """This checkpoint's training record and those of the checkpoints it went on from (``init``)."""
    chain, seen = [(folder, summary)], {folder.resolve()}
    while chain[-1][1].get("init"):
        previous = Path(chain[-1][1]["init"])
        record = _training_record(previous) if previous.is_dir() else None
        if record is None or previous.resolve() in seen:
            break
        seen.add(previous.resolve())
        chain.append((previous, record))
    return chain[::-1]


def _corpus_dataset(spec: str, words: int | None) -> TrainingDataset:
    """A corpus spec (NAME, NAME=WEIGHT, text:PATH) as a row of the card's data table, with its licence."""
    from .data.builder import LICENCES

    source, _, weight = spec.partition("=")
    name = source.partition(":")[0]  # text:PATH names the user's file
    description, licence = LICENCES.get(name, (name, "unknown"))
    return TrainingDataset(description, words, licence, f"weight {weight}" if weight else "")


def _datasets(summary: dict) -> list[TrainingDataset]:
    if "train_corpora" in summary:
        return [_corpus_dataset(spec, summary["pool_words"].get(spec, 0)) for spec in summary["train_corpora"]]
    # the first recipe's record: words per source
    return [_corpus_dataset(name, words) for name, words in summary.get("train_words_by_source", {}).items()]


def card_data_for_checkpoint(folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None) -> ModelCardData:
    """What a card says about a checkpoint folder, from its config, weights and training records
    (``training_summary.json``, written by recipes/finetune.py, and those of the checkpoints it went
    on from). Without a record the card says so and states no figures."""
    from .data.builder import NON_COMMERCIAL

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    summary = _training_record(folder)
    weights = list(folder.glob("*.safetensors"))
    dtype = {"F16": "fp16", "BF16": "bf16"}.get(stored_dtype(folder), "fp32")
    chain = _training_chain(folder, summary) if summary else []
    # The encoder's name as its config kept it, else where the first training stage started.
    candidates = [config.get("encoder", {}).get("_name_or_path")] + [record.get("init") for _, record in chain[:1]]
    mlm = next((r for r in map(_mlm_record, filter(None, candidates)) if r), None)
    if mlm is not None:  # a domain-adapted encoder is named by the encoder it was adapted from
        candidates = [mlm.get("encoder")]
    identities = [_encoder_identity(str(c)) for c in candidates if c]
    base_encoder, base_model_id = next((i for i in identities if i[1]), identities[0] if identities else ("unknown", None))
    if mlm is not None:
        base_encoder += f", adapted by {mlm.get('masking', 'random')}-masking MLM on {mlm['words']:,} words (its corpora are listed under Training data)"
    datasets = _mlm_datasets(mlm) if mlm is not None else []
    for k, (_, record) in enumerate(chain):
        for d in _datasets(record) + _teacher_datasets(record):
            if len(chain) > 1:
                d.description = f"stage {k + 1}" + (f", {d.description}" if d.description else "")
            datasets.append(d)
    licences = {d.licence for d in datasets}
    non_commercial = sorted(licences & NON_COMMERCIAL)
    if len(chain) > 1:
        stages = [f"stage {k + 1} ({path}): {_stage_description(record)}" for k, (path, record) in enumerate(chain)]
        training_time, commands = "; ".join(stages), " ; then ".join(r.get("command") or "not recorded" for _, r in chain)
    elif summary:
        training_time, commands = _stage_description(summary), summary.get("command") or "not recorded"
    else:
        training_time, commands = "not recorded", "not recorded"
    if mlm is not None and summary:
        training_time = f"{_mlm_description(mlm)}; then {training_time}"
        commands = f"{mlm.get('command') or 'not recorded'} ; then {commands}"
    machine = training_machine or next((r["training_machine"] for _, r in chain[::-1] if r.get("training_machine")), "not recorded")
    return ModelCardData(
        model_name=repo_id or (folder.parent.name if folder.name == "final" else folder.name),
        base_encoder=base_encoder,
        base_encoder_licence="see the encoder's card",
        num_parameters=_parameter_count(folder),
        size_on_disk_mb=sum(w.stat().st_size for w in weights) / 2**20,
        datasets=datasets,
        licence="other" if datasets else "unknown",
        licence_name=f"non-commercial (trained on {', '.join(non_commercial)} data)" if non_commercial
        else (f"as the training data: {', '.join(sorted(licences))}" if licences else None),
        recipe_command=commands,
        training_time=training_time,
        training_machine=machine,
        evaluations={f"{name} validation": scores for name, scores in (summary or {}).get("pipeline_dev", {}).items()},
        evaluation_command="measured by recipes/finetune.py through pipeline('punct-case') on the dev corpora"
        if summary and summary.get("pipeline_dev") else "",
        notes=[] if summary else
        ["No training record (training_summary.json) was found with this checkpoint: data, licence and figures are unknown."],
        weights_dtype=dtype,
        base_model_id=base_model_id,
        repo_id=repo_id,
        punct_labels=[label for label in config.get("punct_labels", ["O", "COMMA", "PERIOD", "QUESTION"]) if label != "O"],
        case_labels=[label for label in config.get("case_labels", ["LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED"]) if label != "LOWER"],
    )


def card_for_checkpoint(folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None) -> str:
    """The README.md card of a checkpoint folder (see :func:`card_data_for_checkpoint`)."""
    return render_model_card(card_data_for_checkpoint(folder, training_machine, repo_id))
