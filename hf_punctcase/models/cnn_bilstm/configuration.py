"""Configuration of the CNN-BiLSTM joint punctuation + truecasing model (the on-device family)."""

from __future__ import annotations

from typing import ClassVar

from transformers import PreTrainedConfig

from ...labels import DEFAULT_CASE_LABELS, DEFAULT_PUNCT_LABELS
from ..common.configuration import JointLabelsMixin


class CnnBiLstmConfig(JointLabelsMixin, PreTrainedConfig):
    r"""Configuration of [`CnnBiLstmForJointTokenClassification`]: a small recurrent model trained from
    scratch on its own subword vocabulary, for restoration on devices.

    Args:
        vocab_size (`int`, defaults to 5000):
            Subwords in the vocabulary (its tokenizer: `hf_punctcase.models.cnn_bilstm.train_tokenizer`).
        embedding_size (`int`, defaults to 100):
            Width of the subword embeddings and of the convolutional layers.
        num_cnn_layers (`int`, defaults to 3):
            Convolutional encoder layers: 1-D convolution (same padding), ReLU, residual, LayerNorm.
        cnn_kernel_size (`int`, defaults to 3):
            Kernel width of the convolutions (odd, so that "same" padding is symmetric).
        num_bilstm_layers (`int`, defaults to 2):
            Bidirectional LSTM layers after the convolutions; a unidirectional LSTM follows them.
        hidden_size (`int`, defaults to 384):
            Hidden size of every LSTM, per direction (a bidirectional layer outputs twice as much); the
            heads read the last LSTM's states.
        dropout (`float`, defaults to 0.5):
            Dropout rate (training only), where `dropout_scope` puts it.
        recurrent_unit (`str`, defaults to `"word"`):
            What the LSTMs and the heads run over: `"word"`, the first subword of each word, gathered after
            the convolutions, between learned `<s>` and `</s>` edges (You & Li 2024 and their code), or
            `"subword"`, every subword (the family's earlier form; configs without this field are that).
        dropout_scope (`str`, defaults to `"heads"`):
            `"heads"`: dropout on the heads' inputs only (the authors' code); `"all_layers"`: also on the
            embeddings and after every LSTM (the family's earlier recipe).
        initialization (`str`, defaults to `"kaiming_uniform"`):
            `"kaiming_uniform"`: Kaiming-uniform weight matrices and PyTorch's own LSTMs (the authors'
            code); `"normal"`: normal(0, `initializer_range`) embeddings and heads (the earlier recipe).
        punct_labels (`list[str]`):
            Punctuation classes, "O" first (see `hf_punctcase.labels`).
        case_labels (`list[str]`):
            Casing classes.
        punct_loss_weight (`float`, defaults to 0.7):
            α in loss = CE(casing) + α·CE(punctuation).
        label_smoothing (`float`, defaults to 0.0):
            Label smoothing of both cross-entropies (training only).
        punct_class_weights (`list[float]`, *optional*):
            One weight per punctuation class in the punctuation cross-entropy (training only).
        mixed_case_lexicon (`dict[str, str]`, *optional*):
            Lowercase word → surface form for MIXED-case words ("iphone" → "iPhone").
        lowercase_input (`bool`, defaults to `True`):
            Lowercase words before tokenisation (the vocabulary is lowercase).
        max_position_embeddings (`int`, defaults to 512):
            The longest window in subwords the pipeline gives the model. The model itself has no
            position limit; this bounds the windows' memory, as an encoder's position table does.
        pad_token_id (`int`, defaults to 0):
            Id of the padding subword (its embedding is zero and not trained).
        initializer_range (`float`, defaults to 0.02):
            Standard deviation of the normal initialisation of the embeddings and the heads.

    Example:
    ```python
    >>> from hf_punctcase import CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
    >>> model = CnnBiLstmForJointTokenClassification(CnnBiLstmConfig(vocab_size=5000))
    ```
    """

    model_type: ClassVar[str] = "cnn_bilstm_punct_case"
    # The Trainer collects every other output as predictions: (punct_logits, case_logits).
    keys_to_ignore_at_inference: ClassVar[list[str]] = ["logits"]

    #: The values of the fields that name a choice.
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "recurrent_unit": ("word", "subword"),
        "dropout_scope": ("heads", "all_layers"),
        "initialization": ("kaiming_uniform", "normal"),
    }
    #: What a config written before those fields existed describes: the subword model and its recipe.
    EARLIER_FORM: ClassVar[dict[str, str]] = {
        "recurrent_unit": "subword",
        "dropout_scope": "all_layers",
        "initialization": "normal",
    }

    vocab_size: int = 5000
    embedding_size: int = 100
    num_cnn_layers: int = 3
    cnn_kernel_size: int = 3
    num_bilstm_layers: int = 2
    hidden_size: int = 384
    dropout: float | int = 0.5
    recurrent_unit: str = "word"
    dropout_scope: str = "heads"
    initialization: str = "kaiming_uniform"
    punct_labels: list[str] | tuple[str, ...] = DEFAULT_PUNCT_LABELS
    case_labels: list[str] | tuple[str, ...] = DEFAULT_CASE_LABELS
    punct_loss_weight: float | int = 0.7
    label_smoothing: float | int = 0.0
    punct_class_weights: list[float] | None = None
    mixed_case_lexicon: dict[str, str] | None = None
    lowercase_input: bool = True
    max_position_embeddings: int = 512
    pad_token_id: int | None = 0
    initializer_range: float = 0.02

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self.set_label_maps()
        for name in ("vocab_size", "embedding_size", "cnn_kernel_size", "hidden_size", "max_position_embeddings"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1, got {getattr(self, name)}")
        for name in ("num_cnn_layers", "num_bilstm_layers"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be ≥ 0, got {getattr(self, name)}")
        if self.cnn_kernel_size % 2 == 0:
            raise ValueError(f"cnn_kernel_size must be odd (same padding), got {self.cnn_kernel_size}")
        for name, allowed in self.CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.pad_token_id is not None and not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(f"pad_token_id {self.pad_token_id} is outside the vocabulary of {self.vocab_size}")
        self.validate_loss_options()
        if self.mixed_case_lexicon is None:
            self.mixed_case_lexicon = {}

    @classmethod
    def from_dict(cls, config_dict: dict, **kwargs):
        if "recurrent_unit" not in config_dict:
            config_dict = {**cls.EARLIER_FORM, **config_dict}
        return super().from_dict(config_dict, **kwargs)


__all__ = ["CnnBiLstmConfig"]
