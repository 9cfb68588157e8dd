#!/usr/bin/env python
"""Shrink a pretrained encoder to a parameter budget: its first k layers and the subwords the training
corpora use (hf_punctcase.training.shrinking).

    python recipes/shrink_encoder.py --encoder mpnet --num_layers 3 --vocab_size 4300 --max_parameters 25000000 \
        --corpora ted swda mts_dialog aci_bench mtsamples dailydialog --max_corpus_words 4000000 \
        --output_dir runs/encoders/mpnet3-v4300

Subword frequencies are counted over the train splits' words as the model sees them (lowercased, no
punctuation); each corpus contributes at most ``--max_corpus_words`` words. The output directory is an
encoder for ``finetune.py --encoder``; OUTPUT/shrink_summary.json records the command, the token coverage
of the kept vocabulary and the parameter count of the joint model built on it; the recipe exits with an
error when that count passes ``--max_parameters``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path

from hf_punctcase.training import shrink_for_corpora

logger = logging.getLogger("shrink_encoder")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default="mpnet", help="Encoder directory or id, or minilm / mpnet.")
    parser.add_argument("--num_layers", type=int, default=None, help="Keep the first k layers (default: all).")
    parser.add_argument("--vocab_size", type=int, required=True, help="Subwords to keep, special tokens included.")
    parser.add_argument("--corpora", nargs="+", required=True, help="Corpus specs whose train splits are counted.")
    parser.add_argument("--max_corpus_words", type=int, default=4_000_000)
    parser.add_argument("--max_parameters", type=int, default=None, help="Fail if the joint model would be larger.")
    parser.add_argument("--output_dir", type=Path, required=True)
    parser.add_argument("--data_dir", default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    shrunk = shrink_for_corpora(
        args.encoder, args.output_dir, args.vocab_size, args.corpora, num_layers=args.num_layers,
        max_corpus_words=args.max_corpus_words, data_dir=args.data_dir,
    )
    summary = {"command": "python recipes/shrink_encoder.py " + shlex.join(argv), **shrunk}
    (args.output_dir / "shrink_summary.json").write_text(json.dumps(summary, indent=2))
    logger.info("%s", json.dumps(summary, indent=1))
    joint_parameters = summary["joint_model_parameters"]
    if args.max_parameters is not None and joint_parameters > args.max_parameters:
        raise SystemExit(
            f"the joint model has {joint_parameters:,} parameters, over --max_parameters {args.max_parameters:,} "
            f"(the encoder written to {args.output_dir} is over the budget)"
        )
    return args.output_dir


if __name__ == "__main__":
    main()
