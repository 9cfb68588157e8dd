#!/usr/bin/env python
"""Does a transcript's restoration depend on what it is batched with? Each dev set's documents are
restored one window per forward pass (batch 1) and in batches of windows (--batch-size, windows of
several documents side by side, padded to the longest), and the two are compared: words whose labels
differ, documents whose text differs, and the largest difference of a probability.

    python benchmarks/batch_independence.py --model default                  # as pipeline("punct-case") runs it
    python benchmarks/batch_independence.py --model default --dtype float32 bfloat16
    python benchmarks/batch_independence.py --model on-device --sets TED SwDA
    python benchmarks/batch_independence.py --model default --runtime torch openvino   # each runtime as it runs here
    python benchmarks/batch_independence.py --model default --dataset-records 400      # + hf_punctcase.restore_dataset

``--dataset-records N`` also restores N records (60 to 150 words of the dev sets' text, in turn) with
:func:`hf_punctcase.restore_dataset` (``Dataset.map`` in batches) and counts those whose text is the
pipeline's for the record alone.

Each (model, runtime, dtype) says how it ran (``execution_plan``) and on what machine; a dtype other than
auto runs with torch, so it is paired with the runtimes auto and torch only.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

import hf_punctcase
from hf_punctcase.execution import RUNTIMES
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import DEV_SETS, available
from hf_punctcase.hardware import detect_hardware
from hf_punctcase.labels import LabelScheme


def compare(pipe, texts: list[str], batch_size: int) -> dict:
    alone = [pipe(text, batch_size=1, return_probabilities=True) for text in texts]
    batched = pipe(texts, batch_size=batch_size, return_probabilities=True)
    words = labels = 0
    largest = 0.0
    for one, many in zip(alone, batched):
        words += len(one["words"])
        for a, b in zip(one["words"], many["words"]):
            labels += a["punctuation"] != b["punctuation"] or a["casing"] != b["casing"]
        for task in one["probabilities"]:
            if len(one["probabilities"][task]):
                largest = max(largest, float(np.abs(one["probabilities"][task] - many["probabilities"][task]).max()))
    return {
        "documents": len(texts),
        "words": words,
        "words_with_other_labels": labels,
        "documents_with_other_text": sum(one["text"] != many["text"] for one, many in zip(alone, batched)),
        "max_probability_difference": largest,
    }


def dataset_records(texts: list[str], count: int) -> list[str]:
    """``count`` records of 60 to 150 words cut in turn from the words of ``texts``."""
    words = " ".join(texts).split()
    records, start = [], 0
    while len(records) < count and start < len(words):
        length = 60 + 15 * (len(records) % 7)
        records.append(" ".join(words[start : start + length]))
        start += length
    return records


def compare_dataset(pipe, model: str, load_options: dict, records: list[str]) -> dict:
    import datasets

    alone = [pipe(text)["text"] for text in records]
    mapped = hf_punctcase.restore_dataset(datasets.Dataset.from_dict({"text": records}), model=model, load_options=load_options)
    return {"records": len(records), "records_as_alone": sum(a == b for a, b in zip(alone, mapped["restored"]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", default=["default"])
    parser.add_argument("--dtype", nargs="+", default=["auto"], help="auto: as pipeline('punct-case') plans it")
    parser.add_argument(
        "--runtime", nargs="+", default=["auto"], choices=("auto", *RUNTIMES),
        help="auto: as pipeline('punct-case') plans it",
    )
    parser.add_argument("--sets", nargs="+", default=None, help="dev sets whose name starts with one of these")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-documents", type=int, default=200, help="per dev set")
    parser.add_argument("--dataset-records", type=int, default=0, help="also compare restore_dataset on this many records")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    root = data_dir(args.data_dir)
    scheme = LabelScheme()
    sets = [s for s in DEV_SETS if available(s, root) and (not args.sets or s.name.startswith(tuple(args.sets)))]
    print(f"machine: {detect_hardware().describe()}")
    figures = {"machine": detect_hardware().as_dict(), "runs": {}}
    for model in args.model:
        for runtime, dtype in [(r, d) for r in args.runtime for d in args.dtype if d == "auto" or r in ("auto", "torch")]:
            load_options = {"dtype": None if dtype == "auto" else dtype, "runtime": runtime}
            pipe = hf_punctcase.load_pipeline(model, **load_options)
            plan = pipe.execution_plan
            print(f"\n{model}, runtime {runtime}, dtype {dtype}: {plan.describe()}")
            print("| dev set | documents | words | words with other labels | documents with other text | max probability difference |")
            print("|---|---|---|---|---|---|")
            every_text = []
            for dev_set in sets:
                texts = [" ".join(ref.words) for ref in dev_set.load(root, scheme)[: args.max_documents]]
                every_text += texts
                row = compare(pipe, texts, args.batch_size)
                figures["runs"][f"{model} | {runtime} | {dtype} | {dev_set.name}"] = {"plan": plan.as_dict(), **row}
                print(
                    f"| {dev_set.name} | {row['documents']} | {row['words']:,} | {row['words_with_other_labels']} "
                    f"| {row['documents_with_other_text']} | {row['max_probability_difference']:.2g} |"
                )
            if args.dataset_records:
                row = compare_dataset(pipe, model, load_options, dataset_records(every_text, args.dataset_records))
                figures["runs"][f"{model} | {runtime} | {dtype} | restore_dataset"] = {"plan": plan.as_dict(), **row}
                print(f"restore_dataset: {row['records_as_alone']} of {row['records']} records as the pipeline gives them alone")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
