#!/usr/bin/env python
"""Training step time of the joint model on CPU: fp32 vs bf16 autocast (what ``--bf16`` gives the Trainer).

    python benchmarks/train_speed.py --threads 2 --steps 12 [--encoder minilm|mpnet|DIR] [--layers 6] [--precisions fp32]

One step = forward, backward and AdamW update on a batch of 16 windows of 150 words of real TED
speech (IWSLT dev2010, lowercased, unpunctuated), as recipes/finetune.py trains. Prints the median
seconds per step (the first 2 steps are warm-up and not counted) and words/s for each precision.
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


def batch_of(tokenizer, batch_size: int, window_words: int, data: str | None):
    scheme = LabelScheme()
    (_, text), = read_iwslt_cased([data_dir(data) / "iwslt" / "dev2010_cased.txt"])
    labeled = scheme.parse(text)
    words, punct, case = [], [], []
    for i in range(batch_size):
        s = slice(i * window_words, (i + 1) * window_words)
        words.append(labeled.words[s])
        punct.append([scheme.punct2id[p] for p in labeled.punct[s]])
        case.append([scheme.case2id[c] for c in labeled.case[s]])
    encoded = tokenize_and_align_labels(tokenizer, words, punct, case, max_length=256)
    features = [{k: encoded[k][i] for k in encoded} for i in range(batch_size)]
    return DataCollatorForJointTokenClassification(tokenizer)(features)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default=None)
    parser.add_argument("--layers", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--window-words", type=int, default=150)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--precisions", nargs="+", choices=("fp32", "bf16"), default=["fp32", "bf16"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    encoder = resolve_encoder(args.encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    batch = batch_of(tokenizer, args.batch_size, args.window_words, args.data_dir)
    results = {"machine": f"{platform.processor() or platform.machine()}, {args.threads} torch threads", "encoder": str(encoder)}
    for precision in args.precisions:
        torch.manual_seed(0)
        model = hf_punctcase.JointTokenClassificationModel.from_encoder(encoder, num_encoder_layers=args.layers).train()
        times = training_step_times(model, batch, args.steps, precision == "bf16")
        median = statistics.median(times)
        results[precision] = {"median_seconds_per_step": median, "words_per_second": args.batch_size * args.window_words / median}
        print(f"{precision}: {median:.2f} s/step (median of {len(times)}), {results[precision]['words_per_second']:.0f} words/s")
    if args.json:
        with atomic_output(args.json) as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
