#!/usr/bin/env python
"""Ship a trained checkpoint as one of the package's embedded models, evaluate what is shipped through
the public pipeline and write its model card.

    python recipes/export_default.py --checkpoint CHECKPOINT \
        --training-machine "2 CPU cores (x86-64, bf16 autocast), no GPU" --ablation-table ablations.md
    python recipes/export_default.py --model on-device --checkpoint CNN_BILSTM_CHECKPOINT --speed-table speed.md
    python recipes/export_default.py --checkpoint HEADS_CHECKPOINT --add-heads --paragraph-threshold 0.23 \
        --dictation-table dictation.md

``--model default`` (the 6-layer default) and ``--model accurate`` (the 12-layer model): safetensors inside
the package, int8 encoder weights per row or fp16; with ``--add-heads``, only the head tasks that a
checkpoint trained on the frozen embedded model adds, in a weight shard of their own beside the shipped
weights. ``--model on-device``: the checkpoint
as an int8 ONNX graph (hf_punctcase.export.onnx, dynamic quantisation, per tensor unless
``--per-channel``), whose agreement with the torch checkpoint is measured on the TED dev transcripts and
stated in the card.

Dev sets: every set of ``hf_punctcase.evaluation.DEV_SETS`` and ``ASR_DEV_SETS`` whose files the data
folder holds (a missing one is skipped, and said so); sets without reliable casing are scored on
punctuation only. The card (hf_punctcase.cards) takes the training data, licences and commands from
the checkpoint's training records, and the dev figures measured here; it is written to
``model_cards/default.md`` (``on_device.md``) and, identical, to the shipped folder's ``README.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer

import hf_punctcase
from hf_punctcase.data import data_dir, load_punct_case_dataset
from hf_punctcase.embedded import EMBEDDED_MODELS
from hf_punctcase.evaluation import (
    ASR_DEV_SETS,
    DEV_SETS,
    DevSet,
    available,
    disfluency_table,
    evaluate_asr_set,
    evaluate_dev_set,
    evaluate_disfluency,
)
from hf_punctcase.export.onnx import export_card, export_onnx
from hf_punctcase.labels import LabelScheme
from hf_punctcase.loading.artifacts import INT8_GRAPH
from hf_punctcase.quantization import is_storage_quantized, save_quantized, weights_size
from hf_punctcase.options import COMMAND, DISFLUENCY, PARAGRAPH
from hf_punctcase.atomic_files import atomic_directory, atomic_write_text
from hf_punctcase.cards.card import render_model_card
from hf_punctcase.cards.checkpoint import card_data_for_checkpoint, replace_embedded_base
from hf_punctcase.cards.facts import DevSetEvaluation
from hf_punctcase.cards.licences import licence_note
from hf_punctcase.cards.weights import INT8_WEIGHTS

REPO = Path(__file__).resolve().parents[1]
#: The card each embedded model's export writes, besides the folder's README.md.
CARDS = {
    "default": REPO / "model_cards" / "default.md",
    "accurate": REPO / "model_cards" / "accurate.md",
    "on-device": REPO / "model_cards" / "on_device.md",
    "open": REPO / "model_cards" / "open.md",
}
#: The dev set whose transcripts measure the ONNX graph's agreement with the torch checkpoint.
PARITY_SET = DEV_SETS[0]


def export_default(
    checkpoint: Path,
    target: Path,
    storage: str,
    encoder_name: str | None = None,
    disfluency_threshold: float | None = None,
    preferred_cpu_runtime: str | None = None,
) -> None:
    """Write a checkpoint as the package's embedded model: weights only (``int8``: the encoder's Linear
    and Embedding weights as int8 per row, hf_punctcase.quantization; ``fp16``: every weight in fp16),
    config and tokenizer; the config asks for fp32, which the pipeline replaces by bf16 on CPUs with bf16 matrix
    units. A checkpoint stored int8 already (``hf-punctcase quantize`` output) ships its weights unchanged.
    ``encoder_name`` replaces the directory the encoder was loaded from (site-packages, or a local MLM
    run), meaningless on a user's machine. ``disfluency_threshold``: the disfluency head's decision
    threshold, written into the config (``remove_disfluencies`` leaves out the words whose score exceeds
    it). ``preferred_cpu_runtime``: what the config says the model prefers on CPUs without bf16 matrix
    units (hf_punctcase.loading: ``"onnxruntime-int8"``, once measured there); None keeps what the
    checkpoint says. The target is replaced only once complete; its README.md (the card) is written
    afterwards by main()."""
    with atomic_directory(target, overwrite=True) as staging:
        if storage == "int8" and is_storage_quantized(checkpoint):
            # Stored int8 already (``hf-punctcase quantize``): shipped as stored. Its float values,
            # stored again, would move each row's scale by up to 1/255 and some weights by one step.
            shutil.copyfile(checkpoint / "model.safetensors", staging / "model.safetensors")
            shutil.copyfile(checkpoint / "config.json", staging / "config.json")
            AutoTokenizer.from_pretrained(checkpoint).save_pretrained(staging)
        elif storage == "int8":
            save_quantized(checkpoint, staging)
        else:
            model = hf_punctcase.JointTokenClassificationModel.from_pretrained(checkpoint, dtype=torch.float32)
            model.save_pretrained(staging)
            AutoTokenizer.from_pretrained(checkpoint).save_pretrained(staging)
            weights = load_file(staging / "model.safetensors")
            save_file({k: v.half().contiguous() for k, v in weights.items()}, staging / "model.safetensors", metadata={"format": "pt"})
        config = json.loads((staging / "config.json").read_text())
        config["dtype"] = "float32"
        if disfluency_threshold is not None:
            config[DISFLUENCY.threshold_field] = disfluency_threshold
            DISFLUENCY.threshold_in(config)  # one between 0 and 1
        if encoder_name:
            config["encoder"]["_name_or_path"] = encoder_name
        if preferred_cpu_runtime is not None:
            config["preferred_cpu_runtime"] = preferred_cpu_runtime
        # The package ships data only (weights, config, tokenizer, card): the trust_remote_code files and
        # the config entries pointing at them are written when the default is saved or pushed.
        for key in ("auto_map", "custom_pipelines"):
            config.pop(key, None)
        (staging / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        for code in staging.glob("*.py"):
            code.unlink()


#: The shards of an embedded model shipped with added heads: its weights as they were, then the heads.
SHIPPED_SHARD, HEADS_SHARD = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def add_heads(checkpoint: Path, target: Path, thresholds: dict[str, float]) -> list[str]:
    """Ship the head tasks of ``checkpoint`` that the embedded model in ``target`` was trained without,
    beside its weights: they stay byte for byte (their file becomes the first of two shards, so that a
    repository holding the model stores them once), the heads' weights go into the second (replacing
    the heads an earlier call put there), and the config gets their labels and ``thresholds`` (config
    field → value). The checkpoint must have trained those heads alone: every other weight must equal the
    checkpoint's exactly, as loaded (int8 weights dequantized). A command head's own layers
    (``command_branch_layers``) ship with it, stored as int8 as the encoder is. The target is replaced
    only once complete. Returns the shipped heads' task names."""
    from safetensors import safe_open

    from hf_punctcase.formats.torch import weight_files
    from hf_punctcase.tasks import head_tasks

    files = weight_files(target)
    if files == [target / "model.safetensors"]:
        base_file, added_before = target / "model.safetensors", set()
    elif files == [target / SHIPPED_SHARD, target / HEADS_SHARD]:
        base_file = target / SHIPPED_SHARD
        with safe_open(str(target / HEADS_SHARD), "pt") as handle:
            added_before = {_weight_of(key) for key in handle.keys()}
    else:
        raise SystemExit(f"{target} is neither one model.safetensors nor {SHIPPED_SHARD} and {HEADS_SHARD}")
    loaded = hf_punctcase.JointTokenClassificationModel.from_pretrained(target, dtype=torch.float32).state_dict()
    shipped = {name: value for name, value in loaded.items() if name not in added_before}
    trained = {}
    for file in weight_files(checkpoint):
        trained.update(load_file(file))
    changed = [
        name for name, value in shipped.items()
        if name not in trained or not torch.equal((value.dequantize() if hasattr(value, "dequantize") else value).float(), trained[name].float())
    ]
    if changed:
        raise SystemExit(
            f"{checkpoint} changed {len(changed)} weights the embedded model ships ({', '.join(changed[:3])}, ...): "
            "it trained more than new heads; export it whole (without --add-heads)"
        )
    config = json.loads((checkpoint / "config.json").read_text())
    new_tasks = [task for task in head_tasks(config) if task.classifier + ".weight" not in shipped]
    added = {name: value for name, value in trained.items() if name not in shipped}
    own_layers = ("command_branch.",) if COMMAND in new_tasks and config.get("command_branch_layers") else ()
    strays = sorted(name for name in added if not name.startswith((*own_layers, *(task.classifier + "." for task in new_tasks))))
    missing = [task.classifier for task in new_tasks if task.classifier + ".weight" not in added]
    if not new_tasks or strays or missing:
        raise SystemExit(
            f"{checkpoint} adds no head task to the embedded model's weights" if not new_tasks
            else f"{checkpoint} has weights of no new head: {', '.join(strays[:3])}" if strays
            else f"{checkpoint} lacks the weights of its heads {', '.join(missing)}"
        )
    shipped_config = json.loads((target / "config.json").read_text())
    metadata = {"format": "pt"}
    if own_layers:
        added, metadata, shipped_config["quantization_config"] = _stored_as_int8(checkpoint, added)
        shipped_config["command_branch_layers"] = config["command_branch_layers"]
    else:
        shipped_config.pop("command_branch_layers", None)
    with atomic_directory(target, overwrite=True) as staging:
        for file in target.iterdir():
            if file.is_file() and file.name not in ("model.safetensors", SHIPPED_SHARD, HEADS_SHARD, "model.safetensors.index.json"):
                shutil.copyfile(file, staging / file.name)
        shutil.copyfile(base_file, staging / SHIPPED_SHARD)
        save_file({name: value.contiguous() for name, value in sorted(added.items())}, staging / HEADS_SHARD, metadata=metadata)
        with safe_open(str(staging / SHIPPED_SHARD), "pt") as handle:
            weight_map = {name: SHIPPED_SHARD for name in handle.keys()}
        weight_map.update({name: HEADS_SHARD for name in added})
        total = sum((staging / name).stat().st_size for name in (SHIPPED_SHARD, HEADS_SHARD))
        index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        (staging / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
        for task in new_tasks:
            shipped_config[task.config_field] = list(task.labels_in(config))
        for field, value in thresholds.items():
            shipped_config[field] = value
        for task in new_tasks:
            task.threshold_in(shipped_config)  # one between 0 and 1
        (staging / "config.json").write_text(json.dumps(shipped_config, indent=2, sort_keys=True) + "\n")
    return [task.name for task in new_tasks]


def _weight_of(key: str) -> str:
    """The weight a saved tensor belongs to: int8 storage saves a weight as its ``_weight_qdata``,
    ``_weight_scale`` and ``_weight_zero_point`` tensors."""
    module, _, field = key.rpartition(".")
    return f"{module}.weight" if field.startswith("_weight_") else key


def _stored_as_int8(checkpoint: Path, added: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], dict[str, str], dict]:
    """The weights ``added`` as int8 storage writes them (taken from the checkpoint stored int8: a weight
    stored as int8 becomes its ``_weight_qdata``, ``_weight_scale`` and ``_weight_zero_point`` tensors),
    the safetensors metadata that says how to read them, and the ``quantization_config`` that covers them
    and every weight the embedded model stores as int8."""
    import tempfile

    from safetensors import safe_open

    stored, metadata = {}, {"format": "pt"}
    with tempfile.TemporaryDirectory() as scratch:
        save_quantized(checkpoint, Path(scratch))
        for file in sorted(Path(scratch).glob("*.safetensors")):
            with safe_open(str(file), "pt") as handle:
                described = handle.metadata() or {}
                for key in handle.keys():
                    weight = _weight_of(key)
                    if weight in added:
                        stored[key] = handle.get_tensor(key)
                        if weight in described:
                            metadata[weight] = described[weight]
                # transformers merges the shards' metadata, a later shard's keys winning: the list of
                # every tensor of the model goes into the heads' shard whole.
                if "tensor_names" in described:
                    metadata["tensor_names"] = described["tensor_names"]
        quantization_config = json.loads((Path(scratch) / "config.json").read_text())["quantization_config"]
    missing = sorted(set(added) - {_weight_of(key) for key in stored})
    if missing:
        raise SystemExit(f"int8 storage of {checkpoint} lacks {', '.join(missing[:3])}")
    return stored, metadata, quantization_config


def parity_texts(root: Path) -> list[str]:
    """The :data:`PARITY_SET` transcripts as the pipeline sees them: lowercase words, no punctuation."""
    if not available(PARITY_SET, root):
        raise FileNotFoundError(f"{PARITY_SET.name}: files absent under {root}; the ONNX parity check needs them")
    return [" ".join(word.lower() for word in ref.words) for ref in PARITY_SET.load(root, LabelScheme())]


def evaluate_all(restorer, root: Path, batch_size: int) -> list[DevSetEvaluation]:
    """Every dev set of the one list (hf_punctcase.evaluation) whose files are present."""
    evaluations = []
    for dev_set in (*DEV_SETS, *ASR_DEV_SETS):
        if not available(dev_set, root):
            print(f"{dev_set.name}: files absent under {root}, skipped", flush=True)
            continue
        if isinstance(dev_set, DevSet):
            scores = evaluate_dev_set(restorer, dev_set, root, batch_size)
        else:
            scores = evaluate_asr_set(restorer, dev_set, root, batch_size)
        evaluations.append(DevSetEvaluation(dev_set.name, scores))
        casing = f", case overall F1 {100 * scores['case_overall_f1']:.1f}" if "case_overall_f1" in scores else ""
        print(f"{dev_set.name}: punct overall F1 {100 * scores['punct_overall_f1']:.1f}{casing}, "
              f"{scores['words_per_second']:.0f} words/s", flush=True)
    return evaluations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument(
        "--model", choices=sorted(EMBEDDED_MODELS), default="default",
        help="which embedded model the checkpoint becomes (default: %(default)s)",
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--target", type=Path, default=None, help="Default: the embedded model's package folder.")
    parser.add_argument("--card", type=Path, default=None, help="Default: model_cards/MODEL.md (default.md, accurate.md, on_device.md, open.md).")
    parser.add_argument("--recipe-command", default=None, help="Default: the commands the training records hold.")
    parser.add_argument(
        "--training-machine", default=None,
        help="What it was trained on, for the card (default: what the training records say).",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--storage", choices=["int8", "fp16"], default="int8",
        help="--model default or accurate: int8 (the encoder's weights as int8 per row, about half of fp16 on disk) or fp16",
    )
    parser.add_argument(
        "--per-channel", action="store_true",
        help="--model on-device: int8 scales per output channel instead of per tensor",
    )
    parser.add_argument(
        "--disfluency-threshold", type=float, default=None,
        help="--model default or accurate: the disfluency head's decision threshold, written into the config (default: the "
        "checkpoint's, or 0.5)",
    )
    parser.add_argument(
        "--preferred-cpu-runtime", choices=[INT8_GRAPH], default=None,
        help="--model default or accurate: write into the config that the model runs as its int8 ONNX Runtime graph "
        "on CPUs without bf16 matrix units (and as its OpenVINO graph on those with them), for a model whose int8 "
        "graph was measured against fp32 (default: what the checkpoint says)",
    )
    parser.add_argument(
        "--add-heads", action="store_true",
        help="--model default or accurate: ship only the checkpoint's new head tasks (trained on the frozen embedded model) "
        "beside the embedded weights, which stay byte for byte",
    )
    parser.add_argument("--paragraph-threshold", type=float, default=None, help="with --add-heads: the paragraph head's threshold")
    parser.add_argument("--command-threshold", type=float, default=None, help="with --add-heads: the command head's threshold")
    parser.add_argument(
        "--disfluency-note", type=Path, default=None,
        help="A markdown paragraph of further disfluency figures (e.g. benchmarks/disfluency_eval.py --core's) the "
        "card's Disfluency section ends with.",
    )
    parser.add_argument(
        "--dictation-table", type=Path, default=None,
        help="A markdown file of the spoken-command and paragraph heads' measured figures the card shows.",
    )
    parser.add_argument(
        "--ablation-table", type=Path, default=None,
        help="A markdown file (e.g. from benchmarks/ablation_table.py) the card shows as its ablation section.",
    )
    parser.add_argument(
        "--speed-table", type=Path, default=None,
        help="A markdown file of measured speed (e.g. from benchmarks/speed.py --markdown) the card shows.",
    )
    args = parser.parse_args()
    on_device = args.model == "on-device"
    target = args.target or EMBEDDED_MODELS[args.model]
    card_path = args.card or CARDS[args.model]
    root = data_dir(args.data_dir)

    # The card's facts first: the checkpoint may have started from the default this export replaces,
    # whose card (its training data and licences) is read before it is overwritten.
    card = card_data_for_checkpoint(args.checkpoint, training_machine=args.training_machine)
    replace_embedded_base(card)  # the model it started from is replaced by this export, and its card with it
    export_info = None
    if on_device:
        export_info = export_onnx(
            args.checkpoint, target, int8=True, per_channel=args.per_channel, parity_texts=parity_texts(root),
            overwrite=True,
        ).info
        parity = export_info["parity"]
        print(f"parity with torch on {parity['words']} words: punctuation {100 * parity['punct_agreement']:.2f}%, "
              f"casing {100 * parity['case_agreement']:.2f}%", flush=True)
    elif args.add_heads:
        thresholds = {field: value for field, value in (
            (PARAGRAPH.threshold_field, args.paragraph_threshold), (COMMAND.threshold_field, args.command_threshold),
        ) if value is not None}
        print(f"added heads: {', '.join(add_heads(args.checkpoint, target, thresholds))}", flush=True)
    else:
        export_default(
            args.checkpoint, target, args.storage, encoder_name=card.encoder_id,
            disfluency_threshold=args.disfluency_threshold, preferred_cpu_runtime=args.preferred_cpu_runtime,
        )
    restorer = hf_punctcase.load_pipeline(str(target))
    evaluations = evaluate_all(restorer, root, args.batch_size)
    (args.checkpoint / "dev_evaluation.json").write_text(json.dumps({e.name: e.scores for e in evaluations}, indent=2))

    size = (target / "model.onnx").stat().st_size / 2**20 if on_device else weights_size(target) / 2**20
    card.size_on_disk_mb = size
    card.evaluations = evaluations
    card.evaluation_command = f"python recipes/export_default.py --model {args.model} --checkpoint CHECKPOINT"
    if on_device:
        scale = "per-channel" if args.per_channel else "per-tensor"
        card.model_name = "hf_punctcase on-device"
        card.embedded_name = "on-device"
        card.onnx = True
        card.weights_dtype = f"int8 {scale} dynamically quantised"
        card.evaluation_notes = [
            f"The shipped int8 ONNX graph through the pipeline's ONNX Runtime backend, at batch size "
            f"{args.batch_size}; words/s on the hardware the export ran on (`OnDeviceRestorer` gives the same labels)."
        ]
    else:
        card.model_name = f"hf_punctcase {args.model}"
        if args.model == "default":
            card.embedded_default = True
        else:
            card.embedded_name = args.model
        card.weights_dtype = INT8_WEIGHTS if args.storage == "int8" else "fp16"
        # What the pipeline's defaults ran here (hf_punctcase.loading.plan_execution): the OpenVINO graph, or the int8 graph.
        plan = getattr(restorer, "execution_plan", None)
        ran = f" ({plan.runtime}, {plan.precision}, on the CPU the export ran on)" if plan is not None else ""
        card.evaluation_notes = [
            f"The shipped {card.weights_dtype} weights through the pipeline's defaults{ran}, at batch size "
            f"{args.batch_size}; words/s on the hardware the export ran on. The defaults are the OpenVINO graph in bf16 "
            "on x86 CPUs with bf16 matrix instructions and the int8 ONNX Runtime graph on the others "
            "(`hf_punctcase.loading.plan_execution()`)."
        ]
    if args.recipe_command:
        card.recipe_command = args.recipe_command
    card.notes = [
        licence_note(card.datasets),
        "The recipes' ablations (encoders and depth, MLM adaptation, two-stage finetuning, case conditioning, "
        "distillation, window widths) are in the project's docs/research/experiments.md"
        + (" and docs/on_device.md." if on_device else "."),
    ]
    if DISFLUENCY in restorer.model_tasks:
        calls = load_punct_case_dataset("switchboard_disfluency", root, max_words=10_000, splits=["validation", "test"])
        figures = {
            f"{split} ({len(set(calls[split]['doc_id']))} calls)": evaluate_disfluency(restorer, calls[split], args.batch_size)
            for split in ("validation", "test")
        }
        (args.checkpoint / "disfluency_evaluation.json").write_text(json.dumps(figures, indent=2))
        card.extra_sections["Disfluency"] = (
            "`p(text, remove_disfluencies=True)` leaves out the words the disfluency head marks (fillers, "
            "discourse markers, edit terms, the first copy of a repeated or restarted stretch) and punctuates "
            "and cases the words kept; every word entry carries `disfluent` and `disfluency_score`. A word is "
            f"marked where its score exceeds {DISFLUENCY.threshold_in(restorer.model.config):g} (the config's "
            "`disfluency_threshold`, 0.5 where it sets none). On the "
            "annotated Switchboard calls held out from training (Meteer markup; words the head marks against "
            f"the annotation; `python benchmarks/disfluency_eval.py --model {args.model}`):\n\n"
            + disfluency_table(figures)
            + (f"\n\n{args.disfluency_note.read_text().strip()}" if args.disfluency_note else "")
        )
    if args.dictation_table:
        card.extra_sections["Spoken punctuation and paragraphs"] = args.dictation_table.read_text()
    if args.speed_table:
        card.extra_sections["Speed"] = args.speed_table.read_text()
    if args.ablation_table:
        card.extra_sections["Ablations (dev)"] = args.ablation_table.read_text()
    text = render_model_card(card)
    if export_info is not None:
        # what the ONNX graph is and how far it agrees with torch; its source is the checkpoint the card describes
        text = export_card(text, {**export_info, "source": "the checkpoint this card describes"})
    card_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(card_path, text)
    atomic_write_text(target / "README.md", text)  # the card travels with the package and any push
    print(f"wrote {target} ({size:.1f} MB) and {card_path}")


if __name__ == "__main__":
    main()
