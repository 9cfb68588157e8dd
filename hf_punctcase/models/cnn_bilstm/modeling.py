"""CNN-BiLSTM joint punctuation + truecasing model: a small recurrent model for restoration on devices
(You & Li 2024, "Efficient ASR post-processing for edge devices"), as the paper and its authors' code
build it (``recurrent_unit="word"``, the default):

    e = embedding(<s> subwords </s>)                                      100-d, learned edge tokens
    x = LayerNorm(x + ReLU(conv_k3(x)))            × num_cnn_layers        same padding, residual, over subwords
    w = x at the first subword of each word                               <s> w_1 … w_n </s>
    h = BiLSTM(BiLSTM(w))                          × num_bilstm_layers     each direction hidden_size, over words
    s = LSTM(h)                                                            unidirectional, hidden_size
    punct_t = W_p dropout([s_t ; s_t+1])           the mark after word t reads the next word's state (</s> after the last)
    case_t  = W_c dropout([s_t−1 ; s_t])           the casing of word t reads the previous word's state (<s> before the first)
    loss = CE(case) + α · CE(punct)                α = 0.7

A word starts at every subword the tokenizer marks as word-initial ("▁…", SentencePiece's mark), a
table the model holds (:meth:`CnnBiLstmForJointTokenClassification.mark_word_initial_pieces`), so its
inputs are the subword ids alone. The word logits are written back at each word's first subword;
the other subwords get zeros, as their labels are -100 and nothing reads them.

``recurrent_unit="subword"`` is the earlier form of the family: the LSTMs and heads run over every
subword, the shifted states are zero beyond the ends, and dropout also sits on the embeddings and after
every LSTM (``dropout_scope="all_layers"``). Configs written before these fields existed describe it,
and load as it.

Every layer sees only its sequence's own subwords and words: padding is masked before each convolution
and the backward direction of each BiLSTM reads each sequence reversed within its own length, so a
sequence's logits do not depend on its batch mates. Padding must be on the right (the attention mask a
prefix of ones), as the family's tokenizer pads. The output is the joint transformer's
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

#: The mark SentencePiece-style tokenizers put at the start of a word's first piece.
WORD_START_MARK = "▁"


class Dropout(nn.Dropout):
    """``nn.Dropout`` whose mask on the CPU comes from uniform numbers (keep where u ≥ p): the same
    distribution, drawn about three times as fast, since the CPU's ``bernoulli_`` draws its numbers one at
    a time; the heads' dropout was a sixth of a training step. Elsewhere it is ``nn.Dropout``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0 or x.device.type != "cpu":
            return super().forward(x)
        if self.p == 1:
            return x * 0
        keep = torch.rand(x.shape, device=x.device) >= self.p
        return x * keep.to(x.dtype).mul_(1 / (1 - self.p))


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
        if self.config.initialization == "kaiming_uniform" and isinstance(module, (nn.Linear, nn.Embedding, nn.Conv1d)):
            # The authors' code: Kaiming-uniform on every weight matrix (embeddings, convolutions, heads)
            # over PyTorch's own initialisation, which keeps the biases; LSTMs and norms as below.
            module.reset_parameters()
            nn.init.kaiming_uniform_(module.weight)
            if isinstance(module, nn.Embedding) and module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
            return
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
    each state and the next one and a casing head reading the previous state and each state; the
    recurrent layers and heads run over words or subwords (``config.recurrent_unit``)."""

    def __init__(self, config: CnnBiLstmConfig):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.embedding_size, padding_idx=config.pad_token_id)
        self.by_word = config.recurrent_unit == "word"
        if self.by_word:
            # <s> and </s>: the word sequence's ends, whose states the first word's casing and the last
            # word's mark read. Which pieces start a word is the tokenizer's; every piece until told.
            self.edge_embeddings = nn.Embedding(2, config.embedding_size)
            self.register_buffer("word_initial", torch.ones(config.vocab_size, dtype=torch.bool))
        self.cnn = nn.ModuleList(ConvBlock(config.embedding_size, config.cnn_kernel_size) for _ in range(config.num_cnn_layers))
        sizes = [config.embedding_size] + [2 * config.hidden_size] * config.num_bilstm_layers
        self.bilstm = nn.ModuleList(BiLstmLayer(size, config.hidden_size) for size in sizes[:-1])
        self.lstm = nn.LSTM(sizes[-1], config.hidden_size, batch_first=True)
        # The authors' code drops out the heads' inputs only (each head its own mask); the family's
        # earlier recipe dropped out the embeddings, every LSTM's output and so the heads' inputs.
        between_layers = config.dropout_scope == "all_layers"
        self.layer_dropout = Dropout(config.dropout if between_layers else 0.0)
        self.head_dropout = Dropout(0.0 if between_layers else config.dropout)
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

    def mark_word_initial_pieces(self, tokenizer) -> int:
        """Take from ``tokenizer`` (the family's, SentencePiece-style) which of its pieces start a word:
        those beginning with "▁", and ``<unk>``, which stands for a whole unknown piece. Returns how
        many. A word-level model needs it once, when it is created; checkpoints keep it."""
        if not self.by_word:
            raise ValueError("only a word-level CNN-BiLSTM (recurrent_unit='word') reads words")
        vocabulary = tokenizer.get_vocab()
        if len(vocabulary) > self.config.vocab_size:
            raise ValueError(f"the tokenizer has {len(vocabulary)} pieces, the model {self.config.vocab_size}")
        initial = torch.zeros_like(self.word_initial)
        for piece, index in vocabulary.items():
            initial[index] = piece.startswith(WORD_START_MARK) or index == tokenizer.unk_token_id
        if not initial.any():
            raise ValueError(f"no piece of the tokenizer starts with {WORD_START_MARK!r}: it does not mark word starts")
        self.word_initial.copy_(initial)
        return int(initial.sum())

    def _recurrent(self, x: torch.Tensor, lengths: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The BiLSTMs and the LSTM over ``x`` (batch, steps, features); zero on padding. The mask takes
        each LSTM's dtype, so that under bf16 autocast the states stay bf16 (a 0/1 mask changes no value):
        an fp32 mask would turn them to fp32 and the next layer back, a third of the step's copies."""
        for layer in self.bilstm:
            x = self.layer_dropout(layer(x, lengths))
            x = x * mask.to(x.dtype)
        states, _ = self.lstm(x)
        return self.layer_dropout(states) * mask.to(states.dtype)

    def states(self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The subword model's last LSTM states (batch, sequence, hidden_size), zero on padding."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = attention_mask.unsqueeze(-1).to(self.embeddings.weight.dtype)
        lengths = attention_mask.sum(dim=1).long()
        x = self.layer_dropout(self.embeddings(input_ids))
        for block in self.cnn:
            x = block(x, mask)
        return self._recurrent(x * mask, lengths, mask)

    def word_states(
        self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The word model's last LSTM states over ``<s> w_1 … w_n </s>`` (batch, words + 2, hidden_size),
        zero on padding; with, for each word slot, the position (in ``<s> subwords </s>``) of the
        subword it was gathered from, and the number of slots each sequence fills."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        batch = input_ids.shape[0]
        lengths = attention_mask.sum(dim=1).long()
        edges = self.edge_embeddings.weight
        x = self.embeddings(input_ids)
        x = torch.cat([edges[0].expand(batch, 1, -1), x, torch.zeros_like(x[:, :1])], dim=1)
        positions = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
        is_end = positions == (lengths + 1).unsqueeze(1)
        x = torch.where(is_end.unsqueeze(-1), edges[1].expand_as(x), x)
        span = (positions <= (lengths + 1).unsqueeze(1)).unsqueeze(-1).to(x.dtype)
        x = self.layer_dropout(x)
        for block in self.cnn:
            x = block(x, span)
        starts = torch.cat(
            [torch.ones_like(is_end[:, :1]), self.word_initial[input_ids] & attention_mask.bool(), torch.zeros_like(is_end[:, :1])],
            dim=1,
        ) | is_end
        counts = starts.sum(dim=1)
        # The k-th word start goes to slot k; every other position to one slot past the end, dropped.
        # (A scatter, not a sort: ONNX's exporter has no stable sort.)
        rank = torch.cumsum(starts.to(torch.int64), dim=1) - 1
        width = starts.shape[1]
        slot_of = torch.where(starts, rank, torch.full_like(rank, width))
        origin = torch.zeros(batch, width + 1, dtype=torch.int64, device=x.device)
        origin = origin.scatter(1, slot_of, positions.expand(batch, -1))
        slots = torch.arange(counts.max(), device=x.device).unsqueeze(0)
        origin = origin.gather(1, slots.expand(batch, -1))
        words = x.gather(1, origin.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        word_mask = (slots < counts.unsqueeze(1)).unsqueeze(-1).to(x.dtype)
        return self._recurrent(words * word_mask, counts, word_mask), origin, counts

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
        if self.by_word:
            states, origin, counts = self.word_states(input_ids, attention_mask)
            # The next and previous word's states; </s> and <s> are words of the sequence, and the edge
            # slots repeat their own state as the authors' code does (nothing reads their logits).
            following = torch.cat([states[:, 1:], states[:, -1:]], dim=1)
            preceding = torch.cat([states[:, :1], states[:, :-1]], dim=1)
        else:
            states = self.states(input_ids, attention_mask)
            # s_t+1 and s_t−1, zero beyond the ends (the states are zero on padding already).
            following = nn.functional.pad(states[:, 1:], (0, 0, 0, 1))
            preceding = nn.functional.pad(states[:, :-1], (0, 0, 1, 0))
        ahead = self.head_dropout(torch.cat([states, following], dim=-1))
        behind = self.head_dropout(torch.cat([preceding, states], dim=-1))
        logits = {
            PUNCTUATION.name: self.punct_classifier(ahead),
            CASING.name: self.case_classifier(behind),
            **{task.name: self.get_submodule(task.classifier)(ahead) for task in self.head_tasks},
        }
        if self.by_word:
            logits = {name: self._at_first_subwords(value, origin, counts, input_ids.shape[1]) for name, value in logits.items()}
        output = joint_output(joint_loss(self.config, logits, labels), logits, (states,) if output_hidden_states else None)
        return output if return_dict else output.to_tuple()

    @staticmethod
    def _at_first_subwords(word_logits: torch.Tensor, origin: torch.Tensor, counts: torch.Tensor, length: int) -> torch.Tensor:
        """Word logits (batch, slots, classes) written at each word's first subword (batch, length,
        classes); zeros elsewhere, the edges' and padding's included. ``origin`` holds each slot's
        position in ``<s> subwords </s>``."""
        slots = torch.arange(word_logits.shape[1], device=word_logits.device).unsqueeze(0)
        real = ((slots > 0) & (slots < counts.unsqueeze(1) - 1)).unsqueeze(-1)
        word_logits = torch.where(real, word_logits, torch.zeros_like(word_logits))
        placed = torch.zeros(
            word_logits.shape[0], length + 2, word_logits.shape[-1], dtype=word_logits.dtype, device=word_logits.device
        )
        placed = placed.scatter(1, origin.unsqueeze(-1).expand(-1, -1, word_logits.shape[-1]), word_logits)
        return placed[:, 1 : length + 1]


__all__ = ["WORD_START_MARK", "CnnBiLstmForJointTokenClassification", "CnnBiLstmPreTrainedModel", "Dropout", "reverse_within_length"]
