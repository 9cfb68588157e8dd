"""Joint punctuation + truecasing token classifier (Sunkara et al. 2020).

    h = encoder(subwords)                                (first k layers of a pretrained encoder)
    p̂ = softmax(W_p h + b_p)                              punctuation after the word
    ĉ = softmax(W_c [p̂ ; h] + b_c)                        casing, conditioned on punctuation
    loss = α · CE(p̂) + CE(ĉ)            (optionally class-weighted / label-smoothed)

With an optional disfluency head (Lin & Wang 2020), d = W_d h + b_d, and the heads may read each
other (``head_dependency``): "punct_to_disfl" refines d by attending over the transformed punctuation
probabilities, k_i = tanh(W_k p̂_i + b_k), f_j = Σ_i softmax_i(k_iᵀ d_j) k_i, d'_j = W_o [f_j ; d_j] + b_o;
"disfl_to_punct" is the mirror. loss += β · CE(d).

With ``command_branch_layers`` = n, the spoken-command head reads a branch of its own: copies of the
encoder's last n layers, fed what the first of them is fed, so that the command task trains layers
while every other head reads the shared encoder unchanged.

Only the first subword of each word carries labels; the others are -100 and ignored.
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Collection
from contextlib import contextmanager

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PreTrainedModel

from ...tasks import CASING, PUNCTUATION, head_tasks
from ..common.modeling import (
    JointTokenClassifierOutput,
    SavesRemoteCode,
    int8_stored_state_dict,
    is_torchao_int8_stored,
    joint_loss,
    joint_output,
    task_labels_from,
)
from .configuration import JointTokenClassificationConfig

# The head tasks that layers of this architecture serve, by name: the spoken-command head's own encoder
# layers (``command_branch_layers``) and the attention between the disfluency and punctuation heads
# (``head_dependency``). By name, so that the model code imports no option module: a checkpoint without
# those heads carries no code of theirs (hf_punctcase.options declares the tasks).
COMMAND_TASK = "command"
DISFLUENCY_TASK = "disfl"


@torch.no_grad()
def pass_through(layer: nn.Linear) -> None:
    """Set a layer reading ``[f ; q]`` to return ``q``: zero on ``f``, the identity on ``q``, no bias."""
    size = layer.out_features
    layer.weight.zero_()
    layer.weight[:, -size:].copy_(torch.eye(size, dtype=layer.weight.dtype))
    layer.bias.zero_()


class HeadAttention(nn.Module):
    """One task head reading another (Lin & Wang 2020): the other head's probabilities, transformed to
    this head's size (k_i = tanh(W_k p_i + b_k)), are the keys and values; this head's logits are the
    queries; the attended vector and the logits go through a final layer, W_o [f_j ; q_j] + b_o.

    The final layer starts as the identity on the logits (the model starts as with independent heads),
    so that a head added to a trained checkpoint does not start from noise."""

    def __init__(self, source_size: int, target_size: int):
        super().__init__()
        self.key = nn.Linear(source_size, target_size)
        self.output = nn.Linear(2 * target_size, target_size)
        self.output.starts_as_pass_through = True  # read by the model's weight initialisation
        pass_through(self.output)

    def forward(self, source_probs: torch.Tensor, logits: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
        keys = torch.tanh(self.key(source_probs.to(self.key.weight.dtype)))  # (batch, positions, target)
        scores = torch.matmul(logits, keys.transpose(1, 2)).float()  # (batch, queries, keys)
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask[:, None, :] == 0, torch.finfo(scores.dtype).min)
        attended = torch.matmul(scores.softmax(dim=-1).to(keys.dtype), keys)
        return self.output(torch.cat([attended, logits], dim=-1))


class JointTokenClassificationPreTrainedModel(SavesRemoteCode, PreTrainedModel):
    config_class = JointTokenClassificationConfig
    base_model_prefix = "encoder"
    supports_gradient_checkpointing = True
    _supports_sdpa = True

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """transformers' loading; weights a checkpoint stores as int8 (``hf-punctcase quantize``) are turned
        back into plain parameters of the dtype the model is loaded in, so that it computes as a float
        model. A ``quantization_config`` the caller passes is kept (that is how int8 storage is written)."""
        wants_info = kwargs.pop("output_loading_info", False)
        folder = args[0] if args else kwargs.get("pretrained_model_name_or_path")
        if (
            kwargs.get("quantization_config") is None
            and isinstance(folder, (str, os.PathLike))
            and os.path.isdir(folder)
            and is_torchao_int8_stored(folder)
        ):
            # Read and dequantized here, bit for bit as torchao would, so that loading needs no torchao.
            model, info = _from_int8_storage(super().from_pretrained, folder, args[1:], kwargs)
        else:
            model, info = super().from_pretrained(*args, output_loading_info=True, **kwargs)
        if kwargs.get("quantization_config") is None:
            dequantize_stored_weights(model)
        branch = getattr(model, "command_branch", None)
        if branch is not None and any(key.startswith("command_branch.") for key in info["missing_keys"]):
            # A checkpoint without the branch: it starts as the encoder's own top layers.
            model.command_branch = top_layer_copies(model.encoder, len(branch))
            info["missing_keys"] = type(info["missing_keys"])(k for k in info["missing_keys"] if not k.startswith("command_branch."))
        return (model, info) if wants_info else model

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Linear) and not getattr(module, "_is_hf_initialized", False):
            if getattr(module, "starts_as_pass_through", False):
                pass_through(module)
                return
            std = getattr(self.config.encoder, "initializer_range", 0.02)
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)


class JointTokenClassificationModel(JointTokenClassificationPreTrainedModel):
    """Any encoder with a punctuation head and a casing head that reads the punctuation softmax."""

    def __init__(self, config: JointTokenClassificationConfig):
        super().__init__(config)
        self.encoder = _encoder_from_config(config.encoder)
        self.dropout = nn.Dropout(config.classifier_dropout)
        hidden = config.hidden_size
        num_punct = len(config.punct_labels)
        self.punct_classifier = nn.Linear(hidden, num_punct)
        case_input = hidden + num_punct if config.case_conditioning == "punct_probs" else hidden
        self.case_classifier = nn.Linear(case_input, len(config.case_labels))
        # One head per head task the config lists (the disfluency head: disfl_classifier), each reading
        # the encoder.
        self.head_tasks = head_tasks(config)
        for task in self.head_tasks:
            self.add_module(task.classifier, nn.Linear(hidden, len(task.labels_in(config))))
        self.command_branch = None
        if getattr(config, "command_branch_layers", 0):
            self.command_branch = top_layer_copies(self.encoder, config.command_branch_layers)
        self.head_attention = None
        if config.head_dependency == "punct_to_disfl":
            self.head_attention = HeadAttention(num_punct, len(config.disfluency_labels))
        elif config.head_dependency == "disfl_to_punct":
            self.head_attention = HeadAttention(len(config.disfluency_labels), num_punct)
        self.post_init()

    @classmethod
    def from_encoder(
        cls,
        encoder_name_or_path: str | os.PathLike,
        num_encoder_layers: int | None = None,
        **config_kwargs,
    ) -> JointTokenClassificationModel:
        """Build the model on a pretrained encoder, keeping its first ``num_encoder_layers`` layers.

        The heads are freshly initialised; ``config_kwargs`` go to
        [`JointTokenClassificationConfig`] (labels, `case_conditioning`, `punct_loss_weight`, ...).
        """
        encoder_config = truncated_encoder_config(encoder_name_or_path, num_encoder_layers)
        config = JointTokenClassificationConfig(
            encoder=encoder_config, num_encoder_layers=num_encoder_layers, **config_kwargs
        )
        model = cls(config)
        # Loading with a smaller num_hidden_layers keeps exactly the first k pretrained layers.
        model.encoder = _encoder_from_pretrained(encoder_name_or_path, encoder_config)
        if model.command_branch is not None:
            model.command_branch = top_layer_copies(model.encoder, config.command_branch_layers)
        return model

    def get_input_embeddings(self) -> nn.Module:
        """The encoder's token embeddings (transformers' resizing and quantization find them here)."""
        return self.encoder.get_input_embeddings()

    def set_input_embeddings(self, value: nn.Module) -> None:
        self.encoder.set_input_embeddings(value)

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.LongTensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        punct_labels: torch.LongTensor | None = None,
        case_labels: torch.LongTensor | None = None,
        output_hidden_states: bool | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        tasks: Collection[str] | None = None,
        **kwargs,
    ) -> JointTokenClassifierOutput | tuple:
        r"""
        Args:
            input_ids, attention_mask, token_type_ids: the encoder's inputs.
            punct_labels (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*):
                Punctuation label ids on the first subword of each word, -100 elsewhere.
            case_labels (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*):
                Casing label ids likewise; -100 where a source has no casing.
            disfl_labels (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*, keyword only):
                FLUENT / DISFLUENT label ids likewise (models with the disfluency head); each head task
                takes its `<task>_labels` likewise. Not named arguments, so that the Trainer's default
                `label_names` (every `*label*` argument of `forward`) stay the two that every batch
                has; to score the heads in the Trainer, give `TrainingArguments(label_names=[task.label_field
                for task in hf_punctcase.tasks.tasks_of(config)])`.
            tasks (`Collection[str]`, *optional*):
                The head tasks to run (default: all): a head left out is not computed, nor the command
                branch for a left-out command head, and its logits are not in the output. Punctuation
                and casing always run.
        """
        labels = {PUNCTUATION.name: punct_labels, CASING.name: case_labels, **task_labels_from(kwargs)}
        if kwargs:
            raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
        left_out = [name for name, value in labels.items() if value is not None and tasks is not None and name not in tasks]
        if any(name not in (PUNCTUATION.name, CASING.name) for name in left_out):
            raise ValueError(f"labels were given for a head left out of tasks={sorted(tasks)}")
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        encoder_kwargs = {}
        if token_type_ids is not None and "token_type_ids" in inspect.signature(self.encoder.forward).parameters:
            encoder_kwargs["token_type_ids"] = token_type_ids
        wanted = [task for task in self.head_tasks if tasks is None or task.name in tasks or _needed_by_punct(self.config, task)]
        with self._branch_input(any(task.name == COMMAND_TASK for task in wanted)) as branch_input:
            encoded = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                output_hidden_states=output_hidden_states,
                output_attentions=output_attentions,
                return_dict=True,
                **encoder_kwargs,
            )
        hidden = self.dropout(encoded.last_hidden_state)
        logits = {PUNCTUATION.name: self.punct_classifier(hidden)}
        for task in wanted:
            reads = self.dropout(self._run_branch(*branch_input)) if task.name == COMMAND_TASK and branch_input else hidden
            logits[task.name] = self.get_submodule(task.classifier)(reads)
        punct, disfl = PUNCTUATION.name, DISFLUENCY_TASK
        if self.config.head_dependency == "punct_to_disfl" and disfl in logits:
            logits[disfl] = self.head_attention(logits[punct].softmax(dim=-1), logits[disfl], attention_mask)
        elif self.config.head_dependency == "disfl_to_punct":
            logits[punct] = self.head_attention(logits[disfl].softmax(dim=-1), logits[punct], attention_mask)
        if self.config.case_conditioning == "punct_probs":
            case_input = torch.cat([logits[punct].softmax(dim=-1), hidden], dim=-1)
        else:
            case_input = hidden
        # The casing head reads the final punctuation; the output lists the tasks in their order.
        logits = {punct: logits[punct], CASING.name: self.case_classifier(case_input), **logits}
        output = joint_output(joint_loss(self.config, logits, labels), logits, encoded.hidden_states, encoded.attentions)
        return output if return_dict else output.to_tuple()

    @contextmanager
    def _branch_input(self, wanted: bool = True):
        """While the encoder runs, what its layer at the branch's start is called with: a list that
        holds ``(args, kwargs)`` afterwards (empty without a command branch, or where it is not ``wanted``)."""
        captured: list = []
        if self.command_branch is None or not wanted:
            yield captured
            return
        start = encoder_layers(self.encoder)[-len(self.command_branch)]
        handle = start.register_forward_pre_hook(lambda _, args, kwargs: captured.extend((args, kwargs)), with_kwargs=True)
        try:
            yield captured
        finally:
            handle.remove()

    def _run_branch(self, args: tuple, kwargs: dict) -> torch.Tensor:
        """The command branch's output for the input its first layer's twin in the encoder was given."""
        hidden, rest = args[0], args[1:]
        if "output_attentions" in kwargs:
            kwargs = {**kwargs, "output_attentions": False}  # the branch's attentions are not returned
        for layer in self.command_branch:
            output = layer(hidden, *rest, **kwargs)
            hidden = output[0] if isinstance(output, tuple) else output
        return hidden


def _needed_by_punct(config, task) -> bool:
    """Whether the punctuation logits read a head task's (the disfluency head's, under
    ``head_dependency="disfl_to_punct"``), so that it runs whatever tasks a call asks for."""
    return task.name == DISFLUENCY_TASK and config.head_dependency == "disfl_to_punct"


def encoder_layers(encoder: nn.Module) -> nn.ModuleList:
    """The encoder's stack of transformer layers (``encoder.layer`` in BERT, RoBERTa, MPNet, DeBERTa
    and the like)."""
    stack = getattr(getattr(encoder, "encoder", None), "layer", None)
    if not isinstance(stack, nn.ModuleList):
        raise ValueError(f"{type(encoder).__name__} has no encoder.layer stack of transformer layers")
    return stack


@torch.no_grad()
def reinitialize_top_layers(encoder: PreTrainedModel, count: int) -> None:
    """Give the encoder's last ``count`` layers new weights, drawn by the encoder's own initialisation
    (its ``_init_weights``: for BERT or MPNet, linear weights normal with its ``initializer_range``,
    biases zero, layer norms the identity). The top layers of an encoder trained for sentence
    embeddings by mean pooling make a segment's tokens alike; a per-word tagger starts better from
    fresh layers than from those."""
    layers = encoder_layers(encoder)
    if not 0 < count < len(layers):
        raise ValueError(f"can re-initialise 1 to {len(layers) - 1} of the encoder's {len(layers)} layers, not {count}")
    for layer in layers[-count:]:
        for parameter in layer.parameters():
            # Loading marks every weight as set, and transformers' initialisation passes over those.
            parameter._is_hf_initialized = False
        layer.apply(encoder._init_weights)


def top_layer_copies(encoder: nn.Module, count: int) -> nn.ModuleList:
    """Copies of the encoder's last ``count`` layers, with their weights."""
    return nn.ModuleList(copy.deepcopy(layer) for layer in encoder_layers(encoder)[-count:])


def _from_int8_storage(load, folder: str | os.PathLike, model_args: tuple, kwargs: dict):
    """``load`` (transformers' ``from_pretrained``) given the checkpoint's weights as a plain state dict
    (:func:`~hf_punctcase.models.common.modeling.int8_stored_state_dict`) and its config without the
    ``quantization_config``, so that transformers' torchao integration is not asked for."""
    kwargs = dict(kwargs)
    config = kwargs.pop("config", None)
    if not isinstance(config, JointTokenClassificationConfig):
        config_kwargs = {k: kwargs.pop(k) for k in ("revision", "trust_remote_code") if k in kwargs}
        config = JointTokenClassificationConfig.from_pretrained(folder, **config_kwargs)
    else:
        config = copy.deepcopy(config)
    if getattr(config, "quantization_config", None) is not None:
        del config.quantization_config
    config._name_or_path = str(folder)
    for ignored in ("revision", "trust_remote_code", "local_files_only", "cache_dir", "subfolder", "use_safetensors"):
        kwargs.pop(ignored, None)
    model, info = load(None, *model_args, config=config, state_dict=int8_stored_state_dict(folder), output_loading_info=True, **kwargs)
    model.name_or_path = model.config._name_or_path = str(folder)
    return model, info


def dequantize_stored_weights(model: PreTrainedModel) -> PreTrainedModel:
    """Replace weights that a checkpoint stores as int8 (torchao tensor subclasses, loaded through
    transformers' torchao integration) by plain parameters of the dtype the model's other parameters
    have, and forget the quantization: the model then computes, moves, casts, trains and saves as a
    float model. Storage is int8, compute bf16/fp32: on CPUs a dense bf16 matrix product is faster
    than torchao's int8 kernels, and torchao's int8 embedding lookup dequantizes the whole table at
    every call. Returns the model, changed in place; one without such weights is left as it is."""
    stored = [
        (module, name, weight)
        for module in model.modules()
        for name, weight in module._parameters.items()
        if weight is not None and hasattr(weight, "dequantize") and type(weight) not in (torch.Tensor, nn.Parameter)
    ]
    if not stored:
        return model
    plain = {
        p.dtype for p in model.parameters()
        if p.is_floating_point() and type(p) in (torch.Tensor, nn.Parameter)
    }
    # One dtype among the plain parameters is the dtype the model was loaded in; else fp32.
    dtype = plain.pop() if len(plain) == 1 else torch.float32
    for module, name, weight in stored:
        module._parameters[name] = nn.Parameter(weight.dequantize().to(dtype), requires_grad=True)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    # transformers records the load-time step that rebuilt the int8 weights and would undo it when
    # saving; the weights are plain now.
    conversions = getattr(model, "_weight_conversions", None)
    if conversions:
        model._weight_conversions = [
            step for step in conversions
            if not any(type(op).__name__ == "TorchAoDeserialize" for op in getattr(step, "operations", ()))
        ]
    return model


def _pooling_free_kwargs(config) -> dict:
    """BERT-like encoders build a pooler by default; token classification never uses it."""
    model_class = AutoModel._model_mapping[type(config)]
    if "add_pooling_layer" in inspect.signature(model_class.__init__).parameters:
        return {"add_pooling_layer": False}
    return {}


def truncated_encoder_config(encoder_name_or_path: str | os.PathLike, num_encoder_layers: int | None = None):
    """An encoder's config, with only its first ``num_encoder_layers`` layers when given (loading weights
    with it keeps exactly those layers)."""
    config = AutoConfig.from_pretrained(encoder_name_or_path)
    if num_encoder_layers is not None:
        if num_encoder_layers > config.num_hidden_layers:
            raise ValueError(
                f"num_encoder_layers={num_encoder_layers} but {encoder_name_or_path} has only "
                f"{config.num_hidden_layers} layers"
            )
        config.num_hidden_layers = num_encoder_layers
    return config


def _encoder_from_config(config) -> PreTrainedModel:
    return AutoModel.from_config(config, **_pooling_free_kwargs(config))


def _encoder_from_pretrained(path: str | os.PathLike, config) -> PreTrainedModel:
    return AutoModel.from_pretrained(path, config=config, **_pooling_free_kwargs(config))


__all__ = [
    "HeadAttention",
    "encoder_layers",
    "reinitialize_top_layers",
    "top_layer_copies",
    "JointTokenClassificationModel",
    "JointTokenClassificationPreTrainedModel",
    "JointTokenClassifierOutput",
]
