"""Evaluation: scoring labels and pipelines with the punct_case metric, and the one list of dev sets."""

from .dev_sets import ASR_DEV_SETS, DEV_SETS, AsrDevSet, DevSet, available, short_texts, speech_loop_dev_sets
from .scoring import (
    FILLER_WORDS,
    compute_metrics_for,
    disfluency_table,
    evaluate_asr_set,
    evaluate_dataset,
    evaluate_dev_set,
    evaluate_disfluency,
    evaluate_pipeline,
    flatten_scores,
    restore_references,
    score_asr_pairs,
    score_head,
    score_task,
    score_labels,
)

__all__ = [
    "ASR_DEV_SETS",
    "AsrDevSet",
    "DEV_SETS",
    "DevSet",
    "FILLER_WORDS",
    "available",
    "compute_metrics_for",
    "disfluency_table",
    "evaluate_asr_set",
    "evaluate_dataset",
    "evaluate_dev_set",
    "evaluate_disfluency",
    "evaluate_pipeline",
    "flatten_scores",
    "restore_references",
    "score_asr_pairs",
    "score_head",
    "score_task",
    "score_labels",
    "short_texts",
    "speech_loop_dev_sets",
]
