"""Per-word probabilities → labels → the restored text: each boundary's mark and the next word's
casing decided together, the text's last word closed, and one input's result put together from its
windows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..inputs import InputWords
from ..labels import SENTENCE_END_LABELS, LabelScheme, apply_case, case_label_of, restored_trail
from ..tasks import CASING, PUNCTUATION, words_read
from .layout import paragraph_spans
from .options import RESTORED_TASKS, RestoreOptions, check_tasks
from .sentences import add_char_offsets, sentences
from .windows import WindowRows, join_windows
from .words import capitalisable, is_opaque

if TYPE_CHECKING:
    from ..tasks import Task

#: In consistent casing, the odds over LOWER that the casing head must give UPPER_FIRST for a capital
#: inside a sentence (a name). 1.5 halves the capitals that only a sentence start explains with no
#: dev set's F1 lower by more than its bootstrap interval; 2 and more cost punctuation
#: (benchmarks/consistency.py, docs/benchmarks.md).
NAME_ODDS = 1.5

#: With ``keep_punctuation``, the fewest consecutive words without a mark that make a stretch bare (to be
#: restored) inside a text that has marks elsewhere; a shorter run is part of the written text around
#: it and stays as written. Writers rarely go this long without a mark; an ASR whose punctuation drops
#: out over a span does (docs/dictation.md, "Kept means kept").
BARE_RUN_WORDS = 20
#: With ``keep_punctuation``, inside a run long enough to be bare: the words from its first capital on are
#: written (a written stretch that opens after a bare one, its first sentence run on into the bare words
#: before it) where a mark closes the run within this many words of that capital. Bare words carry
#: neither marks nor capitals; a longer unmarked stretch from a capital stays bare, as does a capital's
#: run that the text's end closes (docs/dictation.md, "Kept means kept").
CAPITAL_RUN_WORDS = 30


class WrittenStretches:
    """Which words of a partly punctuated text arrived written, marks and casing both (with
    ``keep_punctuation``: they leave as they came, their marks, their lack of a mark and their casing),
    decided word by word as they arrive, so that a stream decides as the pipeline does
    (:func:`written_words` is this over a whole text).

    Text is cut into runs of consecutive words without a mark. A run of at least ``bare_run_words``
    words arrived bare (an ASR whose punctuation dropped out), and so does a text without any mark,
    except the words of a long run from its first capital on, which are written where a mark closes
    the run within ``capital_run_words`` words of that capital: a written stretch whose first sentence
    runs on into the bare words before it. A shorter run belongs to the written text around it where
    that text is cased: where a capital appears in its sentence before the run's end or in the marked
    word that closes it. A marked word is written where a capital appears in its sentence up to it.
    Every other word is restored (a word's own marks are kept all the same). A sentence starts after a
    word whose marks end one (``.``, ``?``, ``!``). A run's words are decided once the marked word
    closing it arrives, once it reaches ``bare_run_words`` words (from its first capital on: once
    ``capital_run_words`` words from that capital have passed unmarked), or at the text's end
    (:meth:`finish`)."""

    def __init__(self, bare_run_words: int | None = None, capital_run_words: int | None = None) -> None:
        self.bare_run_words = bare_run_words or BARE_RUN_WORDS
        self.capital_run_words = capital_run_words or CAPITAL_RUN_WORDS
        self._capital = False  # a capital in the current sentence, up to the words decided
        self._marked = False  # a mark in the text so far
        self._open: list[str] = []  # the words of the run not yet decided
        self._long = False  # the current run is long: bare, but for the words held from its first capital
        self._holding = False  # the undecided words of a long run, from its first capital: written if a mark comes in time
        self._held_once = False  # the long run has had its capital: the rest of it is bare

    @property
    def undecided(self) -> int:
        """How many of the words pushed are not decided yet (the last ones)."""
        return len(self._open)

    def push(self, word: str, mark: str) -> list[bool]:
        """Take the next word and its trailing characters; return the flags this decides, in order, for
        the earliest words not decided before."""
        if not mark:
            if self._long:
                self._capital = self._capital or _has_capital(word)
                if self._holding:
                    self._open.append(word)
                    return self._held_too_long()
                if self._held_once or not _has_capital(word):
                    return [False]
                self._holding, self._held_once, self._open = True, True, [word]
                return self._held_too_long()
            self._open.append(word)
            if len(self._open) < self.bare_run_words:
                return []
            self._long = True
            first_capital = next((index for index, open_word in enumerate(self._open) if _has_capital(open_word)), None)
            if first_capital is None:
                return self._close(False)
            # Bare up to the first capital; from it on, held for a mark to close the run in time.
            self._capital = True
            flags, self._open = [False] * first_capital, self._open[first_capital:]
            self._holding = self._held_once = True
            return flags + self._held_too_long()
        self._marked = True
        flags = self._close(True if self._holding else None, closing=word) if self._open else []
        self._long = self._holding = self._held_once = False
        self._capital = self._capital or _has_capital(word)
        flags.append(self._capital)
        if any(ch in ".?!" for ch in mark):
            self._capital = False
        return flags

    def finish(self) -> list[bool]:
        """The flags of the words still undecided at the text's end; ready for a new text after."""
        flags = self._close(False if self._holding else None) if self._open else []
        self.__init__(self.bare_run_words, self.capital_run_words)
        return flags

    def _held_too_long(self) -> list[bool]:
        """The held words of a long run, bare, once ``capital_run_words`` of them have passed without a
        mark (none before)."""
        if len(self._open) < self.capital_run_words:
            return []
        self._holding = False
        return self._close(False)

    def _close(self, written: bool | None, closing: str | None = None) -> list[bool]:
        run, self._open = self._open, []
        in_run = any(_has_capital(word) for word in run)
        if written is None:
            written = self._marked and (self._capital or in_run or (closing is not None and _has_capital(closing)))
        self._capital = self._capital or in_run
        return [written] * len(run)


def written_words(
    words: Sequence[str], marks: Sequence[str], bare_run_words: int | None = None, capital_run_words: int | None = None
) -> list[bool]:
    """:class:`WrittenStretches`' flags for a whole text: ``words`` and ``marks``, each word and its
    trailing characters as given (``bare_run_words``, ``capital_run_words``: default
    :data:`BARE_RUN_WORDS`, :data:`CAPITAL_RUN_WORDS`)."""
    stretches = WrittenStretches(bare_run_words, capital_run_words)
    flags = [flag for word, mark in zip(words, marks) for flag in stretches.push(word, mark)]
    return flags + stretches.finish()


def _has_capital(word: str) -> bool:
    return any(ch.isupper() for ch in word)


def decode(
    words: InputWords,
    probs: dict[str, np.ndarray],
    scheme: LabelScheme,
    lexicon: dict[str, str] | None = None,
    keep_punctuation: bool = False,
    consistent_casing: bool = True,
    tasks: Sequence[str] = RESTORED_TASKS,
    heads: Mapping[Task, Sequence[str]] | None = None,
    ends_sentence: bool = True,
    thresholds: Mapping[Task, float] | None = None,
    written: Sequence[bool] | None = None,
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

    With ``keep_punctuation`` the stretches that arrived punctuated and cased (:class:`WrittenStretches`;
    ``written``: its flags for the words, where the caller decided them, as a stream does) keep their
    marks, their lack of a mark and their casing; the other words keep the marks they have and are
    restored.

    A word passed through (:func:`is_opaque`: ``"😀!"``, ``"你好?"``) keeps every character as written,
    the marks trailing it included, whatever the tasks and ``keep_punctuation``: its ``punctuation``
    is the label of those marks (``O`` for none), as for marks kept, and its ``casing`` is LOWER.
    """
    tasks = check_tasks(tasks)
    punct_name, case_name = PUNCTUATION.name, CASING.name
    predict_punct, predict_case = punct_name in tasks, case_name in tasks
    punct = probs[punct_name] if predict_punct or punct_name in probs else _certain(len(words), scheme.punct_labels)
    case = probs[case_name] if predict_case or case_name in probs else _certain(len(words), scheme.case_labels)
    if not len(punct) == len(case) == len(words):
        raise RuntimeError(f"internal error: {len(punct)} predictions for {len(words)} words")
    opaque = [is_opaque(word) for word in words.words]
    # With keep_punctuation, the stretches that arrived punctuated keep their marks, their lack of one
    # and their casing; only the bare stretches are restored.
    if not keep_punctuation:
        written = [False] * len(words)
    elif written is None:
        written = written_words(words.words, words.marks)
    # Marks kept as written, their label the one reported: a word passed through keeps every character
    # (its marks too, in every mode); the words' own with keep_punctuation, and no mark for a word of
    # a written stretch that has none; every word's (none included) when punctuation is not restored.
    fixed = [
        scheme.label_of_marks(mark) if dark or not predict_punct or (keep_punctuation and (mark or kept)) else None
        for mark, dark, kept in zip(words.marks, opaque, written)
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
        elif predict_case and not written[i]:
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
            threshold = (thresholds or {}).get(head, 0.5)
            for entry, row, dark in zip(restored, probs[head.name], opaque):
                entry.update(head.word_fields(row, labels, dark, threshold))
    return {"text": " ".join(w["word"] for w in restored), "words": restored}


def _null_row(width: int) -> np.ndarray:
    row = np.zeros(width, dtype=np.float32)
    row[0] = 1.0
    return row


def _with_null_rows(window: WindowRows, read: Mapping[str, np.ndarray], widths: Mapping[str, int]) -> WindowRows:
    """A window's rows with a null-label row for each word of a head in ``read`` that it did not run."""
    missing = [name for name in read if name not in window.probs]
    if not missing:
        return window
    rows = dict(window.probs)
    for name in missing:
        rows[name] = np.tile(_null_row(widths[name]), (len(window.weights), 1))
    return WindowRows(rows, window.core_start, window.weights)


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


def restore_from_windows(
    source: InputWords,
    windows: Sequence[WindowRows],
    scheme: LabelScheme,
    lexicon: dict[str, str],
    options: RestoreOptions,
    heads: Mapping[Task, Sequence[str]] | None = None,
    thresholds: Mapping[Task, float] | None = None,
) -> dict:
    """One input's result from what its windows say of their words (in order): the words joined,
    decoded as ``options`` say and given character offsets; the fields the input's words carried
    besides the word (``source.extras``: times, ...) added to each word without replacing a restored
    field, before the sentences are cut; ``"sentences"``, ``"paragraphs"`` and ``"probabilities"`` when
    asked for. A head that the call ran for its option alone (:func:`~hf_punctcase.tasks.words_read`)
    gives its probabilities only of the words its option reads: every other word is certain of its
    null label, whichever windows ran it."""
    read = words_read(heads or {}, options, source.words)
    if read:
        widths = {task.name: len(labels) for task, labels in (heads or {}).items()}
        windows = [_with_null_rows(window, read, widths) for window in windows]
    probs = join_windows(windows, len(source))
    for name, mask in read.items():
        probs[name][~mask] = _null_row(widths[name])
    result = decode(
        source, probs, scheme, lexicon, options.keep_punctuation, options.consistent_casing, options.tasks, heads,
        options.ends_sentence, thresholds,
    )
    add_char_offsets(result["words"])
    if source.extras is not None:
        for entry, extra in zip(result["words"], source.extras):
            entry.update((key, value) for key, value in extra.items() if key not in entry)
    if options.return_sentences:
        result["sentences"] = sentences(result["words"])
    if options.return_paragraphs:
        result["paragraphs"] = paragraph_spans(result)
    if options.return_probabilities:
        result["probabilities"] = probs
    return result
