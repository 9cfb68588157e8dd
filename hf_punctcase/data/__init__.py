"""Corpora → labelled word sequences → `datasets` objects.

    from hf_punctcase.data import load_punct_case_dataset
    ds = load_punct_case_dataset("ted", data_dir="../shared/data", max_words=200)   # DatasetDict
"""

from .builder import FEATURES, FILE_SOURCES, LICENCES, NON_COMMERCIAL, SOURCES, chunk_at_sentences, document_split, load_punct_case_dataset, load_unlabeled_dataset
from .disfluency import DISFLUENCY_LABELS, parse_meteer, read_switchboard_disfluency
from .mixing import CorpusSpec, cap_words, corpus_texts, count_words, weighted_mix, window_examples
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
    "corpus_texts",
    "count_words",
    "weighted_mix",
    "window_examples",
    "DISFLUENCY_LABELS",
    "load_unlabeled_dataset",
    "parse_meteer",
    "read_aci_asr_pairs",
    "read_dailydialog",
    "read_fortunes",
    "read_masc",
    "read_mtsamples",
    "read_nltk",
    "read_switchboard_disfluency",
    "read_ted_unpunctuated",
    "read_wikipedia",
    "DEFAULT_DATA_DIR",
    "FEATURES",
    "FILE_SOURCES",
    "SOURCES",
    "chunk_at_sentences",
    "clean_ted_text",
    "data_dir",
    "document_split",
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
