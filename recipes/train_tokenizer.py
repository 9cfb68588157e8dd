#!/usr/bin/env python
"""Train the CNN-BiLSTM family's subword tokenizer (a 5,000-piece Unigram vocabulary) on the corpora.

    python recipes/train_tokenizer.py --output_dir tokenizers/cnn_bilstm_5k --train_corpora ted swda mts_dialog
    python recipes/train_tokenizer.py --output_dir tokenizers/mine --train_corpora text:my.jsonl --vocab_size 3000
    python recipes/train_tokenizer.py --output_dir tokenizers/wiki --train_corpora wikipedia_2015 --character_coverage 0.9995

The corpora are read as the training recipes read them (``--data_dir``, by default ../shared/data;
``text:FILE`` for your own .txt or .jsonl), their train split only, punctuation stripped and
lowercased as the model sees words (hf_punctcase.models.cnn_bilstm.train_tokenizer_on_corpora).
OUTPUT gets tokenizer.json and tokenizer_config.json, which ``AutoTokenizer.from_pretrained`` loads and
``recipes/finetune.py --model_family cnn_bilstm --tokenizer_name_or_path OUTPUT`` trains a model on, and
tokenizer_training.json, the corpora it was trained on and their licences, which the card of a model
made on it lists; the folder is written whole or not at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hf_punctcase.atomic_files import atomic_directory
from hf_punctcase.cards.lineage import write_tokenizer_record
from hf_punctcase.models.cnn_bilstm import DEFAULT_VOCAB_SIZE, train_tokenizer_on_corpora


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description="Train the CNN-BiLSTM family's subword tokenizer.")
    parser.add_argument("--output_dir", required=True, help="the folder to write (must not exist)")
    parser.add_argument(
        "--train_corpora", nargs="+", default=["ted", "swda", "mts_dialog"],
        help="corpus specs NAME[:FILES] (default: %(default)s)",
    )
    parser.add_argument("--data_dir", help="corpus folder (default ../shared/data)")
    parser.add_argument("--vocab_size", type=int, default=DEFAULT_VOCAB_SIZE, help="pieces (default: %(default)s)")
    parser.add_argument("--max_words", type=int, help="read at most this many words of each corpus")
    parser.add_argument(
        "--character_coverage", type=float, default=1.0,
        help="train on the words whose characters make up this share of the text (default: %(default)s, every "
        "character; 0.9995 for corpora with many scripts or symbols, such as Wikipedia)",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    tokenizer, words = train_tokenizer_on_corpora(
        args.train_corpora, args.data_dir, args.vocab_size, max_words=args.max_words, character_coverage=args.character_coverage
    )
    output = Path(args.output_dir)
    with atomic_directory(output) as staging:
        tokenizer.save_pretrained(staging)
        # The corpora it was trained on, for the cards of the models made on it (hf_punctcase.cards.lineage).
        write_tokenizer_record(
            staging, words, vocab_size=args.vocab_size, max_words=args.max_words, character_coverage=args.character_coverage,
        )
    read = ", ".join(f"{name} {count:,}" for name, count in words.items())
    print(f"wrote {output}: {len(tokenizer)} pieces, trained on {sum(words.values()):,} words ({read})")
    return output


if __name__ == "__main__":
    main()
