#!/usr/bin/env python
"""Sample external sentences close to a target domain by 4-gram perplexity (Sunkara et al. 2021).

    python recipes/sample_external.py --in_domain swda --external ted dailydialog masc nltk fortunes \
        --max_words 400000 --output runs/sampled/swda_external.jsonl

An n-gram LM (IRSTLM, modified shift-beta) is estimated on the in-domain train split as ASR would
give it (lowercase, no punctuation); each sentence of the external train splits is scored with
kenlm; the lowest-perplexity sentences are kept, up to ``--max_words``, with their punctuation and
casing. The output is JSON lines of about ``--document_words`` words each (kept sentences in corpus
order, with the ids of the documents they came from), the input of ``finetune.py --train_corpora
text:OUTPUT``; OUTPUT.summary.json says what was kept from where.
Needs ``apt-get install irstlm`` and ``pip install kenlm`` (see hf_punctcase.ngram).
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from hf_punctcase.data import CorpusSpec
from hf_punctcase.labels import LabelScheme
from hf_punctcase.ngram import load_lm, oov_rates, perplexities, select_by_perplexity, split_sentences, train_ngram_lm

logger = logging.getLogger("sample_external")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--in_domain", nargs="+", required=True, help="Corpus specs of the target domain.")
    parser.add_argument("--external", nargs="+", required=True, help="Corpus specs to sample from.")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--max_words", type=int, default=400_000)
    parser.add_argument("--min_sentence_words", type=int, default=5)
    parser.add_argument(
        "--max_oov_rate", type=float, default=0.1,
        help="Skip sentences with more than this share of words unseen in the in-domain text.",
    )
    parser.add_argument("--document_words", type=int, default=1000, help="Words per output pseudo-document.")
    parser.add_argument("--order", type=int, default=4)
    parser.add_argument("--smoothing", default="msb", help="IRSTLM smoothing: msb, wb, sb, kn, mkn.")
    parser.add_argument("--data_dir", default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    scheme = LabelScheme()
    start = time.time()

    def train_sentences(specs):
        for spec in map(CorpusSpec.parse, specs):
            train = spec.load(args.data_dir, max_words=200, scheme=scheme)["train"]
            for sentence in split_sentences(train, train.features["punct"].feature.names):
                yield spec.name, sentence

    lm_path = args.output.with_suffix(".arpa")
    train_ngram_lm((s.lm_text for _, s in train_sentences(args.in_domain)), lm_path, args.order, args.smoothing)
    sources, candidates = zip(*train_sentences(args.external))
    lm = load_lm(lm_path)
    scores = perplexities(lm, (s.lm_text for s in candidates))
    oov = oov_rates(lm, (s.lm_text for s in candidates))
    kept_indices = select_by_perplexity(
        candidates, scores, args.max_words, args.min_sentence_words, oov=oov, max_oov_rate=args.max_oov_rate
    )
    logger.info("kept %d of %d sentences", len(kept_indices), len(candidates))

    punct_names, case_names = scheme.punct_labels, scheme.case_labels
    # Kept sentences, in corpus order, packed into pseudo-documents of about --document_words words:
    # many documents give one sentence only, and one-sentence examples would waste a training batch.
    documents: list[dict] = []
    for index in kept_indices:
        sentence = candidates[index]
        text = scheme.render(
            sentence.words,
            [punct_names[p] if p >= 0 else "O" for p in sentence.punct],
            [case_names[c] if c >= 0 else "LOWER" for c in sentence.case],
        )
        if not documents or documents[-1]["words"] >= args.document_words:
            documents.append({"id": f"sampled/{len(documents)}", "texts": [], "sources": [], "words": 0})
        document = documents[-1]
        document["texts"].append(text)
        if not document["sources"] or document["sources"][-1] != sentence.doc_id:
            document["sources"].append(sentence.doc_id)
        document["words"] += len(sentence.words)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        for document in documents:
            record = {"id": document["id"], "text": " ".join(document["texts"]), "sources": document["sources"]}
            handle.write(json.dumps(record) + "\n")

    by_source: Counter = Counter()
    for i in kept_indices:
        by_source[sources[i]] += len(candidates[i].words)
    summary = {
        "command": "python recipes/sample_external.py " + shlex.join(argv),
        "lm": str(lm_path),
        "candidate_sentences": len(candidates),
        "kept_sentences": len(kept_indices),
        "kept_words": sum(by_source.values()),
        "kept_words_by_source": dict(by_source),
        "candidate_words_by_source": dict(Counter(src for src, s in zip(sources, candidates) for _ in s.words)),
        "median_perplexity_all": statistics.median(scores),
        "median_perplexity_kept": statistics.median(scores[i] for i in kept_indices) if kept_indices else None,
        "sentences_over_oov_rate": sum(rate > args.max_oov_rate for rate in oov),
        "seconds": time.time() - start,
    }
    args.output.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2))
    logger.info("%s", json.dumps(summary, indent=1))
    return args.output


if __name__ == "__main__":
    main()
