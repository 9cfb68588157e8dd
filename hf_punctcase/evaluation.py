"""Word-level scores: per-class precision/recall/F1 and the micro average over the non-default classes.

Convention (DESIGN.md): punctuation "overall" is the micro average over every class but O; casing
"overall" is the micro average over every class but LOWER.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import precision_recall_fscore_support

from .labels import LabelScheme
from .modeling import IGNORE_INDEX


def _per_class(true: Sequence[str], pred: Sequence[str], classes: Sequence[str], prefix: str) -> dict[str, float]:
    scores: dict[str, float] = {}
    if not len(true):
        return scores
    p, r, f, support = precision_recall_fscore_support(true, pred, labels=list(classes), zero_division=0)
    for i, name in enumerate(classes):
        scores[f"{prefix}_{name}_precision"] = float(p[i])
        scores[f"{prefix}_{name}_recall"] = float(r[i])
        scores[f"{prefix}_{name}_f1"] = float(f[i])
        scores[f"{prefix}_{name}_support"] = int(support[i])
    p, r, f, _ = precision_recall_fscore_support(true, pred, labels=list(classes), average="micro", zero_division=0)
    scores[f"{prefix}_overall_precision"] = float(p)
    scores[f"{prefix}_overall_recall"] = float(r)
    scores[f"{prefix}_overall_f1"] = float(f)
    return scores


def score_labels(
    scheme: LabelScheme,
    true_punct: Sequence[str],
    pred_punct: Sequence[str],
    true_case: Sequence[str] | None = None,
    pred_case: Sequence[str] | None = None,
) -> dict[str, float]:
    """Per-class and overall P/R/F1 for punctuation (and casing when given), word by word."""
    if len(true_punct) != len(pred_punct):
        raise ValueError(f"{len(true_punct)} reference punctuation labels but {len(pred_punct)} predicted")
    scores = _per_class(true_punct, pred_punct, scheme.punct_labels[1:], "punct")
    if true_case is not None and pred_case is not None:
        if len(true_case) != len(pred_case):
            raise ValueError(f"{len(true_case)} reference casing labels but {len(pred_case)} predicted")
        cased = [label for label in scheme.case_labels if label != "LOWER"]
        scores.update(_per_class(true_case, pred_case, cased, "case"))
    return scores


def compute_metrics_for(scheme: LabelScheme):
    """A ``compute_metrics`` for the Trainer: scores first-subword predictions of both heads."""

    def compute_metrics(eval_prediction) -> dict[str, float]:
        punct_logits, case_logits = eval_prediction.predictions[:2]
        punct_labels, case_labels = eval_prediction.label_ids
        punct_mask = punct_labels != IGNORE_INDEX
        case_mask = case_labels != IGNORE_INDEX
        punct_names = np.array(scheme.punct_labels)
        case_names = np.array(scheme.case_labels)
        return score_labels(
            scheme,
            punct_names[punct_labels[punct_mask]],
            punct_names[punct_logits.argmax(-1)[punct_mask]],
            case_names[case_labels[case_mask]],
            case_names[case_logits.argmax(-1)[case_mask]],
        )

    return compute_metrics


def evaluate_pipeline(restorer, documents: Sequence[tuple[str, str]], batch_size: int = 16) -> dict[str, float]:
    """Score a punct-case pipeline on punctuated reference documents through its public interface.

    Each reference is parsed into words and labels; the pipeline sees the words lowercased and
    unpunctuated (ASR-like), one document per input, and its per-word labels are scored.
    Returns the per-class scores plus ``words`` and ``words_per_second``.
    """
    import time

    scheme: LabelScheme = restorer.scheme
    references = [scheme.parse(text) for _, text in documents]
    start = time.perf_counter()
    results = restorer([" ".join(ref.words) for ref in references], batch_size=batch_size)
    seconds = time.perf_counter() - start
    true_punct, pred_punct, true_case, pred_case = [], [], [], []
    for ref, result in zip(references, results):
        true_punct += ref.punct
        true_case += ref.case
        pred_punct += [w["punctuation"] for w in result["words"]]
        pred_case += [w["casing"] for w in result["words"]]
    scores = score_labels(scheme, true_punct, pred_punct, true_case, pred_case)
    scores["words"] = len(true_punct)
    scores["words_per_second"] = len(true_punct) / seconds
    return scores
