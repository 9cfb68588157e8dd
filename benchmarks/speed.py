#!/usr/bin/env python
"""Speed of the punct-case pipeline: words/s on a 10,000-word transcript and the latency of one
40-word paragraph at batch size 1 (medians over repeated runs), for each model, dtype and window context
asked for, all in one run.

    python benchmarks/speed.py                                   # embedded default, 2 threads, dtype auto
    python benchmarks/speed.py --dtypes auto float32 bfloat16   # the three ways to run it on a CPU
    python benchmarks/speed.py --model default PATH --threads 2 --json out.json   # two models side by side
    python benchmarks/speed.py --context-words 50 25 0          # what the windows' overlap costs
    python benchmarks/speed.py --model on-device --runtime --markdown speed.md   # ONNX: pipeline and torch-free runtime
    python benchmarks/speed.py --stock                          # + transformers' token-classification pipeline
    python benchmarks/speed.py --runtimes torch onnxruntime openvino   # the default through each runtime
    python benchmarks/speed.py --stock --interleave --repeats 5  # against the stock pipeline, in interleaved rounds
    python benchmarks/speed.py --runtimes openvino onnxruntime --return-commands --interleave   # what the command head costs
    python benchmarks/speed.py --options remove_disfluencies spoken_punctuation paragraphs keep_punctuation \
        remove_disfluencies+spoken_punctuation+paragraphs --interleave --repeats 3   # what each option costs

An ONNX export folder (the embedded ``on-device`` model, or ``hf-punctcase export-onnx`` output) runs
through the pipeline's ONNX Runtime backend with ``--threads`` intra-op threads; its graph fixes its
precision, so it runs once whatever ``--dtypes`` and ``--runtimes`` say. An OpenVINO folder runs once too, in
OpenVINO with ``--threads`` threads. ``--runtime`` also times the torch-free
:class:`hf_punctcase.runtime.OnDeviceRestorer` on each ONNX folder.

Windows: ``--window-words`` words per model input with ``--context-words`` words of context on each
side of a core of window - 2 × context words, so every word is encoded window / core times (2× at the
pipeline's 200 / 50).

Machines shared with other work: a run during which another process took one of the cores (its CPU
seconds below ``--min-cpu-share`` × threads × wall seconds) is left out of the medians, which say how many
runs they hold; the medians of all runs are printed beside them.

Dtypes: ``auto`` is ``pipeline("punct-case")`` with no dtype, as :func:`hf_punctcase.loading.plan_execution` plans
it on this machine (for the default on a CPU without AMX or avx512_bf16: its int8 ONNX Runtime graph); ``float32`` is
``dtype=torch.float32``; ``bfloat16`` is ``dtype=torch.bfloat16``. ``--stock`` also times transformers' own
``pipeline("token-classification")`` (fp32, ``stride`` 64, its default windows of the tokenizer's
maximum length) on a token classifier of the first model's encoder architecture (random weights:
speed only), the baseline a user would otherwise take. Each model, dtype and runtime is timed in a block of its own after a
warm-up: an ONNX Runtime InferenceSession's threads spin for a while after each run, and runs of two InferenceSessions in
turn would take the cores from each other (twice the latency of one InferenceSession on its own).

The transcript is real TED speech (IWSLT dev2010, lowercased and unpunctuated, as ASR output) from
../shared/data or --data-dir. Targets for the project: ≥ 5,000 words/s, ≤ 15 ms per paragraph.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

import hf_punctcase
from hf_punctcase.cli import DTYPE_CHOICES
from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.labels import LabelScheme
from hf_punctcase.hardware import detect_hardware
from hf_punctcase.checkpoints import resolve
from hf_punctcase.formats import OpenVinoFormat, format_of, is_onnx_dir
from hf_punctcase.runtime import OnDeviceRestorer
from hf_punctcase.backends.onnxruntime import import_onnxruntime, read_export_info



def transcript_words(root) -> list[str]:
    (_, text), = read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt"])
    return LabelScheme().parse(text).words


def stock_token_classification(folder: str, device: str | None):
    """transformers' token-classification pipeline (fp32, stride 64, first-subword aggregation) over a
    token classifier of ``folder``'s encoder architecture, called as the punct-case restorers are."""
    import tempfile

    from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer, pipeline

    config = AutoConfig.from_pretrained(folder)
    encoder = config.encoder if isinstance(config.encoder, dict) else config.encoder.to_dict()
    encoder_config = AutoConfig.for_model(**{**encoder, "num_labels": len(config.punct_labels)})
    model = AutoModelForTokenClassification.from_config(encoder_config, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    with tempfile.TemporaryDirectory() as staging:  # a folder, as a user would load it
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        pipe = pipeline("token-classification", model=staging, device=device, stride=64, aggregation_strategy="first")

    def restore(text, batch_size, **windows):
        return pipe(text, batch_size=batch_size)

    return restore


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
    parser.add_argument("--markdown", default=None, help="also write the table here (e.g. for a model card)")
    parser.add_argument("--runtime", action="store_true",
                        help="also time hf_punctcase.runtime.OnDeviceRestorer on each ONNX folder")
    parser.add_argument("--interleave", action="store_true",
                        help="time in rounds, every restorer once a round (--repeats rounds), instead of one block each")
    parser.add_argument("--runtimes", nargs="+", choices=("torch", "onnxruntime", "openvino"), default=[],
                        help="also time each torch checkpoint through these runtimes (load_pipeline(runtime=...))")
    parser.add_argument("--stock", action="store_true",
                        help="also time transformers' token-classification pipeline on the first model's encoder architecture")
    parser.add_argument("--return-commands", action="store_true",
                        help="also time each restorer with return_commands=True: the spoken-command head run on every "
                        "call, as spoken_punctuation=True runs it (calls without it leave the head and its own layers out)")
    parser.add_argument("--options", nargs="+", default=[], metavar="OPTION[+OPTION...]",
                        help="also time each restorer with these restoration options on (a name of a pipeline keyword "
                        "that takes True: remove_disfluencies, spoken_punctuation, paragraphs, keep_punctuation; "
                        "several joined by '+' are timed together)")
    args = parser.parse_args()
    option_sets = {"return_commands": {"return_commands": True}} if args.return_commands else {}
    option_sets.update({names: dict.fromkeys(names.split("+"), True) for names in args.options})

    torch.set_num_threads(args.threads)
    words = transcript_words(data_dir(args.data_dir))
    if len(words) < args.long_words:
        words = words * (args.long_words // len(words) + 1)
    long_text = " ".join(words[: args.long_words])
    paragraph = " ".join(words[1000 : 1000 + args.paragraph_words])

    loaded = {}  # "model | dtype" -> (a callable taking (text, batch_size, window arguments), weights in words)
    for model in args.model:
        folder = resolve(model).location
        if is_onnx_dir(folder):
            pipe = hf_punctcase.load_pipeline(folder, intra_op_num_threads=args.threads)
            weights = f"ONNX {read_export_info(folder).get('precision', '')}".strip()
            loaded[f"{model} | ONNX Runtime pipeline"] = (pipe, weights)
            if args.runtime:
                runtimes = {}  # OnDeviceRestorer takes its batch size when built

                def on_device(text, batch_size, folder=folder, runtimes=runtimes, **windows):
                    if batch_size not in runtimes:
                        runtimes[batch_size] = OnDeviceRestorer(
                            folder, batch_size=batch_size, intra_op_num_threads=args.threads
                        )
                    return runtimes[batch_size](text, **windows)

                loaded[f"{model} | OnDeviceRestorer (no torch)"] = (on_device, weights)
            continue
        if isinstance(format_of(folder), OpenVinoFormat):  # an OpenVINO folder runs in OpenVINO, once
            pipe = hf_punctcase.load_pipeline(folder, intra_op_num_threads=args.threads)
            loaded[f"{model} | OpenVINO pipeline"] = (pipe, f"OpenVINO {pipe.execution_plan.precision}")
            continue
        for dtype in args.dtypes:
            pipe = hf_punctcase.load_pipeline(model, dtype=dtype, device=args.device)
            plan = pipe.execution_plan
            loaded[f"{model} | {dtype}"] = (pipe, f"{plan.runtime} {plan.precision}")
        for runtime in args.runtimes:
            pipe = hf_punctcase.load_pipeline(model, runtime=runtime, device=args.device, intra_op_num_threads=args.threads)
            plan = pipe.execution_plan
            loaded[f"{model} | runtime {runtime}"] = (pipe, f"{plan.runtime} {plan.precision}")
    if args.stock:
        stock = stock_token_classification(resolve(args.model[0]).location, args.device)
        loaded[f"{args.model[0]} architecture | transformers token-classification, stride 64"] = (stock, "torch float32")
    restorers = {}  # "model | dtype | context" -> (restorer, its call's window arguments, weights)
    for name, (restorer, weights) in loaded.items():
        for context in args.context_words:
            windows = {"window_words": args.window_words, "context_words": context}
            windows = {key: value for key, value in windows.items() if value is not None}
            restorers[f"{name} | context {context if context is not None else 'default'}"] = (restorer, windows, weights)
            for option_names, options in option_sets.items() if "token-classification" not in name else ():
                restorers[f"{name} | context {context if context is not None else 'default'} | {option_names}"] = (
                    restorer, {**windows, **options}, weights
                )
    load_before = os.getloadavg()
    long_runs = {name: [] for name in restorers}  # (wall, CPU) seconds per run
    short_runs = {name: [] for name in restorers}
    if args.interleave:
        # Rounds in which every restorer runs in turn, so that a machine that slows down or speeds up
        # during the run weighs on all of them alike; a pause before each restorer lets the previous
        # one's runtime threads (ONNX Runtime's spin after a run) go idle.
        for restorer, windows, _ in restorers.values():
            restorer(long_text, batch_size=args.batch_size, **windows)  # warm-up
            for _ in range(5):
                restorer(paragraph, batch_size=1, **windows)
        per_round = max(1, args.latency_repeats // args.repeats)
        for _ in range(args.repeats):
            for name, (restorer, windows, _) in restorers.items():
                time.sleep(0.5)
                long_runs[name].append(seconds(lambda: restorer(long_text, batch_size=args.batch_size, **windows)))
                for _ in range(per_round):
                    short_runs[name].append(seconds(lambda: restorer(paragraph, batch_size=1, **windows)))
    for name, (restorer, windows, _) in ([] if args.interleave else restorers.items()):
        # One restorer at a time: each ONNX Runtime InferenceSession keeps its own threads spinning for a
        # while after a run, and they would take the cores from the next restorer's run.
        restorer(long_text, batch_size=args.batch_size, **windows)  # warm-up
        for _ in range(args.repeats):
            long_runs[name].append(seconds(lambda: restorer(long_text, batch_size=args.batch_size, **windows)))
        for _ in range(5):
            restorer(paragraph, batch_size=1, **windows)
        for _ in range(args.latency_repeats):
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
        "machine": detect_hardware().describe(),
        "torch": torch.__version__,
        "long_words": args.long_words,
        "paragraph_words": args.paragraph_words,
        # 1-minute load averages before and after the timed runs: above the thread count, other
        # processes shared the cores and the wall-clock figures are lower bounds (CPU seconds are not).
        "load_average_before_after": [load_before[0], os.getloadavg()[0]],
        "runs": {},
    }
    for name, (_, _, weights) in restorers.items():
        long_all = [wall for wall, _ in long_runs[name]]
        short_all = [wall for wall, _ in short_runs[name]]
        long_kept, short_kept = unshared(long_runs[name]), unshared(short_runs[name])
        figures["runs"][name] = {
            "weights": weights,
            "long_runs_wall_cpu_seconds": long_runs[name],
            "words_per_second": args.long_words / statistics.median(long_kept),
            "words_per_second_by_run": [args.long_words / wall for wall, _ in long_runs[name]],
            "long_runs_kept": len([t for t in long_kept if t == t]),
            "words_per_second_all_runs": args.long_words / statistics.median(long_all),
            "paragraph_median_ms": 1000 * statistics.median(short_kept),
            "paragraph_runs_kept": len([t for t in short_kept if t == t]),
            "paragraph_median_ms_all_runs": 1000 * statistics.median(short_all),
            "paragraph_p90_ms_all_runs": 1000 * statistics.quantiles(short_all, n=10)[-1],
        }
    print(json.dumps(figures, indent=2))
    table = [
        f"| model | dtype / runtime | context | weights | words/s ({args.long_words:,}-word transcript, batch "
        f"{args.batch_size}, median of the unshared runs) | {args.paragraph_words}-word paragraph, batch 1 (median of "
        "the unshared runs) | the same, medians of all runs |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in figures["runs"].items():
        table.append(
            f"| {name} | {row['weights']} "
            f"| {row['words_per_second']:,.0f} ({row['long_runs_kept']}/{args.repeats} runs) "
            f"| {row['paragraph_median_ms']:.1f} ms ({row['paragraph_runs_kept']}/{args.latency_repeats}) "
            f"| {row['words_per_second_all_runs']:,.0f} words/s, {row['paragraph_median_ms_all_runs']:.1f} ms |"
        )
    print("\n" + "\n".join(table))
    stock_names = [name for name in restorers if "token-classification" in name]
    if args.interleave and stock_names:
        stock_runs = [wall for wall, _ in long_runs[stock_names[0]]]
        for name in restorers:
            if name not in stock_names:
                ratios = [stock / wall for (wall, _), stock in zip(long_runs[name], stock_runs)]
                figures["runs"][name]["words_per_second_over_stock_by_round"] = ratios
                print(f"{name}: words/s over the stock pipeline's, round by round: {', '.join(f'{r:.2f}×' for r in ratios)}")
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(
                f"Medians on {figures['machine']}, {figures['threads']} threads (torch {figures['torch']}, "
                f"onnxruntime {import_onnxruntime().__version__}); command: `python benchmarks/speed.py "
                f"{' '.join(sys.argv[1:])}`.\n\n" + "\n".join(table) + "\n"
            )
    print(f"\n1-minute load average before / after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
