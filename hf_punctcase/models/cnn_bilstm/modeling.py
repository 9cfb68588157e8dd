"""CNN-BiLSTM joint punctuation + truecasing model: a small recurrent model for restoration on devices.

    e = dropout(embedding(subwords))                                      100-d
    x = LayerNorm(x + ReLU(conv_k3(x)))            × num_cnn_layers        same padding, residual
    h = BiLSTM(BiLSTM(x))                          × num_bilstm_layers     each direction hidden_size
    s = LSTM(h)                                                            unidirectional, hidden_size
    punct_t = W_p [s_t ; s_t+1]                    the mark after subword t reads the next state
    case_t  = W_c [s_t−1 ; s_t]                    the casing of subword t reads the previous state
    loss = CE(case) + α · CE(punct)                α = 0.7

The shifted states are zero beyond the ends of each sequence (its padding included), and every layer
sees only its sequence's own subwords: padding is masked before each convolution and the backward
direction of each BiLSTM reads each sequence reversed within its own length. Padding must be on the
right (the attention mask a prefix of ones), as the family's tokenizer pads. Only the first subword of
each word carries labels; the others are -100 and ignored. The output is the joint transformer's
([`JointTokenClassifierOutput`]: `punct_logits`, `case_logits`, `logits`), so the same pipeline,
backends, Trainer code and ONNX export serve both families.
"""

from __future__ import annotations


import torch
from torch import nn
from transformers import PreTrainedModel

from ...tasks import CASING, PUNCTUATION, head_tasks
from ..common.modeling import JointTokenClassifierOutput, SavesRemoteCode, joint_loss, joint_output, task_labels_from
from .configuration import CnnBiLstmConfig


class ConvBlock(nn.Module):
    """1-D convolution over the sequence (same padding), ReLU, residual connection, LayerNorm."""

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x``: (batch, sequence, channels); ``mask``: (batch, sequence, 1), 1 on real subwords."""
        x = x * mask  # padding reads as the zeros that "same" padding puts beyond the ends
        y = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        return self.norm(x + y)


def reverse_within_length(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each sequence of ``x`` (batch, sequence, features) reversed within its first ``lengths[b]``
    positions; the positions after them (padding) stay where they are. Its own inverse."""
    positions = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    index = torch.where(positions < lengths, lengths - 1 - positions, positions)
    return x.gather(1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


class BiLstmLayer(nn.Module):
    """A bidirectional LSTM layer whose backward direction starts at each sequence's last real
    subword, whatever the padding after it (two unidirectional LSTMs; the backward one reads the
    sequence reversed within its length). Exports to ONNX as two LSTM nodes and gathers."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.forward_lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.backward_lstm = nn.LSTM(input_size, hidden_size, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        forward_states, _ = self.forward_lstm(x)
        backward_states, _ = self.backward_lstm(reverse_within_length(x, lengths))
        return torch.cat([forward_states, reverse_within_length(backward_states, lengths)], dim=-1)


class CnnBiLstmPreTrainedModel(SavesRemoteCode, PreTrainedModel):
    config_class = CnnBiLstmConfig
    base_model_prefix = "cnn_bilstm"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = False

    def _init_weights(self, module: nn.Module) -> None:
        if getattr(module, "_is_hf_initialized", False):
            return
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, (nn.Conv1d, nn.LSTM)):
            module.reset_parameters()  # PyTorch's own: Kaiming-uniform kernels, uniform LSTM weights
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


class CnnBiLstmForJointTokenClassification(CnnBiLstmPreTrainedModel):
    """Subword embeddings, convolutional layers, BiLSTMs and an LSTM, with a punctuation head reading
    each state and the next one and a casing head reading the previous state and each state."""

    def __init__(self, config: CnnBiLstmConfig):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.embedding_size, padding_idx=config.pad_token_id)
        self.cnn = nn.ModuleList(ConvBlock(config.embedding_size, config.cnn_kernel_size) for _ in range(config.num_cnn_layers))
        sizes = [config.embedding_size] + [2 * config.hidden_size] * config.num_bilstm_layers
        self.bilstm = nn.ModuleList(BiLstmLayer(size, config.hidden_size) for size in sizes[:-1])
        self.lstm = nn.LSTM(sizes[-1], config.hidden_size, batch_first=True)
        self.dropout = nn.Dropout(config.dropout)
        self.punct_classifier = nn.Linear(2 * config.hidden_size, len(config.punct_labels))
        self.case_classifier = nn.Linear(2 * config.hidden_size, len(config.case_labels))
        # A head per head task the config lists (hf_punctcase.tasks), reading what the punctuation head reads.
        self.head_tasks = head_tasks(config)
        for task in self.head_tasks:
            self.add_module(task.classifier, nn.Linear(2 * config.hidden_size, len(task.labels_in(config))))
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.embeddings = value

    def states(self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The last LSTM's states (batch, sequence, hidden_size), zero on padding."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = attention_mask.unsqueeze(-1).to(self.embeddings.weight.dtype)
        lengths = attention_mask.sum(dim=1).long()
        x = self.dropout(self.embeddings(input_ids))
        for block in self.cnn:
            x = block(x, mask)
        x = x * mask
        for layer in self.bilstm:
            x = self.dropout(layer(x, lengths)) * mask
        states, _ = self.lstm(x)
        return self.dropout(states) * mask

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.LongTensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        punct_labels: torch.LongTensor | None = None,
        case_labels: torch.LongTensor | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> JointTokenClassifierOutput | tuple:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch, seq_len)`): subword ids.
            attention_mask (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*):
                1 on subwords, 0 on padding (on the right).
            token_type_ids: accepted for tokenizers that return them, and not used.
            punct_labels (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*):
                Punctuation label ids on the first subword of each word, -100 elsewhere.
            case_labels (`torch.LongTensor` of shape `(batch, seq_len)`, *optional*):
                Casing label ids likewise; -100 where a source has no casing.
            output_hidden_states (`bool`, *optional*): also return the last LSTM's states.
            <task>_labels (keyword only): the label ids of each head task the config lists, likewise.
        """
        labels = {PUNCTUATION.name: punct_labels, CASING.name: case_labels, **task_labels_from(kwargs)}
        if kwargs:
            raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        states = self.states(input_ids, attention_mask)
        # s_t+1 and s_t−1, zero beyond the ends (the states are zero on padding already).
        following = nn.functional.pad(states[:, 1:], (0, 0, 0, 1))
        preceding = nn.functional.pad(states[:, :-1], (0, 0, 1, 0))
        ahead = torch.cat([states, following], dim=-1)
        logits = {
            PUNCTUATION.name: self.punct_classifier(ahead),
            CASING.name: self.case_classifier(torch.cat([preceding, states], dim=-1)),
            **{task.name: self.get_submodule(task.classifier)(ahead) for task in self.head_tasks},
        }
        output = joint_output(joint_loss(self.config, logits, labels), logits, (states,) if output_hidden_states else None)
        return output if return_dict else output.to_tuple()


__all__ = ["CnnBiLstmForJointTokenClassification", "CnnBiLstmPreTrainedModel", "reverse_within_length"]
