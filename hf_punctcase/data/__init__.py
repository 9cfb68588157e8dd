"""Corpora → labelled word sequences → `datasets` objects.

    from hf_punctcase.data import load_punct_case_dataset
    ds = load_punct_case_dataset("ted", data_dir_path="../shared/data", max_words=200)   # DatasetDict
    mine = load_punct_case_dataset("text", data_files=["mine.jsonl"], file_split="train")  # every document trains
"""

from .builder import (
    FEATURES,
    FILE_SOURCES,
    LICENCES,
    NON_COMMERCIAL,
    SOURCES,
    chunk_at_sentences,
    consecutive_windows,
    features_for,
    load_punct_case_dataset,
    load_unlabeled_dataset,
)
from .disfluency import DISFLUENCY_LABELS, parse_meteer, read_switchboard_calls, read_switchboard_disfluency
from .disfluency_synthesis import (
    DisfluencyStatistics,
    disfluency_statistics,
    inject_disfluencies,
    overlapping_documents,
    train_call_statistics,
)
from .splits import SPLITS, document_split
from .mixing import CorpusSpec, cap_words, count_words, mixed_case_lexicon, weighted_mix, window_examples
from .formats import read_che, read_nemo, write_che, write_nemo
from .label_transfer import AsrHypothesis, transfer_labels
from .sources import (
    DEFAULT_DATA_DIR,
    clean_ted_text,
    data_dir,
    labeled_chunks,
    read_aci_asr_pairs,
    read_aci_bench,
    read_asr_hypotheses,
    read_dailydialog,
    read_fortunes,
    read_iwslt_cased,
    read_masc,
    read_mtsamples,
    read_nltk,
    read_shards,
    read_ted_unpunctuated,
    read_wikipedia,
    read_mts_dialog,
    read_swda,
    read_ted_talks,
    read_text_files,
)

__all__ = [
    "AsrHypothesis",
    "CorpusSpec",
    "LICENCES",
    "NON_COMMERCIAL",
    "cap_words",
    "count_words",
    "mixed_case_lexicon",
    "weighted_mix",
    "window_examples",
    "DISFLUENCY_LABELS",
    "DisfluencyStatistics",
    "disfluency_statistics",
    "inject_disfluencies",
    "load_unlabeled_dataset",
    "overlapping_documents",
    "parse_meteer",
    "read_aci_asr_pairs",
    "read_dailydialog",
    "read_fortunes",
    "read_masc",
    "read_mtsamples",
    "read_nltk",
    "read_shards",
    "read_switchboard_calls",
    "read_switchboard_disfluency",
    "read_ted_unpunctuated",
    "read_wikipedia",
    "train_call_statistics",
    "DEFAULT_DATA_DIR",
    "FEATURES",
    "FILE_SOURCES",
    "SOURCES",
    "SPLITS",
    "chunk_at_sentences",
    "consecutive_windows",
    "clean_ted_text",
    "data_dir",
    "document_split",
    "features_for",
    "labeled_chunks",
    "load_punct_case_dataset",
    "read_aci_bench",
    "read_asr_hypotheses",
    "read_che",
    "read_iwslt_cased",
    "read_mts_dialog",
    "read_nemo",
    "read_swda",
    "read_ted_talks",
    "read_text_files",
    "transfer_labels",
    "write_che",
    "write_nemo",
]
