"""External text close to a target domain, for stage 1 of two-stage finetuning (Sunkara et al. 2021).

An n-gram LM (IRSTLM) is estimated on the in-domain train split as ASR would give it (lowercase, no
punctuation); each sentence of the external train splits is scored with kenlm; the lowest-perplexity
sentences are kept, up to ``max_words``, with their punctuation and casing, and written as JSON lines of
pseudo-documents: the input of a ``text:FILE`` training corpus. Needs ``apt-get install irstlm`` and
``pip install kenlm`` (see hf_punctcase.training.ngram).
"""

from __future__ import annotations

import json
import logging
import os
import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..data import CorpusSpec
from ..labels import LabelScheme
from .ngram import Sentence, load_lm, oov_rates, perplexities, select_by_perplexity, split_sentences, train_ngram_lm

logger = logging.getLogger(__name__)


def train_sentences(
    specs: Sequence[str], data_dir: str | os.PathLike | None, scheme: LabelScheme
) -> Iterator[tuple[str, Sentence]]:
    """(corpus name, sentence) for every sentence of the train splits of some corpus specs."""
    for spec in map(CorpusSpec.parse, specs):
        train = spec.load(data_dir, max_words=200, scheme=scheme, splits=["train"])["train"]
        for sentence in split_sentences(train, train.features["punct"].feature.names):
            yield spec.name, sentence


def pack_documents(sentences: Sequence[Sentence], scheme: LabelScheme, document_words: int) -> list[dict]:
    """Sentences rendered back to punctuated text, in order, packed into pseudo-documents of about
    ``document_words`` words (``id``, ``text``, ``sources``: the ids of the documents they came from).

    Many source documents give one sentence only, and one-sentence training examples would waste a batch."""
    punct_names, case_names = scheme.punct_labels, scheme.case_labels
    documents: list[dict] = []
    for sentence in sentences:
        text = scheme.render(
            sentence.words,
            [punct_names[p] if p >= 0 else "O" for p in sentence.punct],
            [case_names[c] if c >= 0 else "LOWER" for c in sentence.case],
        )
        if not documents or documents[-1]["words"] >= document_words:
            documents.append({"id": f"sampled/{len(documents)}", "texts": [], "sources": [], "words": 0})
        document = documents[-1]
        document["texts"].append(text)
        if not document["sources"] or document["sources"][-1] != sentence.doc_id:
            document["sources"].append(sentence.doc_id)
        document["words"] += len(sentence.words)
    return [{"id": d["id"], "text": " ".join(d["texts"]), "sources": d["sources"]} for d in documents]


def sample_external(
    in_domain: Sequence[str],
    external: Sequence[str],
    output: str | os.PathLike,
    max_words: int = 400_000,
    min_sentence_words: int = 5,
    max_oov_rate: float = 0.1,
    document_words: int = 1000,
    order: int = 4,
    smoothing: str = "msb",
    data_dir: str | os.PathLike | None = None,
) -> dict:
    """Write the external sentences most like ``in_domain`` (corpus specs) to ``output`` (.jsonl; the LM
    goes next to it, as OUTPUT.arpa); returns what was kept from where.

    A sentence of fewer than ``min_sentence_words`` words, or with more than ``max_oov_rate`` of its
    words unseen in the in-domain text, is not kept; ``order`` and ``smoothing`` (msb, wb, sb, kn, mkn)
    are the LM's."""
    output = Path(output)
    scheme = LabelScheme()
    lm_path = output.with_suffix(".arpa")
    train_ngram_lm((s.lm_text for _, s in train_sentences(in_domain, data_dir, scheme)), lm_path, order, smoothing)
    sources, candidates = zip(*train_sentences(external, data_dir, scheme))
    lm = load_lm(lm_path)
    scores = perplexities(lm, (s.lm_text for s in candidates))
    oov = oov_rates(lm, (s.lm_text for s in candidates))
    kept = select_by_perplexity(candidates, scores, max_words, min_sentence_words, oov=oov, max_oov_rate=max_oov_rate)
    logger.info("kept %d of %d sentences", len(kept), len(candidates))

    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", encoding="utf-8") as handle:
        for record in pack_documents([candidates[i] for i in kept], scheme, document_words):
            handle.write(json.dumps(record) + "\n")

    by_source: Counter = Counter()
    for i in kept:
        by_source[sources[i]] += len(candidates[i].words)
    return {
        "lm": str(lm_path),
        "candidate_sentences": len(candidates),
        "kept_sentences": len(kept),
        "kept_words": sum(by_source.values()),
        "kept_words_by_source": dict(by_source),
        "candidate_words_by_source": dict(Counter(src for src, s in zip(sources, candidates) for _ in s.words)),
        "median_perplexity_all": statistics.median(scores),
        "median_perplexity_kept": statistics.median(scores[i] for i in kept) if kept else None,
        "sentences_over_oov_rate": sum(rate > max_oov_rate for rate in oov),
    }
