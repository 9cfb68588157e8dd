#!/usr/bin/env python
"""Evaluate a trained checkpoint through the public pipeline, ship it as the embedded default
(fp16 safetensors inside the package) and write its model card.

    python recipes/export_default.py --checkpoint runs/default/final \
        --recipe-command "python recipes/finetune.py ..." --training-machine "2 CPU cores"

Dev sets: IWSLT dev2010 + tst2012 (the clean TED dev sets), SwDA val, MTS-Dialog validation, ACI-BENCH valid
(lowercase dialogues: punctuation only).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer, pipeline

import hf_punctcase
from hf_punctcase.data import data_dir, load_punct_case_dataset, read_iwslt_cased, read_mts_dialog, read_swda
from hf_punctcase.evaluation import evaluate_dataset, evaluate_pipeline
from hf_punctcase.model_card import card_data_for_checkpoint, render_model_card

REPO = Path(__file__).resolve().parents[1]

def dev_sets(root: Path) -> dict[str, list[tuple[str, str]]]:
    return {
        "TED dev: IWSLT dev2010 + tst2012": list(
            read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt", root / "iwslt" / "tst2012_cased.txt"])
        ),
        "SwDA val": list(read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", split="val")),
        "MTS-Dialog validation": list(read_mts_dialog(root / "medical" / "mts_dialog" / "MTS-Dialog-ValidationSet.csv")),
    }


def export_fp16(checkpoint: Path, target: Path, encoder_name: str | None = None) -> None:
    """Copy a checkpoint with fp16 weights; the config asks for fp32 so that it loads as fp32 on CPU.
    ``encoder_name`` replaces the directory the encoder was loaded from (site-packages, or an MLM run
    under runs/), meaningless on a user's machine; the card says the rest. The target's README.md (the
    card) is written afterwards by main()."""
    model = hf_punctcase.JointTokenClassificationModel.from_pretrained(checkpoint, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        weights = load_file(Path(tmp) / "model.safetensors")
        save_file({k: v.half().contiguous() for k, v in weights.items()}, Path(tmp) / "model.safetensors", metadata={"format": "pt"})
        config = json.loads((Path(tmp) / "config.json").read_text())
        config["dtype"] = "float32"
        if encoder_name:
            config["encoder"]["_name_or_path"] = encoder_name
        (Path(tmp) / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(tmp, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--target", type=Path, default=hf_punctcase.DEFAULT_MODEL_DIR)
    parser.add_argument("--card", type=Path, default=REPO / "model_cards" / "default.md")
    parser.add_argument("--recipe-command", default=None, help="Default: the commands the training records hold.")
    parser.add_argument("--training-machine", required=True)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--ablation-table", type=Path, default=None,
        help="A markdown file (e.g. from benchmarks/ablation_table.py) the card shows as its ablation section.",
    )
    args = parser.parse_args()

    card = card_data_for_checkpoint(args.checkpoint, training_machine=args.training_machine)
    export_fp16(args.checkpoint, args.target, encoder_name=card.base_model_id)
    restorer = pipeline("punct-case", model=str(args.target))
    root = data_dir(args.data_dir)
    evaluations = {name: evaluate_pipeline(restorer, docs, args.batch_size) for name, docs in dev_sets(root).items()}
    aci = load_punct_case_dataset("aci_bench", root)["validation"]  # no casing labels: scored on punctuation
    evaluations["ACI-BENCH valid"] = evaluate_dataset(restorer, aci, args.batch_size)
    (args.checkpoint / "dev_evaluation.json").write_text(json.dumps(evaluations, indent=2))
    for name, scores in evaluations.items():
        casing = f", case overall F1 {100 * scores['case_overall_f1']:.1f}" if "case_overall_f1" in scores else ""
        print(f"{name}: punct overall F1 {100 * scores['punct_overall_f1']:.1f}{casing}, {scores['words_per_second']:.0f} words/s")

    size = (args.target / "model.safetensors").stat().st_size / 2**20
    card.model_name = "hf_punctcase default"
    card.size_on_disk_mb = size
    card.weights_dtype = "fp16"
    card.evaluations = evaluations
    card.evaluation_command = f"python recipes/export_default.py --checkpoint {args.checkpoint} ..."
    if args.recipe_command:
        card.recipe_command = args.recipe_command
    card.notes = [
        "Licence: some of the training text (the MLM adaptation's included) is under non-commercial licences "
        "(Training data), so this checkpoint is for non-commercial use only; read the TED terms (no "
        "derivatives) before redistributing it.",
        "The recipes' ablations (MLM adaptation, two-stage finetuning, depth, case conditioning, distillation) "
        "are in the project README (Experiments).",
    ]
    if args.ablation_table:
        card.extra_sections["Ablations (dev)"] = args.ablation_table.read_text()
    text = render_model_card(card)
    args.card.parent.mkdir(parents=True, exist_ok=True)
    args.card.write_text(text)
    (args.target / "README.md").write_text(text)  # the card travels with the package and any push
    print(f"wrote {args.target} ({size:.1f} MB) and {args.card}")


if __name__ == "__main__":
    main()
