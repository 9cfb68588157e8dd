#!/usr/bin/env python
"""How well the Trainer's dev metric predicts the pipeline's, for checkpoints of a run.

    python benchmarks/trainer_dev_metric.py runs/mine/checkpoint-500 runs/mine/checkpoint-1000 \
        [--corpus ted] [--int8-storage] [--json out.json]

For each checkpoint, the TED dev punctuation and casing F1 three ways: the Trainer's evaluation
(argmax on first subwords) over the dev set in the pipeline's windows (``eval_with_context``, the
default of recipes/finetune.py) and in sentence chunks of 200 words without context
(``--eval_with_context false``), and ``pipeline("punct-case")`` itself on the same documents. All
three in bf16 autocast where the CPU has bf16 instructions, else fp32. ``--int8-storage``: each
checkpoint is scored as a quantization-aware run evaluates it (weights rounded as int8 storage rounds
them) and the pipeline loads it stored int8 (``hf-punctcase quantize``), as the default ships.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import datasets
from transformers import AutoTokenizer, Trainer, TrainingArguments
from transformers.trainer_callback import PrinterCallback

import hf_punctcase
from hf_punctcase.atomic_files import atomic_output
from hf_punctcase.auto import AutoModelForJointTokenClassification
from hf_punctcase.data import CorpusSpec
from hf_punctcase.evaluation import compute_metrics_for, evaluate_dataset
from hf_punctcase.hardware import detect_hardware
from hf_punctcase.quantization import quantize_checkpoint, simulate_int8_storage
from hf_punctcase.tasks import tasks_of
from hf_punctcase.training import load_dev_sets, tokenize_dev_set
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification

WINDOW_WORDS = 200


def trainer_scores(checkpoint: str, dev: datasets.Dataset, int8_storage: bool, bf16: bool) -> dict[str, dict]:
    """The Trainer's scores of one checkpoint, in the pipeline's windows and in sentence chunks."""
    model = AutoModelForJointTokenClassification.from_pretrained(checkpoint, trust_remote_code=False)
    if int8_storage:
        simulate_int8_storage(model)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    tasks = tasks_of(model.config)
    return {
        name: _evaluate(model, tokenizer, tokenize_dev_set(dev, tokenizer, model.config, with_context, 320, tasks), tasks, bf16)
        for name, with_context in (("trainer_with_context", True), ("trainer_sentence_chunks", False))
    }


def _evaluate(model, tokenizer, tokens: datasets.Dataset, tasks, bf16: bool) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        args = TrainingArguments(
            output_dir=scratch, use_cpu=True, bf16=bf16, per_device_eval_batch_size=8, report_to="none",
            label_names=[task.label_field for task in tasks], disable_tqdm=True,
        )
        trainer = Trainer(
            model=model, args=args, data_collator=DataCollatorForJointTokenClassification(tokenizer),
            compute_metrics=compute_metrics_for(model.config),
        )
        trainer.remove_callback(PrinterCallback)  # the table says it
        metrics = trainer.evaluate(tokens)
    return {"punct_f1": metrics["eval_punct_overall_f1"], "case_f1": metrics["eval_case_overall_f1"],
            "words": metrics["eval_punct_words"]}


def pipeline_scores(checkpoint: str, dev: datasets.Dataset, int8_storage: bool, bf16: bool) -> dict:
    dtype = "bfloat16" if bf16 else "float32"
    with tempfile.TemporaryDirectory() as scratch:
        folder = quantize_checkpoint(checkpoint, Path(scratch) / "int8") if int8_storage else checkpoint
        scores = evaluate_dataset(hf_punctcase.load_pipeline(str(folder), dtype=dtype), dev)
    return {"punct_f1": scores["punct_overall_f1"], "case_f1": scores["case_overall_f1"], "words": scores["words"]}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--corpus", default="ted", help="The corpus whose validation split is scored.")
    parser.add_argument("--int8-storage", action="store_true")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    bf16 = detect_hardware().cpu_bf16
    (dev,) = load_dev_sets([CorpusSpec.parse(args.corpus)], args.data_dir, WINDOW_WORDS).values()
    rows = []
    print(f"{args.corpus} dev, {'bf16 autocast' if bf16 else 'fp32'}, {'int8 storage' if args.int8_storage else 'float weights'}")
    print("| checkpoint | Trainer, pipeline's windows | Trainer, sentence chunks | pipeline |")
    print("|---|---|---|---|")
    for checkpoint in args.checkpoints:
        row = {
            "checkpoint": checkpoint,
            **trainer_scores(checkpoint, dev, args.int8_storage, bf16),
            "pipeline": pipeline_scores(checkpoint, dev, args.int8_storage, bf16),
        }
        rows.append(row)
        cells = [f"{100 * row[k]['punct_f1']:.1f} / {100 * row[k]['case_f1']:.1f}"
                 for k in ("trainer_with_context", "trainer_sentence_chunks", "pipeline")]
        print(f"| {checkpoint} | {' | '.join(cells)} |", flush=True)
    if args.json:
        with atomic_output(args.json) as handle:
            json.dump(rows, handle, indent=2)
    return rows


if __name__ == "__main__":
    main()
