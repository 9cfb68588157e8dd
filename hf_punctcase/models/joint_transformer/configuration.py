"""Configuration of the joint punctuation + truecasing token classifier."""

from __future__ import annotations

from typing import ClassVar

from transformers import AutoConfig, PreTrainedConfig
from transformers.configuration_utils import SubConfigSpec

from ...labels import DEFAULT_CASE_LABELS, DEFAULT_PUNCT_LABELS
from ..common.configuration import JointLabelsMixin

CASE_CONDITIONING_CHOICES = ("punct_probs", "none")
#: How the disfluency head and the punctuation head read each other (``head_dependency``).
HEAD_DEPENDENCY_CHOICES = ("none", "punct_to_disfl", "disfl_to_punct")


class JointTokenClassificationConfig(JointLabelsMixin, PreTrainedConfig):
    r"""Configuration of [`JointTokenClassificationModel`]: any encoder config plus two heads.

    Args:
        encoder (`PreTrainedConfig` or `dict`):
            Configuration of the encoder (BERT, MPNet, RoBERTa, ...). A dict needs its `model_type`.
        punct_labels (`list[str]`):
            Punctuation classes, "O" first (see `hf_punctcase.labels`).
        case_labels (`list[str]`):
            Casing classes.
        case_conditioning (`str`, defaults to `"punct_probs"`):
            `"punct_probs"`: the casing head reads the punctuation softmax concatenated with the
            hidden state (Sunkara et al. 2020, eq. 3). `"none"`: independent heads (ablation).
        punct_loss_weight (`float`, defaults to 0.6):
            α in loss = α·CE(punct) + CE(case).
        label_smoothing (`float`, defaults to 0.0):
            Label smoothing of both cross-entropies (training only).
        punct_class_weights (`list[float]`, *optional*):
            One weight per punctuation class in the punctuation cross-entropy, e.g. to up-weight the
            rare QUESTION class (training only).
        num_encoder_layers (`int`, *optional*):
            Number of encoder layers kept from a pretrained encoder (the paper keeps 6).
        classifier_dropout (`float`, defaults to 0.1):
            Dropout on the hidden states before the heads.
        mixed_case_lexicon (`dict[str, str]`, *optional*):
            Lowercase word → surface form for MIXED-case words ("iphone" → "iPhone"), collected from
            the training text and saved with the checkpoint.
        lowercase_input (`bool`, defaults to `True`):
            Lowercase words before tokenisation, so that a cased encoder sees ASR-like input.
        disfluency_labels (`list[str]`, *optional*):
            Disfluency classes (`hf_punctcase.labels.DISFLUENCY_LABELS`: FLUENT, DISFLUENT) of an
            optional third head that marks fillers, edit terms and reparanda; None: no such head.
            Any head task registered with `hf_punctcase.tasks.register_task` is given likewise, by its
            `config_field` (and weighted by its `loss_weight_field`).
        head_dependency (`str`, defaults to `"none"`):
            How the disfluency and punctuation heads read each other (Lin & Wang 2020's joint
            punctuation and disfluency model). `"none"`: both read the shared encoder only.
            `"punct_to_disfl"`: the punctuation probabilities, transformed (tanh(W p_i + b)), are the
            keys and values of an attention whose queries are the disfluency logits; the attended
            vector and the logits are concatenated into the final disfluency layer.
            `"disfl_to_punct"`: the mirror, the disfluency probabilities attended by the punctuation
            logits (the casing head then reads the final punctuation softmax).
        disfluency_loss_weight (`float`, defaults to 1.0):
            Weight of the disfluency cross-entropy in the loss.
        case_loss_weight (`float`, defaults to 1.0):
            Weight of the casing cross-entropy in the loss (0 with `punct_loss_weight=0` trains a
            disfluency-only model).
        command_branch_layers (`int`, defaults to 0):
            The spoken-command head's own top layers: a copy of the encoder's last
            `command_branch_layers` layers, fed what the first of them is fed, whose output only the
            command head reads, so that the command task can train layers without changing what
            every other head reads. 0: the command head reads the shared encoder, like the others.
        preferred_cpu_runtime (`str`, *optional*):
            What the checkpoint runs best as on a CPU without AMX or avx512_bf16, where that was measured:
            `"onnxruntime-int8"`, its int8 ONNX Runtime graph with per-token activation scales (built once
            and cached; `hf_punctcase.loading`). None: torch, in bf16 or fp32 as the CPU has. Training
            from a checkpoint clears it (the new weights were not measured).

    Example:
    ```python
    >>> from transformers import BertConfig
    >>> from hf_punctcase import JointTokenClassificationConfig, JointTokenClassificationModel
    >>> config = JointTokenClassificationConfig(encoder=BertConfig(num_hidden_layers=2))
    >>> model = JointTokenClassificationModel(config)
    ```
    """

    model_type: ClassVar[str] = "joint_token_classification"
    # The Trainer collects every other output as predictions: (punct_logits, case_logits).
    keys_to_ignore_at_inference: ClassVar[list[str]] = ["logits"]
    sub_configs_defaults = {"encoder": SubConfigSpec(config_class=AutoConfig, model_type="bert")}

    encoder: PreTrainedConfig | dict | None = None
    punct_labels: list[str] | tuple[str, ...] = DEFAULT_PUNCT_LABELS
    case_labels: list[str] | tuple[str, ...] = DEFAULT_CASE_LABELS
    case_conditioning: str = "punct_probs"
    punct_loss_weight: float | int = 0.6
    label_smoothing: float | int = 0.0
    punct_class_weights: list[float] | None = None
    num_encoder_layers: int | None = None
    classifier_dropout: float | int = 0.1
    mixed_case_lexicon: dict[str, str] | None = None
    lowercase_input: bool = True
    disfluency_labels: list[str] | tuple[str, ...] | None = None
    head_dependency: str = "none"
    disfluency_loss_weight: float | int = 1.0
    case_loss_weight: float | int = 1.0
    command_branch_layers: int = 0
    preferred_cpu_runtime: str | None = None

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self.set_label_maps()
        if self.case_conditioning not in CASE_CONDITIONING_CHOICES:
            raise ValueError(
                f"case_conditioning must be one of {CASE_CONDITIONING_CHOICES}, got {self.case_conditioning!r}"
            )
        if self.head_dependency not in HEAD_DEPENDENCY_CHOICES:
            raise ValueError(f"head_dependency must be one of {HEAD_DEPENDENCY_CHOICES}, got {self.head_dependency!r}")
        if self.head_dependency != "none" and self.disfluency_labels is None:
            raise ValueError(f"head_dependency={self.head_dependency!r} needs the disfluency head (disfluency_labels)")
        self.validate_loss_options()
        if self.num_encoder_layers is not None:
            if self.num_encoder_layers < 1:
                raise ValueError(f"num_encoder_layers must be ≥ 1, got {self.num_encoder_layers}")
            self.encoder.num_hidden_layers = self.num_encoder_layers
        if self.command_branch_layers:
            if not 0 < self.command_branch_layers <= self.encoder.num_hidden_layers:
                raise ValueError(
                    f"command_branch_layers must be between 0 and the encoder's {self.encoder.num_hidden_layers} layers, "
                    f"got {self.command_branch_layers}"
                )
            if getattr(self, "command_labels", None) is None:
                raise ValueError("command_branch_layers needs the spoken-command head (command_labels)")
        if self.mixed_case_lexicon is None:
            self.mixed_case_lexicon = {}

    @property
    def hidden_size(self) -> int:
        return self.encoder.hidden_size

    @property
    def max_position_embeddings(self) -> int:
        return getattr(self.encoder, "max_position_embeddings", 512)


__all__ = ["HEAD_DEPENDENCY_CHOICES", "JointTokenClassificationConfig"]
