"""The commands that write something made from a checkpoint: ``card`` (its model card), ``quantize``
(a copy with int8 weights) and ``export-onnx`` (an ONNX graph for ONNX Runtime)."""

from __future__ import annotations

import argparse
import os

from .common import checkpoint_folder, output_stream, print_error, print_result


def card(args) -> int:
    from ..cards.checkpoint import card_for_checkpoint

    try:
        folder = checkpoint_folder(args.path)
    except (FileNotFoundError, OSError, ValueError) as error:
        return print_error(error)
    text = card_for_checkpoint(folder, training_machine=args.training_machine, repo_id=args.repo_id)
    target = args.output or str(folder / "README.md")
    # Only a file would be lost: a FIFO or a device (/dev/null) is written into.
    if target != "-" and os.path.isfile(target) and not args.force:
        return print_error(f"{target} exists (a published card?); use --force or -o")
    with output_stream(target) as out:
        out.write(text)
    if target != "-":
        print_result(f"wrote {target}")
    return 0


def quantize(args) -> int:
    from transformers.utils import logging as transformers_logging

    from ..quantization import quantize_checkpoint, weights_size

    transformers_logging.disable_progress_bar()  # the result is one line; loading bars would only add noise
    if os.path.lexists(args.output) and not args.overwrite:
        return print_error(f"output {args.output} exists; pass --overwrite to replace it")
    try:
        source_size = weights_size(checkpoint_folder(args.path))
        target = quantize_checkpoint(args.path, args.output, overwrite=args.overwrite)
    except (OSError, ValueError, ImportError) as error:  # FileNotFoundError, FileExistsError, CheckpointError
        return print_error(error)
    print_result(f"wrote {target}: weights {weights_size(target) / 1e6:.1f} MB (int8), from {source_size / 1e6:.1f} MB")
    return 0


def export_onnx(args) -> int:
    from transformers.utils import logging as transformers_logging

    from ..export.cache import keeps_float
    from ..export.onnx import export_onnx as export

    transformers_logging.disable_progress_bar()  # the result is two lines; loading bars would only add noise
    texts = None
    if args.parity_file:
        try:
            with open(args.parity_file, encoding="utf-8") as handle:
                texts = [line.strip() for line in handle if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            return print_error(f"parity file {args.parity_file} cannot be read ({getattr(error, 'strerror', None) or error})")
        if not texts:
            return print_error(f"parity file {args.parity_file} holds no transcript")
    try:
        folder = checkpoint_folder(args.path)
        result = export(
            folder, args.output, int8="per_token" if args.per_token else args.int8, per_channel=args.per_channel,
            weight_type=args.weight_type, keep_float=keeps_float if args.per_token else None,
            parity_texts=texts, overwrite=args.overwrite,
        )
    except (OSError, ValueError, ImportError, RuntimeError) as error:  # FileNotFoundError, FileExistsError, CheckpointError
        return print_error(error)
    info, parity = result.info, result.parity
    precision = (
        "int8, per-token activation scales" if args.per_token
        else f"{args.weight_type} weights, per {'channel' if args.per_channel else 'tensor'}" if args.int8 else "fp32"
    )
    print_result(
        f"wrote {result.path}: model.onnx {info['size_bytes'] / 1e6:.1f} MB ({precision}), from {args.path}",
        f"agreement with the torch model on {parity['words']} words of {parity['texts']} transcripts: punctuation "
        f"{100 * parity['punct_agreement']:.1f}%, casing {100 * parity['case_agreement']:.1f}%, "
        f"{parity['identical_texts']}/{parity['texts']} texts identical, largest probability difference "
        f"{parity['max_probability_difference']:.2g}"
    )
    return 0


def check_export_onnx(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Option combinations ``export-onnx`` refuses exit through ``parser``."""
    if args.per_channel and not args.int8:
        parser.error("--per-channel applies to --int8 export only")
    if args.per_token and args.int8:
        parser.error("--per-token and --int8 are two int8 exports: choose one")


def _add_folder_output_arguments(parser: argparse.ArgumentParser) -> None:
    """CHECKPOINT, OUTPUT and --overwrite of the commands that write a checkpoint folder."""
    parser.add_argument("path", metavar="CHECKPOINT", help="checkpoint folder, or 'default' for the embedded model")
    parser.add_argument("output", metavar="OUTPUT", help="the folder to write; must not exist unless --overwrite")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace OUTPUT if it exists (once the new folder is complete)"
    )


def add_parser(commands) -> None:
    """Register ``card``, ``quantize`` and ``export-onnx`` with ``commands`` (the sub-parsers of
    ``hf-punctcase``)."""
    card_parser = commands.add_parser(
        "card",
        help="write a checkpoint's model card",
        description="Generate a model card from a checkpoint and its training_summary.json (figures as recorded).",
    )
    card_parser.add_argument("path", help="checkpoint folder, or 'default'")
    card_parser.add_argument("-o", "--output", help="where to write (default PATH/README.md; '-' for stdout)")
    card_parser.add_argument("--repo-id", help="the Hub repo the card will live in (for its usage lines)")
    card_parser.add_argument("--training-machine", help="the machine training ran on, if the record lacks it")
    card_parser.add_argument("--force", action="store_true", help="overwrite an existing card")
    card_parser.set_defaults(handler=card)
    quantize_parser = commands.add_parser(
        "quantize",
        help="store a checkpoint's weights as int8 (about half the size of fp16)",
        description=(
            "Write CHECKPOINT to OUTPUT with its encoder's Linear and Embedding weights stored as int8, one scale "
            "per row (torchao weight-only). OUTPUT loads like any checkpoint, computing in bf16 or fp32. It is "
            "written next to its place and renamed there only when complete."
        ),
    )
    _add_folder_output_arguments(quantize_parser)
    quantize_parser.set_defaults(handler=quantize)
    onnx_parser = commands.add_parser(
        "export-onnx",
        help="export a checkpoint to ONNX (fp32 or int8) for ONNX Runtime",
        description=(
            "Write CHECKPOINT (either model family) to OUTPUT as an ONNX graph (model.onnx; inputs input_ids and "
            "attention_mask, one <task>_logits output per head) with its config, tokenizer and card. "
            "pipeline(\"punct-case\", model=OUTPUT) runs it with ONNX Runtime, and so does hf_punctcase.runtime "
            "without torch. The export restores a few transcripts with the torch and the ONNX model and prints how "
            "far their labels agree. OUTPUT is written next to its place and renamed there only when complete."
        ),
    )
    _add_folder_output_arguments(onnx_parser)
    onnx_parser.add_argument(
        "--int8", action="store_true", help="quantize the graph's weights to int8 (ONNX Runtime dynamic quantization)"
    )
    onnx_parser.add_argument(
        "--per-channel", action="store_true", help="with --int8: one scale per output channel instead of per tensor"
    )
    onnx_parser.add_argument(
        "--per-token", action="store_true",
        help="int8 matrix products with one activation scale per token and per-channel weights (feed-forward "
        "outputs and heads in fp32), as the default runs on CPUs without AMX or avx512_bf16: within 0.3 dev F1 of fp32, "
        "independent of the batch",
    )
    onnx_parser.add_argument(
        "--weight-type", choices=("uint8", "int8"), default="uint8",
        help="with --int8: uint8 (symmetric, exact on every x86 CPU; default) or int8 (faster on CPUs with VNNI, "
        "saturates on x86 CPUs without it)",
    )
    onnx_parser.add_argument(
        "--parity-file", metavar="FILE",
        help="transcripts (one a line) to compare the torch and ONNX models on (default: a few built-in ones)",
    )
    onnx_parser.set_defaults(handler=export_onnx, check=check_export_onnx)
