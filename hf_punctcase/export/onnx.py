"""ONNX export of a checkpoint of any model family, and its agreement with the torch model.

    from hf_punctcase.export.onnx import export_onnx

    export = export_onnx("runs/mine/final", "exports/mine-int8", int8=True)
    export.parity     # {"words": ..., "punct_agreement": 1.0, "case_agreement": 0.998, ...}

The folder it writes (one model a folder, whatever its precision):

    model.onnx          the graph: inputs input_ids, attention_mask (int64, batch × sequence, both
                        axes dynamic); outputs one <task>_logits per head (punct_logits, case_logits).
                        fp32, or int8 with int8=True (dynamic quantisation by ONNX Runtime)
    config.json         the checkpoint's config (labels, MIXED-case lexicon, limits)
    tokenizer files     the checkpoint's tokenizer (tokenizer.json, tokenizer_config.json)
    onnx_export.json    what the export did: precision, quantisation, opset, inputs and outputs, the
                        window limit the runtime needs, the agreement with the torch model
    README.md           the checkpoint's card with a section on the export

``pipeline("punct-case", model=folder)`` runs such a folder with ONNX Runtime (the registry tells it
by ``model.onnx`` without torch weights), and so does :class:`hf_punctcase.runtime.OnDeviceRestorer`
without torch. The folder is built beside its place and renamed there only when complete
(:func:`hf_punctcase.atomic_files.atomic_directory`).

The graph is written by :mod:`hf_punctcase.export.onnx_graph`; this module loads the checkpoint,
measures the export's agreement with the torch model and writes its card.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic_files import atomic_directory
from ..backends.onnxruntime import EXPORT_INFO_FILE, ONNX_MODEL_FILE
from .onnx_graph import DEFAULT_OPSET, INT8_OP_TYPES, WEIGHT_TYPES, check_export_options, write_export

#: Transcripts the export compares the torch and ONNX models on when none are given: ASR-like text of
#: several registers (conversation, questions, numbers, names, a long run-on), lowercase without marks.
PARITY_TEXTS = (
    "so what are the risks i am not technical",
    "hello how are you doing today i hope you are well",
    "the doctor asked whether the patient had any pain in her chest or any fever yesterday",
    "we think that this is a good idea but you know it was really hard to say and then they went home",
    "nobody could tell me how much it costs so i called nasa and they said it was about 3.5 million dollars",
    "do you want to meet on monday or would tuesday be better for you",
    "i bought a new iphone last week and honestly i do not like it very much",
    "okay so the first thing we need to do is look at the numbers from last year then we can compare "
    "them with this year and see whether the plan worked or not and if it did not we have to decide "
    "what to change before the next meeting which is in two weeks",
)


@dataclass
class OnnxExport:
    """The result of :func:`export_onnx`: the folder written and what ``onnx_export.json`` records."""

    path: Path
    info: dict = field(default_factory=dict)

    @property
    def parity(self) -> dict:
        """Agreement of the ONNX model with the torch model (:func:`label_agreement`)."""
        return self.info.get("parity", {})


def label_agreement(reference: Callable, candidate: Callable, texts: Sequence[str]) -> dict:
    """How far two restorers agree on ``texts``: each is called as ``restorer(list_of_texts,
    return_probabilities=True)`` (the ``punct-case`` pipeline, :class:`~hf_punctcase.runtime.OnDeviceRestorer`).

    Returns ``{"texts", "words", "punct_agreement", "case_agreement", "identical_texts",
    "max_probability_difference"}``: the share of words with the same punctuation label and the same
    casing label, the number of transcripts restored to the same text, and the largest difference
    between the two models' per-word probabilities."""
    texts = list(texts)
    if not texts:
        raise ValueError("label_agreement needs at least one text")
    expected = reference(texts, return_probabilities=True)
    given = candidate(texts, return_probabilities=True)
    words = punct_same = case_same = identical = 0
    largest = 0.0
    for left, right in zip(expected, given):
        identical += left["text"] == right["text"]
        for a, b in zip(left["words"], right["words"]):
            words += 1
            punct_same += a["punctuation"] == b["punctuation"]
            case_same += a["casing"] == b["casing"]
        for task, probs in left["probabilities"].items():
            if len(probs):
                largest = max(largest, float(abs(probs - right["probabilities"][task]).max()))
    return {
        "texts": len(texts),
        "words": words,
        "punct_agreement": punct_same / words if words else 1.0,
        "case_agreement": case_same / words if words else 1.0,
        "identical_texts": identical,
        "max_probability_difference": largest,
    }


def _source_name(checkpoint: str, folder: str) -> str:
    """How the card and the record name the checkpoint: the embedded default, a Hub id, or a local
    folder's name (a record must not carry a machine's paths)."""
    from ..embedded import EMBEDDED_MODELS

    path = Path(folder)
    if path.is_dir():
        for name, embedded in EMBEDDED_MODELS.items():
            if path.resolve() == embedded.resolve():
                return f"the embedded {name} model of hf_punctcase"
        return path.parent.name if path.name == "final" else path.name
    return str(checkpoint)


def export_card(source_card: str | None, info: dict) -> str:
    """The README.md of an export: the checkpoint's card (when it has one) and a section on the export."""
    parity = info.get("parity") or {}
    quantization = info.get("quantization")
    precision = (
        (
            "int8 matrix products (weights per channel, activations per token)"
            if quantization["method"] == "per-token int8" else
            f"int8 weights ({'per channel' if quantization['per_channel'] else 'per tensor'}, dynamic quantisation)"
        )
        if quantization else "fp32"
    )
    lines = [
        "## ONNX export",
        "",
        f"This folder holds the model as an ONNX graph (`{ONNX_MODEL_FILE}`, {precision}, "
        f"{info['size_bytes'] / 1e6:.1f} MB), exported from {info['source']} with `hf-punctcase export-onnx` "
        f"(opset {info['opset']}; inputs {', '.join(f'`{n}`' for n in info['inputs'])}; outputs "
        f"{', '.join(f'`{n}`' for n in info['outputs'])}). It runs without torch:",
        "",
        "```python",
        "from hf_punctcase.runtime import OnDeviceRestorer   # onnxruntime, tokenizers and numpy only",
        "restore = OnDeviceRestorer(\"path/to/this/folder\")",
        "restore(\"so what are the risks i am not technical\")[\"text\"]",
        "```",
        "",
        "and through the plugin's pipeline: `pipeline(\"punct-case\", model=\"path/to/this/folder\")`.",
    ]
    if parity:
        lines += [
            "",
            f"Agreement with the torch model it was exported from, on {parity['words']} words of {parity['texts']} "
            f"transcripts: punctuation labels {100 * parity['punct_agreement']:.1f}%, casing labels "
            f"{100 * parity['case_agreement']:.1f}%, {parity['identical_texts']}/{parity['texts']} transcripts "
            f"restored to the same text; largest difference of a probability "
            f"{parity['max_probability_difference']:.2g}.",
        ]
    section = "\n".join(lines) + "\n"
    if source_card:
        return source_card.rstrip("\n") + "\n\n" + section
    return f"# {info['source']} (ONNX)\n\nPunctuation and truecasing restoration for ASR transcripts.\n\n" + section


def export_onnx(
    checkpoint: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    int8: bool | str = False,
    per_channel: bool = False,
    weight_type: str = "uint8",
    keep_float: Callable[[str], bool] | None = None,
    parity_texts: Sequence[str] | None = None,
    opset: int = DEFAULT_OPSET,
    overwrite: bool = False,
) -> OnnxExport:
    """Export a checkpoint of either family to ONNX in ``out_dir`` and measure its agreement with the
    torch model.

    ``checkpoint`` is a checkpoint folder, ``"default"`` (the embedded model) or a Hub id. The graph is
    traced in fp32 (:func:`write_onnx`); with ``int8`` it is quantised (:func:`quantize_int8`,
    ``per_channel`` for a scale per output channel, ``weight_type`` one of :data:`WEIGHT_TYPES`);
    ``int8="per_token"`` rewrites the matrix products as int8 products with one activation scale per
    token (:func:`~hf_punctcase.export.per_token.quantize_per_token`, the MatMuls that ``keep_float``
    names left in fp32), whose outputs do not depend on the batch. Either way
    ``model.onnx`` holds the int8 graph. An int8-stored checkpoint is exported from its dequantized
    weights, which per-channel int8 export stores on the same grid again. Then the
    ``punct-case`` pipeline restores ``parity_texts`` (default :data:`PARITY_TEXTS`) with the torch
    model and with the ONNX one (:func:`label_agreement`); the result is in ``onnx_export.json`` and
    the card. ``out_dir`` is written whole or not at all; an existing one raises ``FileExistsError``
    unless ``overwrite`` (then it is replaced once the new folder is complete).
    """
    import torch
    from transformers import AutoTokenizer, pipeline

    from ..auto import AutoModelForJointTokenClassification
    from ..checkpoints import resolve
    from ..pipelines import PIPELINE_TASK
    from ..backends.onnxruntime import import_onnxruntime

    check_export_options(int8, per_channel, weight_type)  # before any work
    import_onnxruntime()  # fail before any work when ONNX Runtime is missing
    resolved = resolve(checkpoint)
    folder = resolved.location
    out_dir = Path(out_dir).expanduser()
    if Path(folder).is_dir() and out_dir.resolve() == Path(folder).resolve():
        raise ValueError(f"output {out_dir} is the checkpoint itself; write to another folder")
    if (out_dir.exists() or out_dir.is_symlink()) and not overwrite:
        raise FileExistsError(f"output {out_dir} exists; pass --overwrite (overwrite=True) to replace it")
    # An int8-stored checkpoint (the embedded default among them) loads dequantized, as fp32 parameters.
    model = AutoModelForJointTokenClassification.from_pretrained(folder, dtype=torch.float32, trust_remote_code=False).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    source_card = (Path(folder) / "README.md").read_text(encoding="utf-8") if (Path(folder) / "README.md").is_file() else None
    with atomic_directory(out_dir, overwrite=overwrite) as staging:
        info = write_export(
            model, tokenizer, staging, source=_source_name(resolved.location, folder), int8=int8,
            per_channel=per_channel, weight_type=weight_type, keep_float=keep_float, opset=opset,
        )
        reference = pipeline(PIPELINE_TASK, model=model, tokenizer=tokenizer, device="cpu")
        exported = pipeline(PIPELINE_TASK, model=str(staging), trust_remote_code=False)
        info["parity"] = label_agreement(reference, exported, parity_texts or PARITY_TEXTS)
        (staging / EXPORT_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(export_card(source_card, info), encoding="utf-8")
    return OnnxExport(out_dir, info)


__all__ = ["DEFAULT_OPSET", "INT8_OP_TYPES", "OnnxExport", "PARITY_TEXTS", "WEIGHT_TYPES", "export_card", "export_onnx", "label_agreement"]
