"""Corpora → labelled word sequences → `datasets` objects.

from hf_punctcase.data import load_punct_case_dataset
ds = load_punct_case_dataset("ted", data_dir_path="../shared/data", max_words=200)   # DatasetDict
mine = load_punct_case_dataset("text", data_files=["mine.jsonl"], file_split="train")  # every document trains

Each name is imported from its module on first use (PEP 562), so that ``from hf_punctcase.data import
read_iwslt_cased`` reads a corpus without importing ``datasets``, rapidfuzz or the builder.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name and the module of this package that defines it.
_LAZY = {
    "FEATURES": "builder",
    "FILE_SOURCES": "builder",
    "LICENCES": "builder",
    "NON_COMMERCIAL": "builder",
    "SOURCES": "builder",
    "chunk_at_sentences": "builder",
    "consecutive_windows": "builder",
    "features_for": "builder",
    "load_punct_case_dataset": "builder",
    "load_unlabeled_dataset": "builder",
    "DISFLUENCY_LABELS": "disfluency",
    "parse_meteer": "disfluency",
    "read_switchboard_calls": "disfluency",
    "read_switchboard_disfluency": "disfluency",
    "DisfluencyStatistics": "disfluency_synthesis",
    "disfluency_statistics": "disfluency_synthesis",
    "inject_disfluencies": "disfluency_synthesis",
    "overlapping_documents": "disfluency_synthesis",
    "train_call_statistics": "disfluency_synthesis",
    "SPLITS": "splits",
    "document_split": "splits",
    "CorpusSpec": "mixing",
    "cap_words": "mixing",
    "count_words": "mixing",
    "mixed_case_lexicon": "mixing",
    "weighted_mix": "mixing",
    "window_examples": "mixing",
    "read_che": "formats",
    "read_nemo": "formats",
    "write_che": "formats",
    "write_nemo": "formats",
    "AsrHypothesis": "label_transfer",
    "transfer_labels": "label_transfer",
    "DEFAULT_DATA_DIR": "sources",
    "clean_ted_text": "sources",
    "data_dir": "sources",
    "labeled_chunks": "sources",
    "read_aci_asr_pairs": "sources",
    "read_aci_bench": "sources",
    "read_asr_hypotheses": "sources",
    "read_dailydialog": "sources",
    "read_fortunes": "sources",
    "read_iwslt_cased": "sources",
    "read_masc": "sources",
    "read_mtsamples": "sources",
    "read_nltk": "sources",
    "read_shards": "sources",
    "read_ted_unpunctuated": "sources",
    "read_wikipedia": "sources",
    "read_mts_dialog": "sources",
    "read_swda": "sources",
    "read_ted_talks": "sources",
    "read_text_files": "sources",
}

__all__ = [
    "AsrHypothesis",
    "CorpusSpec",
    "DEFAULT_DATA_DIR",
    "DISFLUENCY_LABELS",
    "DisfluencyStatistics",
    "FEATURES",
    "FILE_SOURCES",
    "LICENCES",
    "NON_COMMERCIAL",
    "SOURCES",
    "SPLITS",
    "cap_words",
    "chunk_at_sentences",
    "clean_ted_text",
    "consecutive_windows",
    "count_words",
    "data_dir",
    "disfluency_statistics",
    "document_split",
    "features_for",
    "inject_disfluencies",
    "labeled_chunks",
    "load_punct_case_dataset",
    "load_unlabeled_dataset",
    "mixed_case_lexicon",
    "overlapping_documents",
    "parse_meteer",
    "read_aci_asr_pairs",
    "read_aci_bench",
    "read_asr_hypotheses",
    "read_che",
    "read_dailydialog",
    "read_fortunes",
    "read_iwslt_cased",
    "read_masc",
    "read_mts_dialog",
    "read_mtsamples",
    "read_nemo",
    "read_nltk",
    "read_shards",
    "read_swda",
    "read_switchboard_calls",
    "read_switchboard_disfluency",
    "read_ted_talks",
    "read_ted_unpunctuated",
    "read_text_files",
    "read_wikipedia",
    "train_call_statistics",
    "transfer_labels",
    "weighted_mix",
    "window_examples",
    "write_che",
    "write_nemo",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
