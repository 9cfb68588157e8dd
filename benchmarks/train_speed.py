#!/usr/bin/env python
"""Training step time of the joint model on CPU: fp32 vs bf16 autocast (what ``--bf16`` gives the Trainer).

    python benchmarks/train_speed.py --threads 2 --steps 12 [--encoder minilm|mpnet|DIR] [--layers 6] [--precisions fp32]
    python benchmarks/train_speed.py --cnn-bilstm hf_punctcase/on_device_model --batch-size 256 --window-words 200 \
        --steps 5 --precisions bf16      # the on-device model's step, as its long runs train it

One step = forward, backward and AdamW update on a batch of 16 windows of 150 words of real TED
speech (IWSLT dev2010, lowercased, unpunctuated; read again from its start where the batch needs more),
as recipes/finetune.py trains. ``--cnn-bilstm DIR`` times the CNN-BiLSTM that the folder's config and
tokenizer describe, with fresh weights (a step's time does not depend on their values). Prints the
median seconds per step (the first 2 steps are warm-up and not counted) and words/s for each precision.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics

import torch
from transformers import AutoTokenizer

import hf_punctcase
from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification
from hf_punctcase.training.step_timing import training_step_times
from hf_punctcase.atomic_files import atomic_output
from hf_punctcase.encoders import resolve_encoder
from hf_punctcase.labels import LabelScheme
from hf_punctcase.tokenization import tokenize_and_align_labels


def batch_of(tokenizer, batch_size: int, window_words: int, data: str | None, max_length: int = 256):
    scheme = LabelScheme()
    (_, text), = read_iwslt_cased([data_dir(data) / "iwslt" / "dev2010_cased.txt"])
    labeled = scheme.parse(text)
    words, punct, case = [], [], []
    total = len(labeled.words)
    for i in range(batch_size):
        window = [(i * window_words + j) % total for j in range(window_words)]
        words.append([labeled.words[k] for k in window])
        punct.append([scheme.punct2id[labeled.punct[k]] for k in window])
        case.append([scheme.case2id[labeled.case[k]] for k in window])
    encoded = tokenize_and_align_labels(tokenizer, words, punct, case, max_length=max_length)
    features = [{k: encoded[k][i] for k in encoded} for i in range(batch_size)]
    return DataCollatorForJointTokenClassification(tokenizer)(features)


def new_model(encoder, tokenizer, args) -> torch.nn.Module:
    if not args.cnn_bilstm:
        return hf_punctcase.JointTokenClassificationModel.from_encoder(encoder, num_encoder_layers=args.layers)
    config = hf_punctcase.CnnBiLstmConfig.from_pretrained(args.cnn_bilstm)
    model = hf_punctcase.CnnBiLstmForJointTokenClassification(config)
    if model.by_word:
        model.mark_word_initial_pieces(tokenizer)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default=None)
    parser.add_argument("--layers", type=int, default=None)
    parser.add_argument("--cnn-bilstm", default=None, metavar="DIR",
                        help="time the CNN-BiLSTM of this folder's config and tokenizer instead of a transformer")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--window-words", type=int, default=150)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--precisions", nargs="+", choices=("fp32", "bf16"), default=["fp32", "bf16"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    encoder = args.cnn_bilstm or resolve_encoder(args.encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    # The CNN-BiLSTM recipes allow 320 subwords for 200 words; the transformer's windows fit in 256.
    batch = batch_of(tokenizer, args.batch_size, args.window_words, args.data_dir, 320 if args.cnn_bilstm else 256)
    results = {"machine": f"{platform.processor() or platform.machine()}, {args.threads} torch threads", "encoder": str(encoder)}
    for precision in args.precisions:
        torch.manual_seed(0)
        model = new_model(encoder, tokenizer, args).train()
        times = training_step_times(model, batch, args.steps, precision == "bf16")
        median = statistics.median(times)
        results[precision] = {"median_seconds_per_step": median, "words_per_second": args.batch_size * args.window_words / median}
        print(f"{precision}: {median:.2f} s/step (median of {len(times)}), {results[precision]['words_per_second']:.0f} words/s")
    if args.json:
        with atomic_output(args.json) as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
