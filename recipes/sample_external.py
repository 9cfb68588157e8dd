#!/usr/bin/env python
"""Sample external sentences close to a target domain by 4-gram perplexity (Sunkara et al. 2021).

    python recipes/sample_external.py --in_domain swda --external ted dailydialog masc nltk fortunes \
        --max_words 400000 --output runs/sampled/swda_external.jsonl

An n-gram LM (IRSTLM, modified shift-beta) is estimated on the in-domain train split as ASR would
give it (lowercase, no punctuation); each sentence of the external train splits is scored with
kenlm; the lowest-perplexity sentences are kept, up to ``--max_words``, with their punctuation and
casing. The output is JSON lines of about ``--document_words`` words each (kept sentences in corpus
order, with the ids of the documents they came from), the input of ``finetune.py --train_corpora
text:OUTPUT``; OUTPUT.summary.json says what was kept from where. See hf_punctcase.training.sampling.
Needs ``apt-get install irstlm`` and ``pip install kenlm`` (see hf_punctcase.training.ngram).
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path

from hf_punctcase.training import sample_external

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
    start = time.time()
    kept = sample_external(
        args.in_domain, args.external, args.output, max_words=args.max_words,
        min_sentence_words=args.min_sentence_words, max_oov_rate=args.max_oov_rate,
        document_words=args.document_words, order=args.order, smoothing=args.smoothing, data_dir=args.data_dir,
    )
    summary = {"command": "python recipes/sample_external.py " + shlex.join(argv), **kept, "seconds": time.time() - start}
    args.output.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2))
    logger.info("%s", json.dumps(summary, indent=1))
    return args.output


if __name__ == "__main__":
    main()
