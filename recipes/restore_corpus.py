#!/usr/bin/env python
"""Restore a large corpus of transcripts, split across processes (GPUs or CPU workers) with accelerate.

    accelerate launch --config_file recipes/configs/accelerate_multi_gpu.yaml recipes/restore_corpus.py \
        --input transcripts.txt --output restored.txt --batch_size 64
    python recipes/restore_corpus.py --input transcripts.jsonl --text_field text --output restored.jsonl

Input: ``.txt`` (one transcript per line) or ``.jsonl`` (``--text_field``). Each process restores
its contiguous share of the lines into OUTPUT.partK; the main process then joins the shares in input
order into OUTPUT (``.txt``: one restored transcript per line; ``.jsonl``: the input records with the
restored text in ``--output_field``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from accelerate import PartialState

import hf_punctcase


def read_inputs(path: Path, text_field: str) -> list:
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in lines if line.strip()]
    return lines


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--model", default=None, help="Checkpoint directory (default: the embedded model).")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--text_field", default="text")
    parser.add_argument("--output_field", default="restored")
    args = parser.parse_args(argv)

    state = PartialState()
    records = read_inputs(args.input, args.text_field)
    texts = [r[args.text_field] if isinstance(r, dict) else r for r in records]
    device = state.device if state.device.type != "cpu" else -1
    restorer = hf_punctcase.load_pipeline(args.model, device=device)
    part = args.output.with_name(f"{args.output.name}.part{state.process_index}")
    with state.split_between_processes(list(range(len(texts)))) as indices:
        results = restorer([texts[i] for i in indices], batch_size=args.batch_size) if indices else []
        part.write_text(json.dumps([[i, r["text"]] for i, r in zip(indices, results)]), encoding="utf-8")
    state.wait_for_everyone()
    if state.is_main_process:
        restored = {}
        for k in range(state.num_processes):
            shard = args.output.with_name(f"{args.output.name}.part{k}")
            restored.update({i: text for i, text in json.loads(shard.read_text(encoding="utf-8"))})
            shard.unlink()
        with open(args.output, "w", encoding="utf-8") as handle:
            for i, record in enumerate(records):
                if isinstance(record, dict):
                    handle.write(json.dumps({**record, args.output_field: restored[i]}) + "\n")
                else:
                    handle.write(restored[i] + "\n")
    state.wait_for_everyone()
    return args.output


if __name__ == "__main__":
    main()
