"""Evaluation: scoring labels and pipelines with the punct_case metric, and the one list of dev sets."""

from .scoring import (
    compute_metrics_for,
    evaluate_dataset,
    evaluate_pipeline,
    flatten_scores,
    restore_references,
    score_labels,
)

__all__ = [
    "compute_metrics_for",
    "evaluate_dataset",
    "evaluate_pipeline",
    "flatten_scores",
    "restore_references",
    "score_labels",
]
