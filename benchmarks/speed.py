#!/usr/bin/env python
"""Speed of the punct-case pipeline: words/s on a 10,000-word transcript and the latency of one
40-word paragraph at batch size 1 (medians over repeated runs).

    python benchmarks/speed.py                      # embedded default model, 2 threads
    python benchmarks/speed.py --model PATH --threads 2 --json out.json

The transcript is real TED speech (IWSLT dev2010, lowercased and unpunctuated, as ASR output) from
../shared/data or --data-dir. Targets for the project: ≥ 5,000 words/s, ≤ 15 ms per paragraph.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

import hf_punctcase
from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.labels import LabelScheme


def transcript_words(root) -> list[str]:
    (_, text), = read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt"])
    return LabelScheme().parse(text).words


def timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="checkpoint folder (default: the embedded model)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16, help="windows per forward pass for the long transcript")
    parser.add_argument("--long-words", type=int, default=10_000)
    parser.add_argument("--paragraph-words", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5, help="runs of the long transcript")
    parser.add_argument("--latency-repeats", type=int, default=50)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    restorer = hf_punctcase.load_pipeline(args.model)
    words = transcript_words(data_dir(args.data_dir))
    if len(words) < args.long_words:
        words = (words * (args.long_words // len(words) + 1))
    long_text = " ".join(words[: args.long_words])
    paragraph = " ".join(words[1000 : 1000 + args.paragraph_words])

    restorer(long_text, batch_size=args.batch_size)  # warm-up
    long_times = timed(lambda: restorer(long_text, batch_size=args.batch_size), args.repeats)
    for _ in range(5):
        restorer(paragraph, batch_size=1)
    short_times = timed(lambda: restorer(paragraph, batch_size=1), args.latency_repeats)

    figures = {
        "model": args.model or "default",
        "threads": args.threads,
        "machine": f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads",
        "long_words": args.long_words,
        "long_median_seconds": statistics.median(long_times),
        "words_per_second": args.long_words / statistics.median(long_times),
        "paragraph_words": args.paragraph_words,
        "paragraph_median_ms": 1000 * statistics.median(short_times),
        "paragraph_p90_ms": 1000 * statistics.quantiles(short_times, n=10)[-1],
    }
    print(json.dumps(figures, indent=2))
    print(
        f"\n| words/s ({args.long_words:,}-word transcript, batch {args.batch_size}) | "
        f"{args.paragraph_words}-word paragraph, batch 1 (median) |\n|---|---|\n"
        f"| {figures['words_per_second']:,.0f} | {figures['paragraph_median_ms']:.1f} ms |"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
