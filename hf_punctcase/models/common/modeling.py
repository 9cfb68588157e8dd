"""Model pieces every family shares: the output with one ``<task>_logits`` field per head, the joint loss,
and the mixin that writes the remote-code bundle next to a saved checkpoint."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn
from transformers.utils import ModelOutput

from ...labels import IGNORE_INDEX
from ...tasks import PUNCTUATION, TASKS, tasks_of


@dataclass
class JointTokenClassifierOutput(ModelOutput):
    """Output of every model family ([`JointTokenClassificationModel`], [`CnnBiLstmForJointTokenClassification`]).

    Args:
        loss (`torch.FloatTensor` of shape `()`, *optional*):
            α·CE(punctuation) + γ·CE(casing) (+ β·CE(disfluency), + each head task's weighted
            cross-entropy), returned when labels are given (:func:`joint_loss`).
        logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            The punctuation logits again, under the name that transformers' token-classification
            pipeline and the Hub widget read (with the config's `id2label`).
        punct_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            Punctuation scores before softmax.
        case_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_case_labels)`):
            Casing scores before softmax.
        disfl_logits (`torch.FloatTensor` of shape `(batch, seq_len, 2)`, *optional*):
            FLUENT / DISFLUENT scores before softmax, when the model has the disfluency head. A head
            task registered with :func:`hf_punctcase.tasks.register_task` adds its own
            ``<task>_logits`` after the fields listed here.
        hidden_states (`tuple(torch.FloatTensor)`, *optional*):
            The encoder's hidden states, when `output_hidden_states=True`.
        attentions (`tuple(torch.FloatTensor)`, *optional*):
            The encoder's attention weights, when `output_attentions=True`.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    punct_logits: torch.FloatTensor | None = None
    case_logits: torch.FloatTensor | None = None
    disfl_logits: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None


def _masked_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor | None = None, label_smoothing: float = 0.0
) -> torch.Tensor:
    """Mean cross-entropy over labelled positions; 0 (with a gradient path) when none is labelled.

    A batch can hold no casing label at all (lowercase sources mark casing as ignored), where plain
    ``CrossEntropyLoss`` would return NaN.
    """
    flat_labels = labels.reshape(-1)
    if not (flat_labels != IGNORE_INDEX).any():
        return logits.sum() * 0.0
    return nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        flat_labels,
        weight=weight,
        ignore_index=IGNORE_INDEX,
        label_smoothing=label_smoothing,
    )


def joint_loss(
    config, logits: Mapping[str, torch.Tensor | None], labels: Mapping[str, torch.Tensor | None]
) -> torch.Tensor | None:
    """The loss of every model family: the sum over the model's tasks (:func:`hf_punctcase.tasks.tasks_of`)
    of each task's cross-entropy over its labelled positions (each term only where its labels are
    given; None without labels), weighted by the config's ``<loss_weight_field>`` (α = ``punct_loss_weight``,
    γ = ``case_loss_weight``, β = ``disfluency_loss_weight``; 1 where the config has none), with
    ``punct_class_weights`` (any task's ``<name>_class_weights``) and ``label_smoothing``.
    ``logits`` and ``labels`` are by task name."""
    given = {name: value for name, value in labels.items() if value is not None}
    if not given:
        return None
    tasks = tasks_of(config)
    for name in given:
        if name not in {task.name for task in tasks}:
            task = TASKS[name]
            raise ValueError(f"{task.label_field} were given, but the model has no {task.title} head (config.{task.config_field})")
    loss = next(iter(logits.values())).new_zeros(())
    for task in tasks:
        if task.name not in given:
            continue
        weight = getattr(config, task.loss_weight_field, 1.0) if task.loss_weight_field else 1.0
        class_weights = getattr(config, f"{task.name}_class_weights", None)
        class_weights = torch.tensor(class_weights, device=logits[task.name].device) if class_weights else None
        loss = loss + weight * _masked_cross_entropy(logits[task.name], given[task.name], class_weights, config.label_smoothing)
    return loss


def joint_output(
    loss: torch.Tensor | None,
    logits: Mapping[str, torch.Tensor],
    hidden_states: tuple[torch.Tensor, ...] | None = None,
    attentions: tuple[torch.Tensor, ...] | None = None,
) -> JointTokenClassifierOutput:
    """The output of every model family from its logits by task name: one ``<task>_logits`` field per
    head (a head task registered outside the package gets a field after the declared ones), and
    ``logits`` the punctuation logits again."""
    declared = {field.name for field in dataclasses.fields(JointTokenClassifierOutput)}
    fields = {TASKS[name].logits_field: value for name, value in logits.items()}
    output = JointTokenClassifierOutput(
        loss=loss,
        logits=logits[PUNCTUATION.name],
        hidden_states=hidden_states,
        attentions=attentions,
        **{name: value for name, value in fields.items() if name in declared},
    )
    for name, value in fields.items():
        if name not in declared:
            output[name] = value
    return output


def task_labels_from(kwargs: dict) -> dict[str, torch.Tensor | None]:
    """The head tasks' label tensors a ``forward`` received as keyword arguments (``<task>_labels`` of
    every registered head task: :func:`joint_loss` refuses those of a head the model lacks), taken
    out of ``kwargs``, by task name."""
    return {task.name: kwargs.pop(task.label_field) for task in TASKS.values() if task.label_field in kwargs and not task.required}


class SavesRemoteCode:
    """Mixin of every model family: ``save_pretrained`` also writes the code that loads the checkpoint
    without the plugin (trust_remote_code=True). The plugin sets ``remote_code_exporter``
    (hf_punctcase.export.remote_code) on each family's classes; inside that exported code it is None,
    and transformers copies the (flat) files itself."""

    remote_code_exporter: ClassVar = None
    #: The checkpoint this model was loaded from where the plugin's execution plan then cast it to the
    #: precision it runs in on this CPU (bf16 where the CPU has bf16 units), else None: saving such a
    #: model writes that checkpoint's weights in fp32, as saving a graph the plan picked does, so that
    #: what is saved does not depend on the CPU.
    planned_from: str | os.PathLike | None = None

    def save_pretrained(self, save_directory: str | os.PathLike, *args, **kwargs):
        if self.planned_from is not None:
            checkpoint = type(self).from_pretrained(self.planned_from, dtype=torch.float32)
            return checkpoint.save_pretrained(save_directory, *args, **kwargs)
        exporter = type(self).remote_code_exporter
        if exporter is not None:
            exporter.prepare_config(self)
        super().save_pretrained(save_directory, *args, **kwargs)
        if exporter is not None and kwargs.get("is_main_process", True):
            exporter.write_files(save_directory, self)


__all__ = ["JointTokenClassifierOutput", "SavesRemoteCode", "joint_loss", "joint_output", "task_labels_from"]


# ---- weights stored as int8 (hf-punctcase quantize), read without torchao ---------------------------
#: The tensor types of torchao's safetensors layout that :func:`int8_stored_state_dict` reads: plain
#: tensors and torchao's ``Int8Tensor`` (int8 data, a scale and a zero point per block).
_PLAIN, _INT8 = "Tensor", "Int8Tensor"


def _stored_weight_files(folder: str | os.PathLike) -> list[str]:
    import json

    single = os.path.join(folder, "model.safetensors")
    if os.path.isfile(single):
        return [single]
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as handle:
            return [os.path.join(folder, name) for name in sorted(set(json.load(handle)["weight_map"].values()))]
    return []


def is_torchao_int8_stored(folder: str | os.PathLike) -> bool:
    """Whether a local checkpoint folder's config.json says its weights are stored through torchao
    (``quantization_config.quant_method == "torchao"``: what ``hf-punctcase quantize`` writes)."""
    import json

    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    quantization = config.get("quantization_config") if isinstance(config, dict) else None
    return isinstance(quantization, dict) and quantization.get("quant_method") == "torchao"


def dequantize_blocks(
    qdata: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor | None, block_size, dtype: torch.dtype
) -> torch.Tensor:
    """int8 data back to floats as torchao's ``dequantize_affine`` computes it, to the bit: in ``dtype``,
    ``(qdata - zero_point) * scale`` with one scale (and zero point) per block of ``block_size``."""
    if len(block_size) != qdata.dim() or any(qdata.shape[i] % size for i, size in enumerate(block_size)):
        raise ValueError(f"int8 weights of shape {tuple(qdata.shape)} cannot have blocks of {list(block_size)}")
    # Each dimension split into (blocks, block): the scales broadcast over the block parts.
    split = [part for i, size in enumerate(block_size) for part in (qdata.shape[i] // size, size)]
    grouped = [part if j % 2 == 0 else 1 for j, part in enumerate(split)]
    values = qdata.reshape(split).to(dtype, copy=True)
    if zero_point is not None:
        values = values - zero_point.reshape(grouped).to(dtype)
    values = values * scale.reshape(grouped)
    return values.reshape(qdata.shape).to(dtype)


def int8_stored_state_dict(folder: str | os.PathLike) -> dict[str, torch.Tensor]:
    """The state dict of a checkpoint whose weights torchao stored (:func:`is_torchao_int8_stored`),
    each int8 weight dequantized to the dtype it was stored from (fp32): what loading it through
    transformers' torchao integration and dequantizing gives, read with safetensors alone, so that an
    int8-stored checkpoint loads where torchao is not installed. Raises ``ValueError`` for a tensor
    type other than a plain tensor or torchao's Int8Tensor."""
    import json

    from safetensors import safe_open

    files = _stored_weight_files(folder)
    if not files:
        raise FileNotFoundError(f"model path {folder} has no safetensors weights")
    state: dict[str, torch.Tensor] = {}
    for file in files:
        with safe_open(file, framework="pt") as weights:
            metadata = weights.metadata() or {}
            present = set(weights.keys())
            # torchao's layout: each tensor's name in the metadata, with its type; a subclass tensor is
            # stored as its parts, "<module>._<attribute>_<part>". A shard's metadata may name tensors
            # that another shard holds.
            names = json.loads(metadata["tensor_names"]) if "tensor_names" in metadata else sorted(present)
            for name in names:
                layout = json.loads(metadata.get(name, '{"_type": "Tensor"}'))
                kind = layout.get("_type")
                module, _, attribute = name.rpartition(".")
                if kind == _PLAIN:
                    if name in present:
                        state[name] = weights.get_tensor(name)
                    continue
                if kind != _INT8:
                    raise ValueError(f"{file}: {name} is stored as {kind}, which only torchao reads")
                keys = {data: f"{module}._{attribute}_{data}" for data in layout["_tensor_data_names"]}
                if not set(keys.values()) <= present:
                    continue
                part = {data: weights.get_tensor(key) for data, key in keys.items()}
                options = layout["_data"]
                dtype = getattr(torch, options["dtype"]["_data"])
                state[name] = dequantize_blocks(part["qdata"], part["scale"], part.get("zero_point"), options["block_size"], dtype)
    return state
