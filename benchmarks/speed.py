#!/usr/bin/env python
"""Speed of the punct-case pipeline: words/s on a 10,000-word transcript and the latency of one
40-word paragraph at batch size 1 (medians over repeated runs), for each model, dtype and window context
asked for, all in one run.

    python benchmarks/speed.py                                   # embedded default, 2 threads, dtype auto
    python benchmarks/speed.py --dtypes auto float32 bfloat16   # the three ways to run it on a CPU
    python benchmarks/speed.py --model default PATH --threads 2 --json out.json   # two models side by side
    python benchmarks/speed.py --context-words 50 25 0          # what the windows' overlap costs

Windows: ``--window-words`` words per model input with ``--context-words`` words of context on each
side of a core of window - 2 × context words, so every word is encoded window / core times (2× at the
pipeline's 200 / 50).

Machines shared with other work: a run during which another process took one of the cores (its CPU
seconds below ``--min-cpu-share`` × threads × wall seconds) is left out of the medians, which say how many
runs they hold; the medians of all runs are printed beside them.

Dtypes: ``auto`` is ``pipeline("punct-case")`` with no dtype (bf16 weights on CPUs with AMX, the
checkpoint's dtype elsewhere); ``float32`` is ``dtype=torch.float32``; ``bfloat16`` is
``dtype=torch.bfloat16``. The runs of the dtypes are interleaved
(one run of each in turn), so that a change in the machine's load touches them alike.

The transcript is real TED speech (IWSLT dev2010, lowercased and unpunctuated, as ASR output) from
../shared/data or --data-dir. Targets for the project: ≥ 5,000 words/s, ≤ 15 ms per paragraph.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time

import torch

import hf_punctcase
from hf_punctcase.cli import DTYPE_CHOICES
from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.labels import LabelScheme
from hf_punctcase.pipelines import native_bf16_cpu



def transcript_words(root) -> list[str]:
    (_, text), = read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt"])
    return LabelScheme().parse(text).words


def seconds(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds (this process, all its threads) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", default=["default"],
                        help="checkpoint folders, or default (the embedded model); several run side by side")
    parser.add_argument("--window-words", type=int, default=None, help="default: the pipeline's (200)")
    parser.add_argument("--context-words", type=int, nargs="+", default=[None],
                        help="words of context on each side of a window's core; default: the pipeline's (50)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--dtypes", nargs="+", choices=DTYPE_CHOICES, default=["auto"])
    parser.add_argument("--device", default=None, help="the pipeline's device (cpu, cuda:0, ...); default: CPU")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16, help="windows per forward pass for the long transcript")
    parser.add_argument("--long-words", type=int, default=10_000)
    parser.add_argument("--paragraph-words", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5, help="runs of the long transcript per dtype")
    parser.add_argument("--latency-repeats", type=int, default=50)
    parser.add_argument("--min-cpu-share", type=float, default=0.75,
                        help="a run counts as unshared when its CPU seconds reach this share of threads × wall seconds")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    words = transcript_words(data_dir(args.data_dir))
    if len(words) < args.long_words:
        words = words * (args.long_words // len(words) + 1)
    long_text = " ".join(words[: args.long_words])
    paragraph = " ".join(words[1000 : 1000 + args.paragraph_words])

    restorers = {}  # "model | dtype | context" -> (pipeline, its call's window arguments)
    for model in args.model:
        for dtype in args.dtypes:
            restorer = hf_punctcase.load_pipeline(model, dtype=dtype, device=args.device)
            for context in args.context_words:
                windows = {"window_words": args.window_words, "context_words": context}
                windows = {key: value for key, value in windows.items() if value is not None}
                label = f"{model} | {dtype} | context {context if context is not None else 'default'}"
                restorers[label] = (restorer, windows)
    for restorer, windows in restorers.values():  # warm-up
        restorer(long_text, batch_size=args.batch_size, **windows)
        for _ in range(5):
            restorer(paragraph, batch_size=1, **windows)
    load_before = os.getloadavg()
    long_runs = {name: [] for name in restorers}  # (wall, CPU) seconds per run
    short_runs = {name: [] for name in restorers}
    for _ in range(args.repeats):
        for name, (restorer, windows) in restorers.items():
            long_runs[name].append(seconds(lambda: restorer(long_text, batch_size=args.batch_size, **windows)))
    for _ in range(args.latency_repeats):
        for name, (restorer, windows) in restorers.items():
            short_runs[name].append(seconds(lambda: restorer(paragraph, batch_size=1, **windows)))

    def unshared(runs: list[tuple[float, float]]) -> list[float]:
        """Wall seconds of the runs during which this process had its threads' cores: CPU seconds of
        at least ``--min-cpu-share`` × threads × wall seconds. Where another process took a core, the
        threads wait on each other at every parallel step and a run takes several times as long."""
        threads = torch.get_num_threads()
        return [wall for wall, cpu in runs if cpu >= args.min_cpu_share * threads * wall] or [math.nan]

    figures = {
        "models": args.model,
        "threads": torch.get_num_threads(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, AMX bf16: {native_bf16_cpu()}",
        "torch": torch.__version__,
        "long_words": args.long_words,
        "paragraph_words": args.paragraph_words,
        # 1-minute load averages before and after the timed runs: above the thread count, other
        # processes shared the cores and the wall-clock figures are lower bounds (CPU seconds are not).
        "load_average_before_after": [load_before[0], os.getloadavg()[0]],
        "runs": {},
    }
    for name, (restorer, _) in restorers.items():
        long_all = [wall for wall, _ in long_runs[name]]
        short_all = [wall for wall, _ in short_runs[name]]
        long_kept, short_kept = unshared(long_runs[name]), unshared(short_runs[name])
        figures["runs"][name] = {
            "weights": str(restorer.model.dtype).removeprefix("torch."),
            "long_runs_wall_cpu_seconds": long_runs[name],
            "words_per_second": args.long_words / statistics.median(long_kept),
            "long_runs_kept": len([t for t in long_kept if t == t]),
            "words_per_second_all_runs": args.long_words / statistics.median(long_all),
            "paragraph_median_ms": 1000 * statistics.median(short_kept),
            "paragraph_runs_kept": len([t for t in short_kept if t == t]),
            "paragraph_median_ms_all_runs": 1000 * statistics.median(short_all),
            "paragraph_p90_ms_all_runs": 1000 * statistics.quantiles(short_all, n=10)[-1],
        }
    print(json.dumps(figures, indent=2))
    print(
        f"\n| model | dtype | context | weights | words/s ({args.long_words:,}-word transcript, batch {args.batch_size}, "
        f"median of the unshared runs) | {args.paragraph_words}-word paragraph, batch 1 (median of the unshared runs) "
        "| the same, medians of all runs |\n|---|---|---|---|---|---|---|"
    )
    for name, row in figures["runs"].items():
        print(
            f"| {name} | {row['weights']} "
            f"| {row['words_per_second']:,.0f} ({row['long_runs_kept']}/{args.repeats} runs) "
            f"| {row['paragraph_median_ms']:.1f} ms ({row['paragraph_runs_kept']}/{args.latency_repeats}) "
            f"| {row['words_per_second_all_runs']:,.0f} words/s, {row['paragraph_median_ms_all_runs']:.1f} ms |"
        )
    print(f"\n1-minute load average before / after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
