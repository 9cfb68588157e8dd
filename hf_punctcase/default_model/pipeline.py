"""The ``"punct-case"`` pipeline: raw transcript in, punctuated and cased text out.

Stages: text → words (whitespace tokens) → windows of words (``window_words`` words, each word
predicted from the window where it sits farthest from an edge: every window has ``context_words``
words of context on each side of the words it answers for) → subwords → logits → per-word labels →
text. Windows of all inputs are batched together (``batch_size`` windows per forward pass).

Output contract: ``result["text"].split()`` has one token per input word, in order, each the input
word up to case plus trailing punctuation.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from transformers.pipelines.base import ChunkPipeline

from .labels import LabelScheme, apply_case, is_latin_letter, split_trailing_marks
from .tokenization import first_subword_positions, model_words as encoder_words, tokenize_words

#: Words longer than this are passed through untouched and shown to the model as one unknown token.
MAX_WORD_CHARS = 100

#: The task name under which a checkpoint's config lists this pipeline's code (``custom_pipelines``),
#: for ``pipeline(model=repo, trust_remote_code=True)`` without the plugin. It must differ from the
#: registered task "punct-case": transformers gives a checkpoint's custom pipeline priority over the
#: registered one for the same task name and then demands trust_remote_code, which would break
#: ``pipeline("punct-case", model=repo)`` for users who have the plugin.
REMOTE_CODE_TASK = "punct-case-remote-code"


def remote_code_pipeline_entry() -> dict:
    """The ``custom_pipelines`` entry that points transformers at this file's pipeline class."""
    module = __name__.rsplit(".", 1)[-1]
    return {"impl": f"{module}.PunctCasePipeline", "pt": ["AutoModelForTokenClassification"], "tf": [], "type": "text"}


@dataclass(frozen=True, eq=False)
class _InputWords:
    """An input's words and their original trailing marks, shared by all its windows.

    Held in an object rather than as lists because the pipeline base class walks every list in a
    batch (to move tensors to the device): a list of a million words per window would be walked
    once per window.
    """

    words: list[str]
    marks: list[str]


@dataclass
class Window:
    """A slice ``[start, end)`` of an input's words, answering for words ``[core_start, core_end)``."""

    start: int
    end: int
    core_start: int
    core_end: int


def plan_windows(num_words: int, window_words: int, context_words: int) -> Iterator[Window]:
    """Windows over ``num_words`` words: cores of ``window_words - 2 * context_words`` words tiling
    the input, each with up to ``context_words`` words of context on each side."""
    core = window_words - 2 * context_words
    if core < 1:
        raise ValueError(f"window_words ({window_words}) must exceed 2 × context_words ({context_words})")
    for core_start in range(0, num_words, core):
        core_end = min(core_start + core, num_words)
        yield Window(max(0, core_start - context_words), min(num_words, core_end + context_words), core_start, core_end)


def _is_opaque(word: str) -> bool:
    """Tokens an English model cannot punctuate or case (no Latin letter or digit: emoji, symbols,
    other scripts; or over-long tokens): passed through exactly as written."""
    return len(word) > MAX_WORD_CHARS or not any(ch.isalnum() and ch.isascii() or is_latin_letter(ch) for ch in word)


class PunctCasePipeline(ChunkPipeline):
    """Restore punctuation and casing in ASR transcripts.

    Call with a string or a list of strings. Each result is a dict with ``"text"`` (the restored
    string) and ``"words"``: one entry per input word with the restored ``word``, its
    ``punctuation`` and ``casing`` labels and their ``punct_score`` / ``case_score``.

    Args (at construction or call time):
        window_words (`int`, defaults to 200): words per model window.
        context_words (`int`, defaults to 50): words of context on each side of a window's core.
        keep_punctuation (`bool`, defaults to `False`): keep marks already in the input instead of
            stripping them and predicting.
        progress (`bool`, *optional*): show a tqdm bar (over transcripts for a list, over windows for
            one long transcript); default: when stderr is a terminal and there are more than 20 of them.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self._batch_size is None:
            self._batch_size = 16  # windows of one long input are batched too
        self.scheme: LabelScheme = self.model.config.label_scheme
        self.lexicon: dict[str, str] = dict(self.model.config.mixed_case_lexicon or {})
        self.max_length = min(
            self.model.config.max_position_embeddings,
            self.tokenizer.model_max_length if self.tokenizer.model_max_length < 100_000 else 512,
        )

    # ---- arguments ---------------------------------------------------------------------------
    def _sanitize_parameters(
        self,
        window_words: int | None = None,
        context_words: int | None = None,
        keep_punctuation: bool | None = None,
        progress: bool | None = None,
        **kwargs,
    ):
        if kwargs:
            raise TypeError(f"unknown arguments for the punct-case pipeline: {sorted(kwargs)}")
        preprocess = {}
        if window_words is not None:
            preprocess["window_words"] = window_words
        if context_words is not None:
            preprocess["context_words"] = context_words
        postprocess = {}
        if keep_punctuation is not None:
            postprocess["keep_punctuation"] = keep_punctuation
        if progress is not None:
            preprocess["progress"] = progress
        return preprocess, {}, postprocess

    def __call__(self, inputs, **kwargs):
        """Restore one transcript (``str``) or many (``list[str]``)."""
        if isinstance(inputs, str):
            return super().__call__(inputs, **kwargs)
        if isinstance(inputs, (list, tuple)):
            for i, item in enumerate(inputs):
                if not isinstance(item, str):
                    raise TypeError(
                        f"punct-case accepts a str or a list of str; item {i} is {type(item).__name__}"
                    )
            if not inputs:
                return []
            progress = kwargs.pop("progress", None)
            if progress is None:
                progress = len(inputs) > 20 and sys.stderr.isatty()
            if not progress:
                return super().__call__(list(inputs), **kwargs)
            from tqdm.auto import tqdm

            # One bar over transcripts; a generator makes the base class stream results as they come.
            results = super().__call__((text for text in inputs), progress=False, **kwargs)
            return list(tqdm(results, total=len(inputs), unit="transcript", desc="punct-case"))
        raise TypeError(f"punct-case accepts a str or a list of str, got {type(inputs).__name__}")

    # ---- text → windows of subwords -------------------------------------------------------
    def preprocess(
        self,
        text: str,
        window_words: int = 200,
        context_words: int = 50,
        progress: bool | None = None,
    ):
        cores, marks = [], []
        for token in text.split():
            core, trail = split_trailing_marks(token)
            if not core:  # a token of punctuation only ("--", "...") stays a word of its own
                core, trail = token, ""
            cores.append(core)
            marks.append(trail)
        # As the encoder sees them; an over-long token becomes the unknown token (after lowercasing,
        # so that "[UNK]" stays the special token).
        model_words = [
            self.tokenizer.unk_token if len(w) > MAX_WORD_CHARS else w
            for w in encoder_words(cores, self.model.config.lowercase_input)
        ]
        windows = list(plan_windows(len(cores), window_words, context_words))
        show = progress if progress is not None else (len(windows) > 20 and sys.stderr.isatty())
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(windows), unit="window", desc="punct-case")
        source = _InputWords(cores, marks)
        # Every item carries the same keys (batches across inputs are collated key by key); the
        # input's words travel by reference and "is_last" marks the input's final window.
        pending = None
        for window in windows:
            for piece, encoding in self._fit(model_words, window):
                if pending is not None:
                    yield pending
                positions = first_subword_positions(encoding.word_ids(0), piece.end - piece.start)
                offset = piece.core_start - piece.start
                pending = self._item(encoding, positions[offset : offset + piece.core_end - piece.core_start], source)
            if bar is not None:
                bar.update(1)
        if pending is None:  # empty input: one empty window so that the input still yields a result
            ids = self.tokenizer("")["input_ids"] or [self.tokenizer.pad_token_id]
            pending = self._item({"input_ids": [ids], "attention_mask": [[1] * len(ids)]}, [], source)
        pending["is_last"] = True
        if bar is not None:
            bar.close()
        yield pending

    @staticmethod
    def _item(encoding, core_positions: list[int], source: _InputWords) -> dict:
        return {
            "input_ids": torch.tensor([encoding["input_ids"][0]], dtype=torch.long),
            "attention_mask": torch.tensor([encoding["attention_mask"][0]], dtype=torch.long),
            "core_positions": np.asarray(core_positions, dtype=np.int64),
            "source": source,
            "is_last": False,
        }

    def _fit(self, words: list[str], window: Window):
        """Yield ``(window, encoding)``, splitting a window whose subwords exceed the encoder's limit."""
        encoding = tokenize_words(self.tokenizer, [words[window.start : window.end]], 10**9, lowercase=False)
        if len(encoding["input_ids"][0]) <= self.max_length or window.end - window.start == 1:
            if len(encoding["input_ids"][0]) > self.max_length:  # one word alone overflows: keep its start
                encoding = tokenize_words(self.tokenizer, [words[window.start : window.end]], self.max_length, lowercase=False)
            yield window, encoding
            return
        context = (window.core_start - window.start) // 2
        if window.core_end - window.core_start > 1:
            middle = (window.core_start + window.core_end) // 2
            cores = [(window.core_start, middle), (middle, window.core_end)]
        else:
            cores = [(window.core_start, window.core_end)]
        for core_start, core_end in cores:
            yield from self._fit(
                words, Window(max(0, core_start - context), min(len(words), core_end + context), core_start, core_end)
            )

    # ---- subwords → per-word probabilities ---------------------------------------------------
    def _forward(self, model_inputs):
        core_positions = model_inputs["core_positions"]
        if isinstance(core_positions, np.ndarray):  # one unbatched item
            core_positions = [core_positions]
        output = self.model(input_ids=model_inputs["input_ids"], attention_mask=model_inputs["attention_mask"])
        punct_probs = output.punct_logits.float().softmax(-1).numpy()
        case_probs = output.case_logits.float().softmax(-1).numpy()
        # Keep only the probabilities of the words each window answers for: memory stays bounded
        # by the window batch, whatever the input's length.
        gathered_punct, gathered_case = [], []
        for row, positions in enumerate(core_positions):
            punct = np.zeros((len(positions), punct_probs.shape[-1]), dtype=np.float32)
            case = np.zeros((len(positions), case_probs.shape[-1]), dtype=np.float32)
            punct[:, 0] = case[:, 0] = 1.0  # a word without subwords (dropped by the tokenizer)
            seen = positions >= 0
            punct[seen] = punct_probs[row, positions[seen]]
            case[seen] = case_probs[row, positions[seen]]
            gathered_punct.append(punct)
            gathered_case.append(case)
        return {
            "punct_probs": gathered_punct,
            "case_probs": gathered_case,
            "source": model_inputs["source"],
            "is_last": model_inputs["is_last"],
        }

    # ---- per-word probabilities → labels → text ------------------------------------------
    def postprocess(self, model_outputs, keep_punctuation: bool = False):
        source = model_outputs[-1]["source"]
        if isinstance(source, list):  # batch_size=1 keeps the collated list of one
            source = source[0]
        words, marks = source.words, source.marks
        punct = np.concatenate([_unbatched(o["punct_probs"]) for o in model_outputs])[: len(words)]
        case = np.concatenate([_unbatched(o["case_probs"]) for o in model_outputs])[: len(words)]
        if len(punct) != len(words):
            raise RuntimeError(f"internal error: {len(punct)} predictions for {len(words)} words")
        punct_ids, case_ids = punct.argmax(-1), case.argmax(-1)

        restored = []
        for i, word in enumerate(words):
            punct_label = self.scheme.punct_labels[punct_ids[i]]
            case_label = self.scheme.case_labels[case_ids[i]]
            if _is_opaque(word):
                text = word + marks[i] if keep_punctuation else word
                punct_label, case_label = "O", "LOWER"
            elif keep_punctuation and marks[i]:
                text = apply_case(word, case_label, self.lexicon) + marks[i]
                punct_label = self.scheme.label_of_marks(marks[i])
            else:
                text = self.scheme.render_word(word, punct_label, case_label, self.lexicon)
            restored.append(
                {
                    "word": text,
                    "punctuation": punct_label,
                    "casing": case_label,
                    "punct_score": float(punct[i, punct_ids[i]]),
                    "case_score": float(case[i, case_ids[i]]),
                }
            )
        return {"text": " ".join(w["word"] for w in restored), "words": restored}


def _unbatched(probs) -> np.ndarray:
    """Per-item probabilities come back as an array, or (after unbatching) with a leading axis of 1."""
    if isinstance(probs, list):  # batch_size=1: the list of one window
        probs = probs[0]
    probs = np.asarray(probs)
    return probs[0] if probs.ndim == 3 else probs


__all__ = ["PunctCasePipeline", "plan_windows", "Window", "MAX_WORD_CHARS"]
