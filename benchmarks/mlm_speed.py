#!/usr/bin/env python
"""Masked-LM adaptation step time on CPU: the model's own forward (every position scored against the
vocabulary) vs ``hf_punctcase.training.mlm.masked_positions_loss`` (masked positions only), as
recipes/mlm_adapt.py trains (bf16 autocast, AdamW).

    python benchmarks/mlm_speed.py --threads 2 --steps 8 [--encoder minilm|mpnet|DIR]

One step = forward, backward and update on 32 blocks of 128 tokens of real TED text (IWSLT dev2010,
punctuated, as the MLM recipe renders it) masked by the punctuation-masking collator. Prints the
median seconds per step (the first 2 are warm-up) and tokens/s for each loss.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics

import torch
from transformers import AutoTokenizer

from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.encoders import resolve_encoder
from hf_punctcase.training.step_timing import training_step_times
from hf_punctcase.training.mlm import (
    DataCollatorForPunctuationMasking,
    masked_lm_from_encoder,
    masked_positions_loss,
)


def masked_batch(tokenizer, batch_size: int, block_size: int, data: str | None) -> dict[str, torch.Tensor]:
    (_, text), = read_iwslt_cased([data_dir(data) / "iwslt" / "dev2010_cased.txt"])
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    inner = block_size - 2
    if len(ids) < batch_size * inner:
        raise SystemExit(f"dev2010 gives {len(ids)} tokens, fewer than {batch_size} blocks of {inner}")
    blocks = [
        {"input_ids": [tokenizer.cls_token_id, *ids[i * inner : (i + 1) * inner], tokenizer.sep_token_id]}
        for i in range(batch_size)
    ]
    return DataCollatorForPunctuationMasking(tokenizer, seed=0)(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    encoder = resolve_encoder(args.encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    batch = masked_batch(tokenizer, args.batch_size, args.block_size, args.data_dir)
    tokens = args.batch_size * args.block_size
    results = {"machine": f"{platform.processor() or platform.machine()}, {args.threads} torch threads", "encoder": str(encoder)}
    for name, masked_only in (("full_forward", False), ("masked_positions", True)):
        torch.manual_seed(0)
        model = masked_lm_from_encoder(encoder).train()
        times = training_step_times(model, batch, args.steps, bf16=True, loss_fn=masked_positions_loss if masked_only else None)
        median = statistics.median(times)
        results[name] = {"median_seconds_per_step": median, "tokens_per_second": tokens / median}
        print(f"{name}: {median:.2f} s/step (median of {len(times)}), {tokens / median:.0f} tokens/s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
