"""A model card (the README.md of a checkpoint) as a ``huggingface_hub.ModelCard``, rendered from
:class:`~hf_punctcase.cards.facts.PunctCaseCardFacts`, and its training-data table read back.

The card's metadata is a ``huggingface_hub.ModelCardData`` (licence, datasets, base model, ``model-index``
from one ``EvalResult`` per dev set and metric), and its text is rendered from the Jinja template shipped
in the package, ``hf_punctcase/templates/model_card.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from .facts import DevSetEvaluation, PunctCaseCardFacts, TrainingDataset
from .licences import licence_metadata, licence_text

#: The card template shipped in the package (package data, see pyproject.toml).
TEMPLATE_PATH = Path(__file__).resolve().parents[1] / "templates" / "model_card.md"
TASK_TYPE = "token-classification"
TASK_NAME = "Punctuation and truecasing restoration"
TAGS = ["punctuation-restoration", "truecasing", "asr", "hf_punctcase"]
#: Readable names of the label classes, for table headers.
CLASS_NAMES = {"COMMA": ",", "PERIOD": ".", "QUESTION": "?", "UPPER_FIRST": "Word", "ALL_UPPER": "WORD", "MIXED": "MiXed"}
#: Corpora that are the user's own files: no name to list under the card's `datasets`.
USER_CORPORA = {"text", "asr_hypotheses"}
_DATA_TABLE_HEADER = "| corpus | words in the training pool | licence |"


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
        head_labels="".join(f"; {title} {', '.join(labels)}" for title, labels in facts.head_labels.items()),
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


def _loaded_as(weights_dtype: str) -> str:
    if weights_dtype == "fp32":
        return ""
    if weights_dtype.startswith("int8"):
        return "; loaded as bf16 on CPUs with bf16 matrix units, else fp32"
    return ", loaded as fp32"


def _usage_line(facts: PunctCaseCardFacts, model_ref: str) -> str:
    if facts.embedded_default:
        return 'p = pipeline("punct-case")  # this model is the embedded default'
    if facts.embedded_name:
        return f'p = hf_punctcase.load_pipeline("{facts.embedded_name}")  # this model, embedded in the package'
    return f'p = pipeline("punct-case", model={model_ref})'


def render_model_card(facts: PunctCaseCardFacts) -> str:
    """Markdown with YAML front matter, as the Hub reads a README.md."""
    text = str(build_model_card(facts))
    return text if text.endswith("\n") else text + "\n"


def card_training_data(card: ModelCard) -> list[TrainingDataset]:
    """The rows of a card's training-data table (as :func:`render_model_card` writes it); the corpus
    name comes back from its description where hf_punctcase.data knows it."""
    from ..data.builder import LICENCES

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
