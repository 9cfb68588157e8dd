#!/usr/bin/env python
"""Streaming restoration (hf_punctcase.StreamingRestorer): time per push, delay in words, and what the
small windows cost in F1 against the pipeline's 200/50 windows.

    python benchmarks/streaming.py                             # embedded default, default dtype, 2 threads
    python benchmarks/streaming.py --sizes 40:10 40:10:5 30:10 --repeats 3 --json streaming.json

Latency: one hour of speech (--words, 9,000 words of TED dev2010+tst2012, lowercased and unpunctuated
as ASR gives them, about 150 words a minute) is pushed --chunk (3) words at a time into a restorer of
the first --sizes entry. Per push: wall-clock milliseconds (median, p90, p99, max; the pushes that ran
the model apart), and for every word the words pushed after it before it was emitted (the push that
emits it included). The first stream is run right after loading (cold: the first window of each new
length runs slower); then --repeats warm streams. Machines shared with other work: a warm stream
during which this process had less than --min-cpu-share × threads CPU seconds per wall second is left
out of the medians (said so; every stream is in the JSON).

Accuracy: TED dev2010+tst2012 (hf_punctcase.evaluation.DEV_SETS), each document lowercased and
unpunctuated, restored by the pipeline at its default 200/50 and streamed --chunk words at a time at
each of --sizes (window:context[:right context]); punctuation and casing overall F1
(hf_punctcase.evaluation: restore_references, score_labels) and the change against 200/50 with a 95%
paired bootstrap interval (blocks of --block-words words, 1,000 draws).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np
import torch
import transformers

import hf_punctcase
from hf_punctcase import StreamingRestorer
from hf_punctcase.cli import DTYPE_CHOICES
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import DEV_SETS, restore_references, score_labels


def parse_sizes(value: str) -> tuple[int, int, int | None]:
    parts = [int(part) for part in value.split(":")]
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"sizes are window:context[:right context], got {value!r}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def label(sizes: tuple[int, int, int | None]) -> str:
    window, context, right = sizes
    return f"{window}/{context}" + ("" if right is None else f", right context {right}")


class StreamedPipeline:
    """What hf_punctcase.evaluation calls a restorer (texts in, one ``{"words": ...}`` per text; a
    ``scheme``), each text streamed ``chunk`` words at a time."""

    def __init__(self, restorer: StreamingRestorer, chunk: int):
        self.restorer, self.chunk, self.scheme = restorer, chunk, restorer.pipe.scheme

    def __call__(self, texts, batch_size=None):
        results = []
        for text in texts:
            words, entries = text.split(), []
            for i in range(0, len(words), self.chunk):
                entries += self.restorer.push(words[i : i + self.chunk])
            results.append({"words": entries + self.restorer.flush()})
        return results


def time_stream(restorer: StreamingRestorer, words: list[str], chunk: int) -> dict:
    """Push ``words`` ``chunk`` at a time; per-push milliseconds and per-word delay in words."""
    push_ms, model_push_ms, delays = [], [], []
    received = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(words), chunk):
        calls_before = restorer.pipe.backend.calls
        start = time.perf_counter()
        emitted = restorer.push(words[i : i + chunk])
        elapsed = (time.perf_counter() - start) * 1000
        received += len(words[i : i + chunk])
        push_ms.append(elapsed)
        if restorer.pipe.backend.calls != calls_before:
            model_push_ms.append(elapsed)
        first = len(delays)
        delays += [received - 1 - index for index in range(first, first + len(emitted))]
    start = time.perf_counter()
    rest = restorer.flush()
    flush_ms = (time.perf_counter() - start) * 1000
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(delays) + len(rest) == len(words)
    return {
        "pushes": len(push_ms),
        "push_ms": summary(push_ms),
        "model_pushes": len(model_push_ms),
        "model_push_ms": summary(model_push_ms),
        "flush_ms": flush_ms,
        "flushed_words": len(rest),
        "delay_words": {"mean": statistics.fmean(delays), "median": statistics.median(delays), "max": max(delays)},
        "seconds": wall,
        "cpu_share": cpu / wall,
    }


class CountingBackend:
    """The pipeline's backend, counting its calls (one per window, or per piece of an over-long one)."""

    def __init__(self, backend):
        self.backend, self.calls = backend, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.backend(*args, **kwargs)


def summary(values: list[float]) -> dict:
    ordered = np.sort(values)
    return {
        "median": float(np.median(ordered)),
        "mean": float(np.mean(ordered)),
        "p90": float(np.percentile(ordered, 90)),
        "p99": float(np.percentile(ordered, 99)),
        "max": float(ordered[-1]),
    }


def micro_f1_counts(true: np.ndarray, pred: np.ndarray, negative: str) -> np.ndarray:
    """Per word: (true positive, false positive, false negative) of the micro average over every class
    but ``negative``, as the punct_case metric's "overall" counts them."""
    tp = (true == pred) & (true != negative)
    fp = (pred != negative) & (pred != true)
    fn = (true != negative) & (pred != true)
    return np.stack([tp, fp, fn], axis=1).astype(np.int64)


def f1(counts: np.ndarray) -> float:
    tp, fp, fn = counts
    return 2 * tp / max(2 * tp + fp + fn, 1)


def paired_bootstrap(base: np.ndarray, other: np.ndarray, block: int, draws: int = 1000, seed: int = 0):
    """95% interval of F1(other) − F1(base) resampling blocks of ``block`` words (both alike)."""
    blocks = -(-len(base) // block)
    sums = lambda counts: np.add.reduceat(counts, np.arange(0, len(counts), block), axis=0)  # noqa: E731
    base_blocks, other_blocks = sums(base), sums(other)
    rng = np.random.default_rng(seed)
    deltas = []
    for _ in range(draws):
        pick = rng.integers(0, blocks, blocks)
        deltas.append(f1(other_blocks[pick].sum(0)) - f1(base_blocks[pick].sum(0)))
    return float(np.percentile(deltas, 2.5)), float(np.percentile(deltas, 97.5))


def labels_of(references, predictions, key: str, output: str):
    true, pred = [], []
    for ref, predicted in zip(references, predictions):
        for gold, word in zip(getattr(ref, key), predicted):
            if gold is not None:
                true.append(gold)
                pred.append(word[output])
    return np.array(true), np.array(pred)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="checkpoint folder (default: the embedded model)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--dtype", default="auto", choices=DTYPE_CHOICES)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", nargs="+", type=parse_sizes, default=[(40, 10, None)],
                        help="window:context[:right context] (default 40:10, the restorer's defaults)")
    parser.add_argument("--words", type=int, default=9000, help="words of the timed stream (one hour of speech)")
    parser.add_argument("--chunk", type=int, default=3, help="words per push")
    parser.add_argument("--repeats", type=int, default=3, help="warm streams timed")
    parser.add_argument("--min-cpu-share", type=float, default=0.75)
    parser.add_argument("--block-words", type=int, default=200)
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    pipe = hf_punctcase.load_pipeline(args.model, dtype=args.dtype)
    pipe.backend = CountingBackend(pipe.backend)
    root = data_dir(args.data_dir)
    ted = DEV_SETS[0]
    references = ted.load(root, pipe.scheme)
    all_words = [word.lower() for reference in references for word in reference.words]
    words = all_words[: args.words]
    report = {
        "model": args.model or "default",
        "dtype": str(pipe.model.dtype),
        "threads": args.threads,
        "machine": {"cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
                    "transformers": transformers.__version__, "machine": hf_punctcase.hardware.detect_hardware().describe()},
        "chunk": args.chunk,
        "words": len(words),
    }

    # ---- latency ------------------------------------------------------------------------------------
    window, context, right = args.sizes[0]
    restorer = StreamingRestorer(pipe, window_words=window, context_words=context, right_context_words=right)
    report["latency_sizes"] = label(args.sizes[0])
    report["max_delay_words"] = restorer.max_delay_words
    report["cold"] = time_stream(restorer, words, args.chunk)
    report["warm"] = [time_stream(restorer, words, args.chunk) for _ in range(args.repeats)]
    kept = [run for run in report["warm"] if run["cpu_share"] >= args.min_cpu_share * args.threads] or report["warm"]
    report["warm_kept"] = len(kept)

    def median_of(key: str, stat: str) -> float:
        return statistics.median(run[key][stat] for run in kept)

    print(f"model {report['model']}, {report['dtype']}, {args.threads} threads; {label(args.sizes[0])}; "
          f"{len(words)} words pushed {args.chunk} at a time ({report['cold']['pushes']} pushes)")
    for name, runs in (("cold", [report["cold"]]), (f"warm (median of {len(kept)}/{len(report['warm'])} kept)", kept)):
        med = lambda key, stat: statistics.median(run[key][stat] for run in runs)  # noqa: E731
        print(f"  {name}: push median {med('push_ms', 'median'):.3f} ms, p90 {med('push_ms', 'p90'):.2f} ms, "
              f"p99 {med('push_ms', 'p99'):.2f} ms, max {med('push_ms', 'max'):.1f} ms; pushes that ran the model "
              f"({runs[0]['model_pushes']}): median {med('model_push_ms', 'median'):.2f} ms, p99 "
              f"{med('model_push_ms', 'p99'):.2f} ms; stream {statistics.median(r['seconds'] for r in runs):.2f} s, "
              f"CPU share {statistics.median(r['cpu_share'] for r in runs):.2f}")
    delay = report["cold"]["delay_words"]
    print(f"  delay: mean {delay['mean']:.1f} words, median {delay['median']:.0f}, max {delay['max']} "
          f"(bound {restorer.max_delay_words} + {args.chunk - 1} brought by the same push); "
          f"at 150 words a minute: mean {delay['mean'] / 2.5:.1f} s, max {delay['max'] / 2.5:.1f} s")
    report["warm_median"] = {key: {stat: median_of(key, stat) for stat in ("median", "p90", "p99", "max")}
                             for key in ("push_ms", "model_push_ms")}

    # ---- accuracy ----------------------------------------------------------------------------------
    if not args.skip_accuracy:
        rows = []
        predictions, _ = restore_references(pipe, references)
        runs = [("pipeline 200/50", predictions, None)]
        for sizes in args.sizes:
            window, context, right = sizes
            streamer = StreamingRestorer(pipe, window_words=window, context_words=context, right_context_words=right)
            predicted = restore_references(StreamedPipeline(streamer, args.chunk), references)[0]
            runs.append((f"stream {label(sizes)}", predicted, streamer.max_delay_words))
        base_counts = None
        for name, predicted, max_delay in runs:
            true_p, pred_p = labels_of(references, predicted, "punct", "punctuation")
            true_c, pred_c = labels_of(references, predicted, "case", "casing")
            scores = score_labels(pipe.scheme, true_p, pred_p, true_c, pred_c)
            counts = {"punct": micro_f1_counts(true_p, pred_p, "O"), "case": micro_f1_counts(true_c, pred_c, "LOWER")}
            row = {"run": name, "max_delay_words": max_delay, **{k: v for k, v in scores.items() if k.endswith("_f1")}}
            for task in ("punct", "case"):
                assert abs(f1(counts[task].sum(0)) - scores[f"{task}_overall_f1"]) < 1e-9
                if base_counts is not None:
                    row[f"{task}_delta"] = scores[f"{task}_overall_f1"] - rows[0][f"{task}_overall_f1"]
                    row[f"{task}_delta_95"] = paired_bootstrap(base_counts[task], counts[task], args.block_words)
            base_counts = base_counts or counts
            rows.append(row)
        report["accuracy"] = rows
        print(f"TED dev2010+tst2012 ({sum(len(r) for r in references)} words), overall F1:")
        for row in rows:
            delay = "" if row["max_delay_words"] is None else f"max delay {row['max_delay_words']} words"
            text = f"  {row['run']:<32} {delay:<21} punct {row['punct_overall_f1']:.4f}"
            text += f"  case {row['case_overall_f1']:.4f}"
            if "punct_delta" in row:
                text += "  " + "  ".join(
                    f"{task} {row[f'{task}_delta'] * 100:+.2f} pt [{row[f'{task}_delta_95'][0] * 100:+.2f}, "
                    f"{row[f'{task}_delta_95'][1] * 100:+.2f}]" for task in ("punct", "case")
                )
            print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
