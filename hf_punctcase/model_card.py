"""Model cards (the README.md of a checkpoint), built on ``huggingface_hub.ModelCard``.

What a card states is gathered in a :class:`PunctCaseCardFacts` (every figure from a measurement:
the training records a recipe leaves with a checkpoint, or what the caller passes in). The card's
metadata is a ``huggingface_hub.ModelCardData`` (licence, datasets, base model, ``model-index`` from
one ``EvalResult`` per dev set and metric), and its text is rendered from the Jinja template shipped
in the package, ``hf_punctcase/templates/model_card.md``.

Licences follow the weights: a checkpoint trained further from another joint checkpoint carries that
checkpoint's training data, read from its training records (``training_summary.json``) or, where it
has none (the embedded default ships without them), from the training-data table of its card.
``base_model`` then names that checkpoint: its Hub id, or :data:`EMBEDDED_DEFAULT_ID` for the
embedded default, which is not published on the Hub.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from .encoders import PYPI_PACKAGES

#: The card template shipped in the package (package data, see pyproject.toml).
TEMPLATE_PATH = Path(__file__).resolve().parent / "templates" / "model_card.md"
#: ``base_model`` of a checkpoint trained from the embedded default. The default is not on the Hub, so it
#: is named by where it lives: the ``default_model`` folder of the ``hf_punctcase`` package.
EMBEDDED_DEFAULT_ID = "hf_punctcase/default_model"
JOINT_MODEL_TYPE = "joint_token_classification"
#: What a card says each model family is.
JOINT_ARCHITECTURE = (
    "a joint token classifier (Sunkara et al. 2020) with a punctuation head and a casing head that reads the "
    "punctuation softmax"
)
CNN_BILSTM_MODEL_TYPE = "cnn_bilstm_punct_case"


def architecture_of(config: dict) -> str:
    """A checkpoint's model in words, from its config.json."""
    if config.get("model_type") == CNN_BILSTM_MODEL_TYPE:
        return (
            f"a small CNN-BiLSTM trained from scratch on its own {config.get('vocab_size', 5000):,}-subword vocabulary "
            f"({config.get('num_cnn_layers', 3)} convolutional layers, {config.get('num_bilstm_layers', 2)} BiLSTM layers "
            "and an LSTM), whose punctuation head reads each state and the next and whose casing head reads the "
            "previous state and each state, for restoration on devices"
        )
    if config.get("disfluency_labels"):
        dependency = {
            "punct_to_disfl": ", reading the punctuation probabilities through attention between the heads",
            "disfl_to_punct": "; the punctuation head reads the disfluency probabilities through attention between the heads",
        }.get(config.get("head_dependency", "none"), "")
        return f"{JOINT_ARCHITECTURE}, and a disfluency head that marks fillers, edit terms and reparanda{dependency}"
    return JOINT_ARCHITECTURE


TASK_TYPE = "token-classification"
TASK_NAME = "Punctuation and truecasing restoration"
TAGS = ["punctuation-restoration", "truecasing", "asr", "hf_punctcase"]
#: The licences of the training corpora (hf_punctcase.data.LICENCES) that have a Hub licence id: a card
#: whose data all share one of them is under it; any other mix is "other", described in the card.
HUB_LICENCES = {
    "CC BY 4.0": "cc-by-4.0",
    "CC0": "cc0-1.0",
    "CC BY-NC-ND 3.0": "cc-by-nc-nd-3.0",
    "CC BY-NC-SA 3.0": "cc-by-nc-sa-3.0",
    "CC BY-NC-SA 4.0": "cc-by-nc-sa-4.0",
}
#: Readable names of the label classes, for table headers.
CLASS_NAMES = {"COMMA": ",", "PERIOD": ".", "QUESTION": "?", "UPPER_FIRST": "Word", "ALL_UPPER": "WORD", "MIXED": "MiXed"}
#: Corpora that are the user's own files: no name to list under the card's `datasets`.
USER_CORPORA = {"text", "asr_hypotheses"}
_DATA_TABLE_HEADER = "| corpus | words in the training pool | licence |"
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass
class TrainingDataset:
    """A row of the card's training-data table."""

    name: str  # what the corpus is (hf_punctcase.data.LICENCES), e.g. "Switchboard Dialog Act corpus"
    words: int | None  # None: the record has only the total (an MLM corpus mix), or the card gave none
    licence: str
    description: str = ""  # how it was used: "stage 1, weight 0.285", "MLM adaptation", ...
    corpus: str = ""  # the corpus name in hf_punctcase.data ("swda"): the card's `datasets` metadata
    words_note: str = "see Training"  # what the table says where ``words`` is None


@dataclass
class DevSetEvaluation:
    """The scores of one dev set, keyed as hf_punctcase.evaluation gives them (fractions): ``punct_overall_f1``,
    ``punct_COMMA_precision``, ``case_overall_f1``, ``punct_slot_error_rate``, ``words``, ``words_per_second``.
    Per-class precision and recall are optional: without them the set has a row in the summary table only."""

    name: str
    scores: dict[str, float]


@dataclass
class PunctCaseCardFacts:
    """Facts a card states; every figure comes from a measurement, passed in by the caller."""

    model_name: str
    base_encoder: str
    num_parameters: int
    size_on_disk_mb: float
    datasets: list[TrainingDataset]
    recipe_command: str
    training_time: str
    hardware: str | None = None  # what it was trained on, e.g. "2 CPU cores (x86-64, bf16 autocast), no GPU"
    evaluations: list[DevSetEvaluation] = field(default_factory=list)
    evaluation_command: str = ""
    evaluation_notes: list[str] = field(default_factory=list)  # paragraphs above the evaluation tables
    notes: list[str] = field(default_factory=list)  # more limitations
    weights_dtype: str = "fp16"
    base_model_id: str | None = None  # the card's `base_model`: the Hub id of the encoder or checkpoint it started from
    encoder_id: str | None = None  # the encoder's Hub id (the base model too, unless it went on from a checkpoint)
    base_checkpoint: str | None = None  # the joint checkpoint it was trained further from, in words
    repo_id: str | None = None  # where the checkpoint is published, for the usage lines
    embedded_default: bool = False  # the package's default model: pipeline("punct-case") loads it
    embedded_name: str | None = None  # another embedded model's name (hf_punctcase.embedded), e.g. "on-device"
    onnx: bool = False  # the weights are an ONNX graph (run by ONNX Runtime; no trust_remote_code code)
    extra_sections: dict[str, str] = field(default_factory=dict)  # title → markdown (e.g. an ablation table)
    extra_datasets: list[str] = field(default_factory=list)  # `datasets` metadata a base checkpoint's card named
    punct_labels: Sequence[str] = ("COMMA", "PERIOD", "QUESTION")
    case_labels: Sequence[str] = ("UPPER_FIRST", "ALL_UPPER", "MIXED")
    architecture: str = JOINT_ARCHITECTURE  # the model in words (:func:`architecture_of`)


# --- licences and metadata ------------------------------------------------------------------------------


def is_non_commercial(licence: str) -> bool:
    """A licence that forbids commercial use: a corpus licence hf_punctcase.data lists as such, or one a
    base checkpoint's card gave (a Hub id such as cc-by-nc-4.0, or a name saying non-commercial)."""
    from .data.builder import NON_COMMERCIAL

    return licence in NON_COMMERCIAL or "non-commercial" in licence.lower() or bool(re.search(r"\bnc\b", licence.lower()))


def licence_metadata(datasets: Sequence[TrainingDataset]) -> tuple[str, str | None]:
    """``(license, license_name)`` of a checkpoint trained on ``datasets``: a non-commercial licence among
    them makes the whole checkpoint non-commercial; one shared licence with a Hub id is that licence."""
    licences = {d.licence for d in datasets}
    if not licences:
        return "unknown", None
    if any(map(is_non_commercial, licences)):
        return "other", "non-commercial"
    if len(licences) == 1 and next(iter(licences)) in HUB_LICENCES:
        return HUB_LICENCES[next(iter(licences))], None
    if "unknown" in licences:
        return "unknown", None
    return "other", "as-the-training-data"


def licence_text(datasets: Sequence[TrainingDataset]) -> str:
    """The licence in words, as the card's training-data section states it."""
    licences = sorted({d.licence for d in datasets})
    if not licences:
        return "unknown (no training data recorded)"
    non_commercial = [licence for licence in licences if is_non_commercial(licence)]
    if non_commercial:
        return f"non-commercial (trained on {', '.join(non_commercial)} data)"
    return f"as the training data: {', '.join(licences)}"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def eval_results(evaluations: Sequence[DevSetEvaluation]) -> list[EvalResult]:
    """Punctuation and casing micro F1 of every dev set (casing only where the set has casing), for
    the card's ``model-index``."""
    results = []
    for evaluation in evaluations:
        for prefix, config, label in (("punct", "punctuation", "Punctuation"), ("case", "casing", "Casing")):
            value = evaluation.scores.get(f"{prefix}_overall_f1")
            if value is None:
                continue
            results.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=TASK_NAME,
                    dataset_type=_slug(evaluation.name),
                    dataset_name=evaluation.name,
                    dataset_split="validation",
                    metric_type="f1",
                    metric_config=config,
                    metric_name=f"{label} micro F1",
                    metric_value=round(float(value), 4),
                )
            )
    return results


def card_metadata(facts: PunctCaseCardFacts) -> ModelCardData:
    """The card's YAML metadata."""
    licence, licence_name = licence_metadata(facts.datasets)
    corpora = [d.corpus for d in facts.datasets if d.corpus and d.corpus not in USER_CORPORA] + list(facts.extra_datasets)
    results = eval_results(facts.evaluations)
    return ModelCardData(
        language=["en"],
        license=licence,
        license_name=licence_name,
        library_name="transformers",
        pipeline_tag=TASK_TYPE,
        tags=list(TAGS),
        base_model=facts.base_model_id,
        datasets=list(dict.fromkeys(corpora)) or None,  # unique, in order
        metrics=["f1", "precision", "recall"],
        # model-index needs a name; without results there is no model-index and no name to give
        model_name=(facts.repo_id or facts.model_name) if results else None,
        eval_results=results or None,
    )


# --- rendering ------------------------------------------------------------------------------------------


def _percent(scores: dict[str, float], key: str) -> str:
    value = scores.get(key)
    return "–" if value is None else f"{100 * value:.1f}"


def _class_rows(scores: dict[str, float], prefix: str, classes: Sequence[str]) -> list[list[str]]:
    rows = [
        [name, *(_percent(scores, f"{prefix}_{name}_{what}") for what in ("precision", "recall", "f1")),
         str(scores.get(f"{prefix}_{name}_support", "–"))]
        for name in classes
    ]
    overall = [_percent(scores, f"{prefix}_overall_{what}") for what in ("precision", "recall", "f1")]
    rows.append(["**overall (micro)**", overall[0], overall[1], f"**{overall[2]}**", ""])
    return rows


def _summary(facts: PunctCaseCardFacts) -> tuple[list[str], list[list[str]]]:
    punct = [CLASS_NAMES.get(name, name) for name in facts.punct_labels]
    case = [CLASS_NAMES.get(name, name) for name in facts.case_labels]
    header = ["dev set", "words", *(f"{name} F1" for name in punct), "punct. overall F1", "punct. SER",
              *(f"{name} F1" for name in case), "casing overall F1", "words/s"]
    rows = []
    for evaluation in facts.evaluations:
        scores = evaluation.scores
        words, speed = scores.get("words"), scores.get("words_per_second")
        rows.append([
            evaluation.name,
            "–" if words is None else f"{int(words):,}",
            *(_percent(scores, f"punct_{name}_f1") for name in facts.punct_labels),
            f"**{_percent(scores, 'punct_overall_f1')}**",
            _percent(scores, "punct_slot_error_rate"),
            *(_percent(scores, f"case_{name}_f1") for name in facts.case_labels),
            f"**{_percent(scores, 'case_overall_f1')}**",
            "–" if speed is None else f"{speed:,.0f}",
        ])
    return header, rows


def _detailed(facts: PunctCaseCardFacts) -> list[dict]:
    """Per-class tables of the dev sets whose precision and recall were recorded."""
    return [
        {
            "name": evaluation.name,
            "punct": _class_rows(evaluation.scores, "punct", facts.punct_labels),
            "case": _class_rows(evaluation.scores, "case", facts.case_labels)
            if "case_overall_precision" in evaluation.scores else None,
        }
        for evaluation in facts.evaluations
        if "punct_overall_precision" in evaluation.scores
    ]


def build_model_card(facts: PunctCaseCardFacts) -> ModelCard:
    """The card as a ``huggingface_hub.ModelCard``, rendered from the package's template."""
    model_ref = json.dumps(facts.repo_id or "PATH_OR_REPO_ID")  # a JSON string is a Python string literal
    header, rows = _summary(facts)
    return ModelCard.from_template(
        card_metadata(facts),
        template_path=str(TEMPLATE_PATH),
        facts=facts,
        title=facts.model_name,
        model_ref=model_ref,
        usage_line=_usage_line(facts, model_ref),
        parameters=f"{facts.num_parameters / 1e6:.1f}M",
        weights=f"{facts.size_on_disk_mb:.1f} MB ({facts.weights_dtype} ONNX graph, run by ONNX Runtime)" if facts.onnx
        else f"{facts.size_on_disk_mb:.1f} MB ({facts.weights_dtype} safetensors{_loaded_as(facts.weights_dtype)})",
        punct_labels=", ".join(["O", *facts.punct_labels]),
        case_labels=", ".join(["LOWER", *facts.case_labels]),
        data_rows=[
            [f"{d.name}{' — ' + d.description if d.description else ''}",
             d.words_note if d.words is None else f"{d.words:,}", d.licence]
            for d in facts.datasets
        ],
        licence_text=licence_text(facts.datasets),
        summary_header=header,
        summary_rows=rows,
        detailed=_detailed(facts),
    )


def _usage_line(facts: PunctCaseCardFacts, model_ref: str) -> str:
    if facts.embedded_default:
        return 'p = pipeline("punct-case")  # this model is the embedded default'
    if facts.embedded_name:
        return f'p = pipeline("punct-case", model="{facts.embedded_name}")  # this model, embedded in the package'
    return f'p = pipeline("punct-case", model={model_ref})'


def render_model_card(facts: PunctCaseCardFacts) -> str:
    """Markdown with YAML front matter, as the Hub reads a README.md."""
    text = str(build_model_card(facts))
    return text if text.endswith("\n") else text + "\n"


# --- a base checkpoint's card ---------------------------------------------------------------------------


def card_training_data(card: ModelCard) -> list[TrainingDataset]:
    """The rows of a card's training-data table (as :func:`render_model_card` writes it); the corpus
    name comes back from its description where hf_punctcase.data knows it."""
    from .data.builder import LICENCES

    corpus_of = {description: name for name, (description, _) in LICENCES.items()}
    lines = card.text.splitlines()
    if _DATA_TABLE_HEADER not in lines:
        return []
    datasets = []
    for line in lines[lines.index(_DATA_TABLE_HEADER) + 2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) != 3:
            break
        label, words, licence = cells
        name, _, description = label.partition(" — ")
        count = words.replace(",", "")
        datasets.append(TrainingDataset(name, int(count) if count.isdigit() else None, licence, description,
                                        corpus_of.get(name, "")))
    return datasets


@dataclass
class BaseCheckpoint:
    """A joint checkpoint a training run started from, as its card or records describe it."""

    description: str  # in words, for the card
    hub_id: str | None  # the new card's `base_model`
    encoder: str | None  # the base encoder as its card names it
    datasets: list[TrainingDataset]
    metadata_datasets: list[str]


def _joint_checkpoint_card(init: str) -> tuple[Path | None, bool] | None:
    """(its README.md if it has one, whether it is the embedded default) of ``init`` if it is a joint
    checkpoint: a local folder, ``"default"``, or a Hub repo id in the local Hub cache (where the run that
    started from it left it). None for anything else (an encoder)."""
    from huggingface_hub import try_to_load_from_cache

    from .embedded import DEFAULT_MODEL_DIR, embedded_model_dir

    folder = embedded_model_dir(init) or Path(init).expanduser()
    if folder.is_dir():
        config, readme = folder / "config.json", folder / "README.md"
        embedded = folder.resolve() == DEFAULT_MODEL_DIR.resolve()
    elif _HUB_ID.match(init):
        cached = [try_to_load_from_cache(init, name) for name in ("config.json", "README.md")]
        config, readme = [Path(path) if isinstance(path, str) else None for path in cached]
        embedded = False
    else:
        return None
    if config is None or not config.is_file() or json.loads(config.read_text()).get("model_type") != JOINT_MODEL_TYPE:
        return None
    return (readme if readme is not None and readme.is_file() else None), embedded


def base_checkpoint(init: str | None) -> BaseCheckpoint | None:
    """What a checkpoint trained further from ``init`` inherits from it, if ``init`` is a joint checkpoint
    without training records: the training data and licences its card lists, and its name for
    ``base_model`` (the Hub id; :data:`EMBEDDED_DEFAULT_ID` for the embedded default; for a local folder,
    the Hub id its card was written for, else the card's own ``base_model``)."""
    found = _joint_checkpoint_card(str(init)) if init else None
    if found is None:
        return None
    readme, embedded = found
    card = ModelCard.load(readme, ignore_metadata_errors=True) if readme is not None else None
    is_local = Path(str(init)).expanduser().is_dir() or init == "default"
    if embedded:
        hub_id, description = EMBEDDED_DEFAULT_ID, (
            f"the embedded default of hf_punctcase (`{EMBEDDED_DEFAULT_ID}`, what `pipeline(\"punct-case\")` loads)"
        )
    elif not is_local:
        hub_id, description = str(init), f"`{init}`"
    else:
        named = card.data.get("model_name") if card is not None else None
        hub_id = named if named and _HUB_ID.match(named) else (card.data.get("base_model") if card is not None else None)
        description = f"a joint checkpoint{f' ({named})' if named else ''}"
    if card is None:
        # Nothing says what it was trained on: the card must not pass that off as no restriction.
        datasets = [TrainingDataset("the base checkpoint's training data (no card or training record found)", None,
                                    "unknown", words_note="–")]
        return BaseCheckpoint(description, hub_id, None, datasets, [])
    encoder = next((line.removeprefix("- Base encoder: ") for line in card.text.splitlines()
                    if line.startswith("- Base encoder: ")), None)
    datasets = card_training_data(card)
    metadata_datasets = card.data.get("datasets") or []
    metadata_datasets = [metadata_datasets] if isinstance(metadata_datasets, str) else list(metadata_datasets)
    if not datasets:  # a card of another layout: its metadata is all there is
        licence = card.data.get("license_name") or card.data.get("license") or "unknown"
        datasets = [TrainingDataset(name, None, licence) for name in metadata_datasets] or [
            TrainingDataset("the base checkpoint's training data", None, licence)
        ]
    for d in datasets:
        d.description = _one_checkpoint_back(d.description)
        d.words_note = "see its card"  # the base checkpoint's training is described on its own card
    return BaseCheckpoint(description, hub_id, encoder, datasets, metadata_datasets)


_BASE_CHECKPOINT = r"base checkpoint(?: \((\d+) checkpoints back\))?"
_CHECKPOINTS_BACK = re.compile(rf"^((?:{_BASE_CHECKPOINT}(?:, |$))+)(.*)$")


def _one_checkpoint_back(description: str | None) -> str:
    """The description of a base checkpoint's dataset row as seen from the checkpoint trained on it:
    "stage 1" → "base checkpoint, stage 1"; a row already that far back counts the checkpoints
    ("base checkpoint (3 checkpoints back), stage 1") instead of repeating the words."""
    match = _CHECKPOINTS_BACK.match(description or "")
    back, rest = 1, description or ""
    if match:
        back += sum(int(n) if n else 1 for n in re.findall(_BASE_CHECKPOINT, match[1]))
        rest = match[3]
    head = "base checkpoint" if back == 1 else f"base checkpoint ({back} checkpoints back)"
    return head + (f", {rest}" if rest else "")


# --- training records -----------------------------------------------------------------------------------


#: How a card names int8 storage (hf_punctcase.quantization): the encoder's Linear and Embedding weights.
INT8_WEIGHTS = "int8 per-row weight-only"


def _loaded_as(weights_dtype: str) -> str:
    if weights_dtype == "fp32":
        return ""
    if weights_dtype.startswith("int8"):
        return "; loaded as bf16 on CPUs with bf16 matrix units, else fp32"
    return ", loaded as fp32"


def stored_dtype(folder: str | os.PathLike) -> str:
    """The safetensors dtype name ("F32", "F16", "BF16", ...) a checkpoint's weights are stored in
    (of its first tensor; "F32" where there is none), or "I8" for a checkpoint whose encoder weights
    are stored as int8 (hf_punctcase.quantization)."""
    from safetensors import safe_open

    from .quantization import is_storage_quantized

    if is_storage_quantized(folder):
        return "I8"
    weights = sorted(Path(folder).glob("*.safetensors"))
    if not weights:
        return "F32"
    with safe_open(str(weights[0]), framework="pt") as handle:
        name = next(iter(handle.keys()), None)
        return handle.get_slice(name).get_dtype() if name else "F32"


def parameter_count(folder: str | os.PathLike) -> int:
    """Parameters in a checkpoint folder's safetensors files (int8-stored weights counted once, without
    their per-row scales and zero points)."""
    from safetensors import safe_open

    total = 0
    for weights in Path(folder).glob("*.safetensors"):
        with safe_open(str(weights), framework="pt") as handle:
            for name in handle.keys():
                if name.endswith(("_scale", "_zero_point")):  # torchao's per-row terms of an int8 weight
                    continue
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


def _lineage_datasets(folder: Path) -> list[TrainingDataset]:
    """Everything a checkpoint folder was trained on: its records' chain of stages, and the card of the
    record-less checkpoint that chain started from."""
    record = _training_record(folder)
    if record is None:
        base = base_checkpoint(str(folder))
        return base.datasets if base is not None else []
    chain = _training_chain(folder, record)
    base = base_checkpoint(chain[0][1].get("init"))
    return (base.datasets if base is not None else []) + [d for _, stage in chain for d in _datasets(stage)]


def _teacher_datasets(summary: dict) -> list[TrainingDataset]:
    """A distilled student learns from its teacher's training data too: it carries those licences."""
    from .embedded import embedded_model_dir

    teacher = (summary.get("distillation") or {}).get("teacher")
    folder = (embedded_model_dir(teacher) or Path(teacher)) if teacher else None
    datasets = _lineage_datasets(folder) if folder is not None and folder.is_dir() else []
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
    return TrainingDataset(description, words, licence, f"weight {weight}" if weight else "", name)


def _datasets(summary: dict) -> list[TrainingDataset]:
    if "train_corpora" in summary:
        return [_corpus_dataset(spec, summary["pool_words"].get(spec, 0)) for spec in summary["train_corpora"]]
    # the first recipe's record: words per source
    return [_corpus_dataset(name, words) for name, words in summary.get("train_words_by_source", {}).items()]


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
    summary = _training_record(folder)
    weights = list(folder.glob("*.safetensors"))
    dtype = {"F16": "fp16", "BF16": "bf16", "I8": INT8_WEIGHTS}.get(stored_dtype(folder), "fp32")
    chain = _training_chain(folder, summary) if summary else []
    base = base_checkpoint(chain[0][1].get("init")) if chain else None
    # The encoder's name as its config kept it, else where the first training stage started (unless that
    # was a joint checkpoint: then its card names the encoder).
    candidates = [config.get("encoder", {}).get("_name_or_path")]
    if base is None:
        candidates += [record.get("init") for _, record in chain[:1]]
    mlm = next((r for r in map(_mlm_record, filter(None, candidates)) if r), None)
    if mlm is not None:  # a domain-adapted encoder is named by the encoder it was adapted from
        candidates = [mlm.get("encoder")]
    identities = [_encoder_identity(str(c)) for c in candidates if c]
    fallback = (base.encoder or "as the base checkpoint's", None) if base is not None else ("unknown", None)
    base_encoder, base_model_id = next((i for i in identities if i[1]), identities[0] if identities else fallback)
    if mlm is not None:
        base_encoder += f", adapted by {mlm.get('masking', 'random')}-masking MLM on {mlm['words']:,} words (its corpora are listed under Training data)"
    datasets = _mlm_datasets(mlm) if mlm is not None else []
    encoder_id = base_model_id
    if base is not None:
        datasets += base.datasets
        base_model_id = base.hub_id
    for k, (_, record) in enumerate(chain):
        for d in _datasets(record) + _teacher_datasets(record):
            if len(chain) > 1:
                d.description = f"stage {k + 1}" + (f", {d.description}" if d.description else "")
            datasets.append(d)
    if len(chain) > 1:
        # Stages by number, not by folder: a card must not carry a machine's paths (the commands name them).
        stages = [f"stage {k + 1}: {_stage_description(record)}" for k, (_, record) in enumerate(chain)]
        training_time, commands = "; ".join(stages), " ; then ".join(r.get("command") or "not recorded" for _, r in chain)
    elif summary:
        training_time, commands = _stage_description(summary), summary.get("command") or "not recorded"
    else:
        training_time, commands = "not recorded", "not recorded"
    if mlm is not None and summary:
        training_time = f"{_mlm_description(mlm)}; then {training_time}"
        commands = f"{mlm.get('command') or 'not recorded'} ; then {commands}"
    if base is not None:
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
    )


def card_for_checkpoint(folder: str | os.PathLike, training_machine: str | None = None, repo_id: str | None = None) -> str:
    """The README.md card of a checkpoint folder (see :func:`card_data_for_checkpoint`)."""
    return render_model_card(card_data_for_checkpoint(folder, training_machine, repo_id))
