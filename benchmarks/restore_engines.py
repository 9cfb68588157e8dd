#!/usr/bin/env python
"""Restoring a JSONL corpus with recipes/restore_corpus.py on each engine and worker count: words/s, peak
RSS of the largest process and of all of them, start-up time, and how the cost grows with the corpus.

    python benchmarks/restore_engines.py --model on-device --words 200000 1000000 --workers 1 2
    python benchmarks/restore_engines.py --engines datasets --words 1000000 10000000 --json out.json

The corpus is real TED speech (IWSLT dev2010 from ../shared/data or --data-dir, lowercased and
unpunctuated, as ASR gives it) cut into records of ``--record-words`` words and repeated to each size,
written once per size under --work-dir. Each run is the recipe in a process of its own, as a user runs
it: its wall time (words/s = corpus words / (wall − start-up)), the peak resident memory of the
largest process of the run and of all its processes together (the recipe, datasets' workers, Ray's
local cluster and actors) and its start-up: the wall time of the same command on a one-record corpus
(imports, model load, Ray's cluster start). Each output is checked to hold every record once, in order. The Ray engine runs only where ray is installed (``pip install -c constraints.txt -e ".[ray]"``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import DEV_SETS
from hf_punctcase.labels import LabelScheme

RECIPE = Path(__file__).resolve().parent.parent / "recipes" / "restore_corpus.py"


def corpus_words(root: Path) -> list[str]:
    """TED dev speech as ASR gives it: the reference words, lowercased and unpunctuated."""
    ted = next(dev_set for dev_set in DEV_SETS if dev_set.name.startswith("TED"))
    return [word for reference in ted.load(root, LabelScheme()) for word in reference.words]


def write_corpus(path: Path, words: list[str], total: int, record_words: int) -> int:
    """``total`` words of ``words`` (repeated) as JSONL records of ``record_words`` words; returns the records."""
    records = 0
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, total, record_words):
            piece = [words[(start + i) % len(words)] for i in range(min(record_words, total - start))]
            handle.write(json.dumps({"id": records, "text": " ".join(piece)}) + "\n")
            records += 1
    return records


def run_recipe(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, the peak RSS (MiB) of the largest process of the run and the peak RSS of all its
    processes together. The run's processes are the recipe and every descendant: datasets' workers, and
    for Ray the local cluster's processes and the actors they start; they are sampled every 0.2 s
    (psutil), and wait4's ru_maxrss adds the exact peak of the recipe and the workers it waited for."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, str(RECIPE), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    largest, together = 0.0, 0.0
    finished = None
    while finished is None:
        largest_now, together_now = tree_rss(process.pid)
        largest, together = max(largest, largest_now), max(together, together_now)
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            finished = status
        else:
            time.sleep(0.2)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(finished)
    if process.returncode != 0:
        raise SystemExit(f"restore_corpus.py {' '.join(args)} exited with {process.returncode}")
    return seconds, max(largest, usage.ru_maxrss / 1024), together


def tree_rss(pid: int) -> tuple[float, float]:
    """The RSS (MiB) of the largest process of ``pid``'s tree, and of the whole tree."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0.0
    sizes = []
    for member in processes:
        try:
            sizes.append(member.memory_info().rss / 2**20)
        except psutil.Error:
            pass
    return max(sizes, default=0.0), sum(sizes)


def check_output(path: Path, records: int) -> None:
    ids = [json.loads(line)["id"] for line in open(path, encoding="utf-8")]
    if ids != list(range(records)):
        raise SystemExit(f"{path}: the records are not each there once, in order")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="on-device")
    parser.add_argument("--engines", nargs="+", default=["datasets", "ray"], choices=["datasets", "ray"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--words", nargs="+", type=int, default=[1_000_000])
    parser.add_argument("--record-words", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    engines = [engine for engine in args.engines if engine != "ray" or _has_ray()]
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="restore_engines_"))
    work.mkdir(parents=True, exist_ok=True)
    words = corpus_words(data_dir(args.data_dir))
    rows = []
    tiny = work / "one_record.jsonl"
    write_corpus(tiny, words, args.record_words, args.record_words)
    for engine in engines:
        for workers in args.workers:
            common = ["--engine", engine, "--model", args.model, "--batch_size", str(args.batch_size), "--num_proc", str(workers)]
            startup, _, _ = run_recipe(["--input", str(tiny), "--output", str(work / "startup.jsonl"), *common])
            for total in args.words:
                corpus = work / f"corpus_{total}.jsonl"
                records = write_corpus(corpus, words, total, args.record_words) if not corpus.exists() else sum(1 for _ in open(corpus))
                output = work / f"out_{engine}_{workers}_{total}.jsonl"
                output.unlink(missing_ok=True)
                seconds, peak, peak_together = run_recipe(["--input", str(corpus), "--output", str(output), *common])
                check_output(output, records)
                row = {
                    "engine": engine, "workers": workers, "words": total, "seconds": round(seconds, 1),
                    "words_per_second": round(total / max(seconds - startup, 1e-9)), "startup_seconds": round(startup, 1),
                    "peak_rss_mib": round(peak), "peak_rss_all_processes_mib": round(peak_together),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n| engine | workers | words | wall s | words/s (after start-up) | start-up s | peak RSS MiB, largest process | all processes |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['engine']} | {row['workers']} | {row['words']:,} | {row['seconds']} | {row['words_per_second']:,} "
            f"| {row['startup_seconds']} | {row['peak_rss_mib']:,} | {row['peak_rss_all_processes_mib']:,} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "threads": os.cpu_count(), "rows": rows}, indent=1))
    return rows


def _has_ray() -> bool:
    if importlib.util.find_spec("ray") is None:
        print("ray is not installed: the ray engine is left out", file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    main()
