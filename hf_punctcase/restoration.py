"""Restoration without a runtime: every stage between the user's text and the model's probabilities.

    text ─split_words─▶ words + their own marks ─plan_windows─▶ windows ─encode_windows─▶ subword ids
    per-task probabilities ─word_probabilities─▶ one row per word ─decode─▶ labels ─▶ restored text

Every model family and runtime shares these functions: the transformers pipeline (torch) runs the model
between ``encode_windows`` and ``word_probabilities``, and a runtime without torch does the same with
its own runtime (ONNX Runtime). Only NumPy and a tokenizer are needed here.

A window answers for its middle words (its *core*) and sees ``context_words`` words on each side, so
every word is predicted where it sits farthest from a window edge. Words are passed through untouched
where an English model cannot case or punctuate them (:func:`is_opaque`).

What restoration may change, and nothing else: the case of a word's Latin letters (only to a letter
that lowercases as the original does, so that the word stays the input word up to case), and the
punctuation marks ``. , ? ! : ; - …`` trailing a word, which are replaced by the predicted mark
(kept instead with ``keep_punctuation``). Leading and closing quotes and brackets, the characters
inside a word, an abbreviation's period ("U.S.") and every character of a word passed through are
kept as written (:func:`restored_trail` places the predicted mark among closing quotes and
brackets); whitespace between words becomes one space.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .inputs import InputWords
from .labels import LABELLED_MARKS, LabelScheme, apply_case, case_label_of, is_latin_letter
from .tokenization import first_subword_positions, model_words, tokenize_words

if TYPE_CHECKING:
    from .tasks import Task

#: Words longer than this are passed through untouched and shown to the model as one unknown token.
MAX_WORD_CHARS = 100
#: Words per model window, and words of context on each side of a window's core, unless asked otherwise.
DEFAULT_WINDOW_WORDS = 200
DEFAULT_CONTEXT_WORDS = 50
#: The task heads whose probabilities restoration reads, by the name a backend gives them.
PUNCTUATION, CASING = "punct", "case"
#: What restoration may restore into the text (``decode``'s ``tasks``): punctuation, casing.
TASKS = (PUNCTUATION, CASING)


def is_opaque(word: str) -> bool:
    """Tokens an English model cannot punctuate or case (no Latin letter or digit: emoji, symbols,
    other scripts; over-long tokens; tokens holding a lone surrogate, which no tokenizer accepts):
    passed through exactly as written."""
    return (
        len(word) > MAX_WORD_CHARS
        or has_surrogate(word)
        or not any(ch.isalnum() and ch.isascii() or is_latin_letter(ch) for ch in word)
    )


def has_surrogate(word: str) -> bool:
    """Whether ``word`` holds a lone surrogate (U+D800–U+DFFF), as text decoded with
    ``errors="surrogateescape"`` does: it cannot be encoded, so the tokenizer must not see it."""
    return not word.isascii() and any("\ud800" <= ch <= "\udfff" for ch in word)


def restored_trail(trail: str, mark: str) -> str:
    """What follows a word in the output when its marks are predicted: its trailing characters
    ``trail`` with the punctuation marks among them replaced by the predicted ``mark``. Closing quotes
    and brackets stay; the mark takes the place of the first mark it replaces, or follows them where
    there was none: ``."`` + "," → ``,"``; ``)`` + "." → ``).``; ``"`` + "" → ``"``."""
    first = next((i for i, ch in enumerate(trail) if ch in LABELLED_MARKS), len(trail))
    return trail[:first] + mark + "".join(ch for ch in trail[first:] if ch not in LABELLED_MARKS)


def encoder_words(words: InputWords, lowercase: bool, unk_token: str) -> list[str]:
    """The words as the encoder sees them: lowercased when the model asks for it; an over-long token
    or one with a lone surrogate becomes the unknown token (after lowercasing, so that "[UNK]" stays
    the special token)."""
    return [
        unk_token if len(w) > MAX_WORD_CHARS or has_surrogate(w) else w for w in model_words(words.words, lowercase)
    ]


@dataclass
class Window:
    """A slice ``[start, end)`` of an input's words, answering for words ``[core_start, core_end)``."""

    start: int
    end: int
    core_start: int
    core_end: int


def check_window_sizes(window_words: int, context_words: int) -> None:
    """Raise ValueError unless the sizes leave a core of at least one word."""
    for name, value in (("window_words", window_words), ("context_words", context_words)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if context_words < 0:
        raise ValueError(f"context_words must be ≥ 0, got {context_words}")
    if window_words - 2 * context_words < 1:
        raise ValueError(f"window_words ({window_words}) must exceed 2 × context_words ({context_words})")


def plan_windows(num_words: int, window_words: int, context_words: int) -> Iterator[Window]:
    """Windows over ``num_words`` words: cores of ``window_words - 2 * context_words`` words tiling
    the input, each with up to ``context_words`` words of context on each side."""
    check_window_sizes(window_words, context_words)
    core = window_words - 2 * context_words
    for core_start in range(0, num_words, core):
        core_end = min(core_start + core, num_words)
        yield Window(max(0, core_start - context_words), min(num_words, core_end + context_words), core_start, core_end)


@dataclass
class EncodedWindow:
    """One model input: subword ids, and the position of the first subword of each word of the core
    (-1 for a word the tokenizer gave no subword)."""

    input_ids: list[int]
    attention_mask: list[int]
    core_positions: np.ndarray


def encode_windows(tokenizer, words: Sequence[str], windows: Sequence[Window], max_length: int) -> Iterator[EncodedWindow]:
    """Tokenise each window; a window whose subwords exceed ``max_length`` is split in two (cores halved,
    context halved) until it fits. An input without words gives one empty window, so that it still
    has a result."""
    empty = True
    for window in windows:
        for piece, encoding in _fit(tokenizer, words, window, max_length):
            empty = False
            positions = first_subword_positions(encoding.word_ids(0), piece.end - piece.start)
            offset = piece.core_start - piece.start
            core = positions[offset : offset + piece.core_end - piece.core_start]
            yield EncodedWindow(
                list(encoding["input_ids"][0]), list(encoding["attention_mask"][0]), np.asarray(core, dtype=np.int64)
            )
    if empty:
        ids = tokenizer("")["input_ids"] or [tokenizer.pad_token_id]
        yield EncodedWindow(list(ids), [1] * len(ids), np.zeros(0, dtype=np.int64))


def _fit(tokenizer, words: Sequence[str], window: Window, max_length: int):
    encoding = tokenize_words(tokenizer, [words[window.start : window.end]], 10**9, lowercase=False)
    if len(encoding["input_ids"][0]) <= max_length or window.end - window.start == 1:
        if len(encoding["input_ids"][0]) > max_length:  # one word alone overflows: keep its start
            encoding = tokenize_words(tokenizer, [words[window.start : window.end]], max_length, lowercase=False)
        yield window, encoding
        return
    context = (window.core_start - window.start) // 2
    if window.core_end - window.core_start > 1:
        middle = (window.core_start + window.core_end) // 2
        cores = [(window.core_start, middle), (middle, window.core_end)]
    else:
        cores = [(window.core_start, window.core_end)]
    for core_start, core_end in cores:
        yield from _fit(
            tokenizer,
            words,
            Window(max(0, core_start - context), min(len(words), core_end + context), core_start, core_end),
            max_length,
        )


#: The longest subword sequence given to a model when neither it nor its tokenizer sets a usable limit.
DEFAULT_MAX_LENGTH = 512


def max_input_length(model_limit: int | None, tokenizer_limit: int | None) -> int:
    """Subwords per window given to a model: the smaller of the model's limit (its
    ``max_position_embeddings``) and the tokenizer's ``model_max_length``; a tokenizer without a real
    limit (transformers writes a huge number) counts as :data:`DEFAULT_MAX_LENGTH`."""
    tokenizer_limit = tokenizer_limit if tokenizer_limit is not None and tokenizer_limit < 100_000 else DEFAULT_MAX_LENGTH
    return min(DEFAULT_MAX_LENGTH if model_limit is None else model_limit, tokenizer_limit)


def word_probabilities(probs: np.ndarray, core_positions: np.ndarray) -> np.ndarray:
    """One window's subword probabilities ``(seq_len, classes)`` → one row per core word (its first
    subword's); a word without subwords gets certainty on class 0 (``O`` / ``LOWER``)."""
    rows = np.zeros((len(core_positions), probs.shape[-1]), dtype=np.float32)
    rows[:, 0] = 1.0
    seen = core_positions >= 0
    rows[seen] = probs[core_positions[seen]]
    return rows


def join_windows(windows: Sequence[dict[str, np.ndarray]], num_words: int) -> dict[str, np.ndarray]:
    """An input's per-word probabilities by task, from its windows' (:func:`word_probabilities` of
    each, in order): one row per input word."""
    return {task: np.concatenate([window[task] for window in windows])[:num_words] for task in windows[0]}


#: Punctuation labels that end a sentence: the next word is capitalised.
SENTENCE_END_LABELS = ("PERIOD", "QUESTION", "EXCLAMATION")
#: In consistent casing, the odds over LOWER that the casing head must give UPPER_FIRST for a capital
#: inside a sentence (a name). 1.5 halves the capitals that only a sentence start explains with no
#: dev set's F1 lower by more than its bootstrap interval; 2 and more cost punctuation
#: (benchmarks/consistency.py, docs/benchmarks.md).
NAME_ODDS = 1.5


def decode(
    words: InputWords,
    probs: dict[str, np.ndarray],
    scheme: LabelScheme,
    lexicon: dict[str, str] | None = None,
    keep_punctuation: bool = False,
    consistent_casing: bool = True,
    tasks: Sequence[str] = TASKS,
    heads: Mapping[Task, Sequence[str]] | None = None,
    ends_sentence: bool = True,
) -> dict:
    """Per-word probabilities (``probs[task]``: one row per word) → labels → the restored text.

    With ``consistent_casing`` the labels are decided jointly at each boundary between words
    (:func:`consistent_labels`): every sentence end is followed by a capital and a word capitalised
    after a comma or no mark is one the casing head takes for a name. Without, each label is its
    head's argmax.

    Returns ``{"text": ..., "words": [{"word", "punctuation", "casing", "punct_score", "case_score"}]}``
    (the scores are the probabilities of the labels given); ``text.split()`` has one token per input
    word, each the input word up to case plus a trailing mark. Where ``probs`` has the disfluency
    head's rows, each word also has ``disfluent`` (DISFLUENT more likely than FLUENT) and
    ``disfluency_score`` (the probability of DISFLUENT; 0 for a word passed through untouched).

    ``tasks`` names what is restored (:func:`check_tasks`): ``("punct", "case")``, both (the default);
    ``("punct",)``: the casing of every word stays as written (its ``casing`` is the written word's
    class) and each mark is the punctuation head's argmax (``consistent_casing`` decides marks and
    capitals together, so it has nothing to decide with the capitals fixed); ``("case",)``: the
    marks of every word stay as written, none added (as ``keep_punctuation`` does for the words that
    have marks), and casing is predicted, a capital following every sentence end written in the
    input when ``consistent_casing``. With ``("punct",)``, ``keep_punctuation`` keeps the marks
    written and predicts the others. The heads' scores stay the probabilities they give the labels
    reported, also for labels kept as written (0 for a casing class the scheme lacks); a head whose
    task is not restored may be missing from ``probs``.

    With ``ends_sentence`` the words are a whole text, whose end ends a sentence as its start starts
    one: where punctuation is restored and the last word's mark is not kept as written, it gets the
    sentence end (PERIOD, QUESTION, EXCLAMATION) the punctuation head finds likeliest
    (:func:`closing_mark`). ``False`` for a piece that may stop mid-sentence: the last word's mark is
    then decided as every other word's.

    A word passed through (:func:`is_opaque`: ``"😀!"``, ``"你好?"``) keeps every character as written,
    the marks trailing it included, whatever the tasks and ``keep_punctuation``: its ``punctuation``
    is the label of those marks (``O`` for none), as for marks kept, and its ``casing`` is LOWER.
    """
    tasks = check_tasks(tasks)
    predict_punct, predict_case = PUNCTUATION in tasks, CASING in tasks
    punct = probs[PUNCTUATION] if predict_punct or PUNCTUATION in probs else _certain(len(words), scheme.punct_labels)
    case = probs[CASING] if predict_case or CASING in probs else _certain(len(words), scheme.case_labels)
    if not len(punct) == len(case) == len(words):
        raise RuntimeError(f"internal error: {len(punct)} predictions for {len(words)} words")
    opaque = [is_opaque(word) for word in words.words]
    # Marks kept as written, their label the one reported: a word passed through keeps every character
    # (its marks too, in every mode); the words' own with keep_punctuation; every word's (none
    # included) when punctuation is not restored.
    fixed = [
        scheme.label_of_marks(mark) if dark or not predict_punct or (keep_punctuation and mark) else None
        for mark, dark in zip(words.marks, opaque)
    ]
    if consistent_casing and predict_case:
        punct_ids, case_ids = consistent_labels(punct, case, scheme, capitalisable(words.words, opaque), fixed)
    else:
        punct_ids, case_ids = punct.argmax(-1), case.argmax(-1)
        for i, label in enumerate(fixed):
            if label is not None:
                punct_ids[i] = scheme.punct_labels.index(label)
    if ends_sentence and predict_punct and len(words) and fixed[-1] is None:
        punct_ids[-1] = closing_mark(punct[-1], scheme, punct_ids[-1])
    restored = []
    for i, word in enumerate(words.words):
        mark = words.marks[i]
        punct_label = scheme.punct_labels[punct_ids[i]]
        case_label = scheme.case_labels[case_ids[i]]
        case_score = float(case[i, case_ids[i]])
        if opaque[i]:
            cased, case_label = word, "LOWER"
        elif predict_case:
            cased = apply_case(word, case_label, lexicon)
        else:
            cased, case_label = word, case_label_of(word)
            known = case_label in scheme.case_labels
            case_score = float(case[i, scheme.case_labels.index(case_label)]) if known else 0.0
        if fixed[i] is not None:
            text = cased + mark
        else:
            text = cased + restored_trail(mark, scheme.mark_of(punct_label))
        restored.append(
            {
                "word": text,
                "punctuation": punct_label,
                "casing": case_label,
                "punct_score": float(punct[i, punct_ids[i]]),
                "case_score": case_score,
            }
        )
    for head, labels in (heads or {}).items():
        if head.name in probs:
            for entry, row, dark in zip(restored, probs[head.name], opaque):
                entry.update(head.word_fields(row, labels, dark))
    return {"text": " ".join(w["word"] for w in restored), "words": restored}


def closing_mark(row: np.ndarray, scheme: LabelScheme, label_id: int) -> int:
    """The mark of a text's last word: ``label_id`` if it ends a sentence, else the sentence end that
    ``row`` (the word's punctuation probabilities) finds likeliest; ``label_id`` for a scheme without
    sentence ends.

    A text's last word has no words after it to read, and a model trained on windows cut inside
    sentences learns to give it the mark most windows' last words have: none (the small on-device
    model leaves most short texts without a closing mark). That the text ends is known, so only
    which end it is remains to be read from the model."""
    ends = [i for i, label in enumerate(scheme.punct_labels) if label in SENTENCE_END_LABELS]
    if not ends or scheme.punct_labels[label_id] in SENTENCE_END_LABELS:
        return int(label_id)
    return ends[int(np.argmax(np.asarray(row)[ends]))]


def _certain(num_words: int, labels: Sequence[str]) -> np.ndarray:
    """Stand-in probabilities of a head whose task is not restored: certainty on class 0."""
    rows = np.zeros((num_words, len(labels)), dtype=np.float32)
    rows[:, 0] = 1.0
    return rows


def check_tasks(tasks: str | Sequence[str]) -> tuple[str, ...]:
    """The tasks to restore, checked, in the order ``("punct", "case")``: a non-empty subset of
    :data:`TASKS` (one name alone may be given as a string)."""
    if isinstance(tasks, str):
        tasks = (tasks,)
    try:
        given = tuple(tasks)
    except TypeError:
        raise TypeError(f"tasks must be a tuple of task names {TASKS}, got {type(tasks).__name__}") from None
    unknown = [task for task in given if task not in TASKS]
    if unknown or not given:
        raise ValueError(f"tasks must be a non-empty subset of {TASKS}, got {given!r}")
    return tuple(task for task in TASKS if task in given)


def capitalisable(words: Sequence[str], opaque: Sequence[bool] | None = None) -> np.ndarray:
    """Whether each word reads differently lowercased and capitalised ("so": yes; "3.5", "😀": no)."""
    opaque = [is_opaque(word) for word in words] if opaque is None else opaque
    known: dict[str, bool] = {}  # a transcript repeats its words: each distinct one is cased once

    def differs(word: str) -> bool:
        if word not in known:
            known[word] = apply_case(word, "UPPER_FIRST") != apply_case(word, "LOWER")
        return known[word]

    return np.array([not dark and differs(word) for word, dark in zip(words, opaque)], dtype=bool)


def consistent_labels(
    punct: np.ndarray,
    case: np.ndarray,
    scheme: LabelScheme,
    can_capitalise: np.ndarray,
    fixed_punctuation: Sequence[str | None] | None = None,
    name_odds: float = NAME_ODDS,
    first_starts_sentence: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Label ids (punctuation, casing) where a sentence end is always followed by a capital, and a
    capital inside a sentence is a name.

    Each boundary between word ``i - 1`` and word ``i`` is decided jointly: the punctuation of word
    ``i - 1`` and the casing of word ``i`` are the pair of labels with the highest product of their
    probabilities among the consistent pairs. A sentence end (PERIOD, QUESTION, EXCLAMATION) followed
    by LOWER is not consistent. UPPER_FIRST after no mark or a comma is a name: its probability counts
    divided by ``name_odds`` there, so that it stays only where the casing head gives it more than
    ``name_odds`` to 1 over LOWER. "hello how are you" with a comma after "hello" and "How" becomes
    "Hello. How are you" or "Hello, how are you", whichever the two heads together find likelier.
    ALL_UPPER and MIXED words ("NASA", "iPhone") are capitals anywhere.

    The labels of a boundary whose next word cannot be capitalised (``can_capitalise`` False, as
    :func:`capitalisable` gives for a number or a symbol) stay the argmax ones. ``fixed_punctuation``
    (a label or None per word) fixes the punctuation of words whose marks are kept or that are passed
    through. With ``first_starts_sentence`` the first word is capitalised as after a sentence end.
    With ``name_odds=1`` only the inconsistent pairs are excluded: labels already consistent stay the
    argmax ones.
    """
    # A floor keeps every label's score above zero, so that a certainty elsewhere (a word without
    # subwords is certain of LOWER) still decides between the others; fixed marks are exact.
    punct = np.maximum(np.asarray(punct, dtype=np.float64), 1e-9)
    case = np.maximum(np.asarray(case, dtype=np.float64), 1e-9)
    if fixed_punctuation is not None:
        for i, label in enumerate(fixed_punctuation):
            if label is not None:
                punct[i] = 0.0
                punct[i, scheme.punct_labels.index(label)] = 1.0
    punct_ids, case_ids = punct.argmax(-1), case.argmax(-1)
    ends = np.array([label in SENTENCE_END_LABELS for label in scheme.punct_labels])
    if len(punct_ids) == 0 or not ends.any() or ends.all() or "UPPER_FIRST" not in scheme.case_labels:
        return punct_ids, case_ids
    # Casing scores after a sentence end (no LOWER) and inside a sentence (UPPER_FIRST discounted).
    after_end = case.copy()
    after_end[:, scheme.case_labels.index("LOWER")] = 0.0
    inside = case.copy()
    inside[:, scheme.case_labels.index("UPPER_FIRST")] /= name_odds
    # Boundary i comes before word i; the text starts with a sentence end before its first word.
    start = np.zeros((1, len(scheme.punct_labels)))
    start[0, np.flatnonzero(ends)[0]] = 1.0
    before = np.concatenate([start, punct[:-1]])
    end_score = before[:, ends].max(-1) * after_end.max(-1)
    other_score = before[:, ~ends].max(-1) * inside.max(-1)
    take_end = end_score > other_score
    decided = np.array(can_capitalise, dtype=bool)
    decided[0] &= first_starts_sentence
    case_ids = np.where(decided, np.where(take_end, after_end.argmax(-1), inside.argmax(-1)), case_ids)
    best_end = np.flatnonzero(ends)[before[:, ends].argmax(-1)]
    best_other = np.flatnonzero(~ends)[before[:, ~ends].argmax(-1)]
    marks = np.where(take_end, best_end, best_other)
    punct_ids[:-1] = np.where(decided[1:], marks[1:], punct_ids[:-1])
    return punct_ids, case_ids


def char_offsets(words: Sequence[dict]) -> list[tuple[int, int]]:
    """Where each restored word lies in the restored text (the words joined by one space):
    ``(start_char, end_char)`` with ``text[start_char:end_char] == word["word"]``."""
    offsets, position = [], 0
    for entry in words:
        end = position + len(entry["word"])
        offsets.append((position, end))
        position = end + 1
    return offsets


def add_char_offsets(words: Sequence[dict]) -> Sequence[dict]:
    """Give each restored word entry its ``start_char`` and ``end_char`` (:func:`char_offsets`), in place."""
    for entry, (start, end) in zip(words, char_offsets(words)):
        entry["start_char"], entry["end_char"] = start, end
    return words


def is_sentence_end(entry: dict) -> bool:
    """Whether a restored word ends a sentence: its punctuation label is PERIOD, QUESTION or
    EXCLAMATION (:data:`SENTENCE_END_LABELS`)."""
    return entry.get("punctuation") in SENTENCE_END_LABELS


def sentences(words: Sequence[dict]) -> list[dict]:
    """The restored words (``decode``'s ``"words"``) cut into sentences after each sentence end
    (:func:`is_sentence_end`) and at the end.

    Each sentence is ``{"text", "first_word", "last_word", "start", "end", "start_char", "end_char"}``:
    its text, the indices of its first and last word (inclusive), the ``start`` of its first word and
    the ``end`` of its last word where the words carry times (else None) and its character span in
    the restored text. Every word is in exactly one sentence; no input, no sentences.
    """
    offsets = char_offsets(words)
    result, first = [], 0
    for i, entry in enumerate(words):
        if i + 1 < len(words) and not is_sentence_end(entry):
            continue
        result.append(
            {
                "text": " ".join(w["word"] for w in words[first : i + 1]),
                "first_word": first,
                "last_word": i,
                "start": words[first].get("start"),
                "end": entry.get("end"),
                "start_char": offsets[first][0],
                "end_char": offsets[i][1],
            }
        )
        first = i + 1
    return result


def restore_from_windows(
    source: InputWords,
    windows: Sequence[dict[str, np.ndarray]],
    scheme: LabelScheme,
    lexicon: dict[str, str],
    *,
    keep_punctuation: bool = False,
    consistent_casing: bool = True,
    tasks: Sequence[str] = TASKS,
    heads: Mapping[Task, Sequence[str]] | None = None,
    ends_sentence: bool = True,
    return_sentences: bool = False,
    return_probabilities: bool = False,
) -> dict:
    """One input's result from its windows' per-word probabilities (in order): the words joined,
    decoded and given character offsets; the fields the input's words carried besides the word
    (``source.extras``: times, ...) added to each word without replacing a restored field, before the
    sentences are cut; ``"sentences"`` and ``"probabilities"`` when asked for."""
    probs = join_windows(windows, len(source))
    result = decode(source, probs, scheme, lexicon, keep_punctuation, consistent_casing, tasks, heads, ends_sentence)
    add_char_offsets(result["words"])
    if source.extras is not None:
        for entry, extra in zip(result["words"], source.extras):
            entry.update((key, value) for key, value in extra.items() if key not in entry)
    if return_sentences:
        result["sentences"] = sentences(result["words"])
    if return_probabilities:
        result["probabilities"] = probs
    return result


__all__ = [
    "CASING",
    "DEFAULT_CONTEXT_WORDS",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_WINDOW_WORDS",
    "EncodedWindow",
    "MAX_WORD_CHARS",
    "NAME_ODDS",
    "PUNCTUATION",
    "SENTENCE_END_LABELS",
    "TASKS",
    "Window",
    "add_char_offsets",
    "capitalisable",
    "char_offsets",
    "check_tasks",
    "check_window_sizes",
    "closing_mark",
    "restore_from_windows",
    "consistent_labels",
    "decode",
    "encode_windows",
    "encoder_words",
    "has_surrogate",
    "is_opaque",
    "is_sentence_end",
    "join_windows",
    "max_input_length",
    "plan_windows",
    "restored_trail",
    "sentences",
    "word_probabilities",
]
