"""Word-level scores, flattened for the Trainer and model cards, computed by the punct_case metric.

Convention: a task's "overall" is the micro average over every class but its null class (its first
declared label, :attr:`hf_punctcase.tasks.Task.null_label`): O for punctuation, LOWER for casing,
FLUENT for disfluency (so that disfluency "overall" is DISFLUENT's). Scores are named
``<task>_<class>_<measure>`` and ``<task>_overall_<measure>``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..labels import IGNORE_INDEX, LabeledWords, LabelScheme
from ..metrics import PunctCase
from ..options.disfluency import DISFLUENCY
from ..tasks import CASING, PUNCTUATION, TASKS, Task, tasks_of
from .dev_sets import AsrDevSet, DevSet


def flatten_scores(scores: dict, prefix: str) -> dict[str, float]:
    """``{"COMMA": {"f1": ...}, "overall_f1": ...}`` → ``{"punct_COMMA_f1": ..., "punct_overall_f1": ...}``."""
    flat: dict[str, float] = {}
    for key, value in scores.items():
        if key == "confusion_matrix":
            continue
        if isinstance(value, dict):
            flat.update({f"{prefix}_{key}_{name}": v for name, v in value.items()})
        else:
            flat[f"{prefix}_{key}"] = value
    return flat


def score_task(task: Task, true: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None) -> dict[str, float]:
    """Per-class and overall P/R/F1 and slot error rate of one task's per-word labels (``labels``: the
    model's label set, default the task's), flattened as ``<task>_...``."""
    if len(true) != len(pred):
        raise ValueError(f"{len(true)} reference {task.name} labels but {len(pred)} predicted")
    pairs = list(zip(true, pred))
    return flatten_scores(PunctCase.scores_from_pairs(pairs, task.null_label, labels or task.labels), task.name)


def score_labels(
    scheme: LabelScheme,
    true_punct: Sequence[str],
    pred_punct: Sequence[str],
    true_case: Sequence[str] | None = None,
    pred_case: Sequence[str] | None = None,
) -> dict[str, float]:
    """Per-class and overall P/R/F1 and slot error rate for punctuation (and casing when given)."""
    scores = score_task(PUNCTUATION, true_punct, pred_punct, scheme.punct_labels)
    if true_case is not None and pred_case is not None:
        scores.update(score_task(CASING, true_case, pred_case, scheme.case_labels))
    return scores


def compute_metrics_for(config):
    """A ``compute_metrics`` for the Trainer: scores the first-subword predictions of each of the model's
    tasks (:func:`~hf_punctcase.tasks.tasks_of` its ``config``; a :class:`LabelScheme` gives punctuation
    and casing), whose logits and labels the Trainer gives in that order (``label_names``: each task's
    ``label_field``). A head task is scored where the dev set has its labels."""
    tasks = tasks_of(config)
    label_sets = {task: task.labels_in(config) for task in tasks}

    def compute_metrics(eval_prediction) -> dict[str, float]:
        label_ids = eval_prediction.label_ids
        label_ids = label_ids if isinstance(label_ids, (tuple, list)) else (label_ids,)
        scores: dict[str, float] = {}
        for task, logits, labels in zip(tasks, eval_prediction.predictions, label_ids):
            mask = labels != IGNORE_INDEX
            if task.required or mask.any():
                names = np.array(label_sets[task])
                scores.update(score_task(task, names[labels[mask]], names[logits.argmax(-1)[mask]], label_sets[task]))
        return scores

    return compute_metrics


def restore_references(
    restorer, references: Sequence[LabeledWords], batch_size: int = 16, **pipeline_kwargs
) -> tuple[list[list[dict]], float]:
    """Run a punct-case pipeline on each reference's words, lowercased and unpunctuated as ASR gives
    them (``pipeline_kwargs``, e.g. ``window_words``, go to the pipeline's call). Returns the
    per-document word entries and the seconds taken.

    Raises if a result has another number of words than its reference: labels zipped out of step
    would score as a silently wrong figure.
    """
    start = time.perf_counter()
    results = restorer([" ".join(ref.words) for ref in references], batch_size=batch_size, **pipeline_kwargs)
    seconds = time.perf_counter() - start
    for index, (ref, result) in enumerate(zip(references, results)):
        if len(result["words"]) != len(ref.words):
            raise RuntimeError(
                f"document {index}: {len(ref.words)} reference words but {len(result['words'])} restored; "
                "a reference word that str.split() does not see as one word (e.g. U+00A0) shifts the labels"
            )
    return [result["words"] for result in results], seconds


def _score_references(restorer, references: Sequence[LabeledWords], batch_size: int) -> dict[str, float]:
    """Restore each reference's words and score the predicted labels against its own
    (:func:`_score_predictions`)."""
    predictions, seconds = restore_references(restorer, references, batch_size)
    return _score_predictions(restorer.scheme, references, predictions, seconds)


def _score_predictions(
    scheme: LabelScheme, references: Sequence[LabeledWords], predictions: Sequence[list[dict]], seconds: float
) -> dict[str, float]:
    """Punctuation (and casing) scores of restored word entries against their references; a reference
    label of None (a source that could not give it) is left out, and casing is scored only if some
    reference has casing labels. Adds ``words`` and ``words_per_second``."""
    pairs: dict[str, tuple[list[str], list[str]]] = {"punctuation": ([], []), "casing": ([], [])}
    for ref, predicted in zip(references, predictions):
        for key, labels in (("punctuation", ref.punct), ("casing", ref.case)):
            for label, word in zip(labels, predicted):
                if label is not None:
                    pairs[key][0].append(label)
                    pairs[key][1].append(word[key])
    casing = pairs["casing"] if pairs["casing"][0] else (None, None)
    scores = score_labels(scheme, *pairs["punctuation"], *casing)
    scores["words"] = sum(len(ref) for ref in references)
    scores["words_per_second"] = scores["words"] / seconds
    return scores


def evaluate_pipeline(restorer, documents: Sequence[tuple[str, str]], batch_size: int = 16) -> dict[str, float]:
    """Score a punct-case pipeline on punctuated reference documents through its public interface.

    Each reference is parsed into words and labels; the pipeline sees the words lowercased and
    unpunctuated (ASR-like), one document per input, and its per-word labels are scored.
    Returns the per-class scores plus ``words`` and ``words_per_second``.
    """
    scheme: LabelScheme = restorer.scheme
    return _score_references(restorer, [scheme.parse(text) for _, text in documents], batch_size)


def evaluate_dataset(restorer, dataset, batch_size: int = 16) -> dict[str, float]:
    """Score a punct-case pipeline on a labelled dataset (``load_punct_case_dataset`` features).

    Consecutive examples of a document are joined again, so the pipeline sees whole documents as a
    user would send them. Labels a source could not give (-1) are left out of the scores; casing is
    scored only when the dataset has casing labels, and each head task of the model
    (``restorer.model_tasks``) where the dataset has its word column.
    """
    references, heads = _documents(dataset)
    scored = [task for task in heads if task in getattr(restorer, "model_tasks", ())]
    # A head that runs only when asked for (the spoken-command head) is asked for when it is scored.
    asked = {task.asked_by: True for task in scored if task.asked_by}
    predictions, seconds = restore_references(restorer, references, batch_size, **asked)
    scores = _score_predictions(restorer.scheme, references, predictions, seconds)
    for task in scored:
        scores.update(score_head(task, heads[task], predictions, restorer.heads[task]))
    return scores


def score_head(
    task: Task, references: Sequence[Sequence[str | None]], predictions: Sequence[list[dict]], labels: Sequence[str]
) -> dict[str, float]:
    """One head task's scores: each document's reference labels (None: not given, left out) against
    the labels its restored word entries show (:meth:`~hf_punctcase.tasks.Task.label_of`)."""
    true, pred = [], []
    for reference, predicted in zip(references, predictions):
        for label, entry in zip(reference, predicted):
            if label is not None:
                true.append(label)
                pred.append(task.label_of(entry, labels))
    return score_task(task, true, pred, labels)


def _documents(dataset) -> tuple[list[LabeledWords], dict[Task, list[list[str | None]]]]:
    """A labelled dataset's consecutive examples of each document joined again: its words with their
    punctuation and casing labels, and the labels of each head task whose word column the dataset has
    (a label the source could not give, -1, gives None)."""
    columns = [task.word_column for task in TASKS.values()]
    names = {column: dataset.features[column].feature.names for column in columns if column in dataset.features}

    def labels(row, column: str) -> list[str | None]:
        if column not in names:
            return [None] * len(row["words"])
        return [names[column][label] if label >= 0 else None for label in row[column]]

    heads = [task for task in TASKS.values() if not task.required and task.word_column in names]
    references: list[LabeledWords] = []
    head_labels: dict[Task, list[list[str | None]]] = {task: [] for task in heads}
    previous = None
    for row in dataset:
        if row["doc_id"] != previous:
            references.append(LabeledWords([], [], []))
            for documents in head_labels.values():
                documents.append([])
            previous = row["doc_id"]
        references[-1].words += row["words"]
        references[-1].punct += labels(row, PUNCTUATION.word_column)
        references[-1].case += labels(row, CASING.word_column)
        for task, documents in head_labels.items():
            documents[-1] += labels(row, task.word_column)
    return references, head_labels


#: The filler words whose removal the disfluency figures report on their own ("um" and "uh").
FILLER_WORDS = ("uh", "um")

#: The commonest discourse markers of conversation (Meteer et al.'s {D ...} and {E ...} words): a fluent
#: transcript may leave them out and lose nothing a reader needs.
DISCOURSE_MARKERS = ("well", "like", "so", "oh", "okay", "ok", "actually", "anyway", "right", "now", "see", "you know", "i mean")

#: A word said again within this many words after it may be a restart's reparandum ("the the", "very
#: itchy skin very sore skin": the first "very" and "skin").
REPEAT_WINDOW = 3


def core_words(words: Sequence[str]) -> list[bool]:
    """Which words of a conversation a reader needs, whatever the disfluency annotation: every word but
    the fillers (:data:`FILLER_WORDS`), the discourse markers (:data:`DISCOURSE_MARKERS`, phrases
    included) and a word said again within :data:`REPEAT_WINDOW` words after it. Words are compared
    lowercased; a transcript's removal of a core word is a loss, whatever else it removes."""
    lowered = [word.lower() for word in words]
    core = [word not in FILLER_WORDS for word in lowered]
    for marker in DISCOURSE_MARKERS:
        pieces = marker.split()
        for i in range(len(lowered) - len(pieces) + 1):
            if lowered[i : i + len(pieces)] == pieces:
                core[i : i + len(pieces)] = [False] * len(pieces)
    for i, word in enumerate(lowered):
        if word in lowered[i + 1 : i + 1 + REPEAT_WINDOW]:
            core[i] = False
    return core


def removal_figures(
    documents: Sequence[Sequence[str]],
    removed: Sequence[Sequence[bool]],
    annotated: Sequence[Sequence[bool]] | None = None,
) -> dict[str, float]:
    """What a disfluency removal did to conversations: the share of their core words (:func:`core_words`)
    kept, the share of their fillers removed, and the counts.

    With ``annotated`` (the words an annotation marks disfluent), also the share kept of the core words
    the annotation keeps (``annotated_core_words_kept``): the measure of core words counts a restart
    that repeats no word ("i was- we went") as needed, so a removal that agrees with the annotators
    falls short of 100% on the first share, and only its removals of words the annotators keep count in
    the second."""
    if len(removed) != len(documents) or (annotated is not None and len(annotated) != len(documents)):
        raise RuntimeError(f"internal error: removal flags or annotations for other than the {len(documents)} documents")
    marks = annotated if annotated is not None else [[False] * len(words) for words in documents]
    core, fillers, fluent_core = [], [], []
    for words, gone, marked in zip(documents, removed, marks):
        if not len(words) == len(gone) == len(marked):
            raise RuntimeError(f"internal error: {len(gone)} removal flags and {len(marked)} annotated for {len(words)} words")
        for word, needed, out, disfluent in zip(words, core_words(words), gone, marked):
            if needed:
                core.append(not out)
                if not disfluent:
                    fluent_core.append(not out)
            elif word.lower() in FILLER_WORDS:
                fillers.append(out)
    figures = {
        "words": sum(len(words) for words in documents),
        "core_words": len(core),
        "core_words_kept": float(np.mean(core)) if core else float("nan"),
        "fillers": len(fillers),
        "fillers_removed": float(np.mean(fillers)) if fillers else float("nan"),
    }
    if annotated is not None:
        figures["annotated_core_words"] = len(fluent_core)
        figures["annotated_core_words_kept"] = float(np.mean(fluent_core)) if fluent_core else float("nan")
    return figures


def evaluate_disfluency(restorer, dataset, batch_size: int = 16) -> dict[str, float]:
    """Score a pipeline with the disfluency head on a dataset with ``disfluency`` labels (e.g. the
    held-out Switchboard calls), one document per input as a user would send it.

    Returns the disfluency scores (``disfl_overall_f1`` etc.: P/R/F1 of DISFLUENT), ``filler_recall``
    (the share of reference "um"/"uh" marked disfluent), ``fluent_retention`` (the share of reference
    FLUENT words kept), the punctuation and casing scores on the same words, ``words`` and
    ``words_per_second``. Words whose disfluency the source does not give are left out of the
    disfluency figures."""
    if DISFLUENCY not in getattr(restorer, "model_tasks", ()):
        raise ValueError("the restorer's model has no disfluency head")
    references, heads = _documents(dataset)
    disfluency = heads.get(DISFLUENCY) or [[None] * len(ref) for ref in references]
    predictions, seconds = restore_references(restorer, references, batch_size)
    scores = score_head(DISFLUENCY, disfluency, predictions, DISFLUENCY.labels)
    fillers, fluent = [], []
    for ref, labels, predicted in zip(references, disfluency, predictions):
        for word, label, entry in zip(ref.words, labels, predicted):
            if word in FILLER_WORDS and label == "DISFLUENT":
                fillers.append(entry["disfluent"])
            if label == "FLUENT":
                fluent.append(not entry["disfluent"])
    scores["filler_recall"] = float(np.mean(fillers)) if fillers else float("nan")
    scores["fillers"] = len(fillers)
    scores["fluent_retention"] = float(np.mean(fluent)) if fluent else float("nan")
    scores.update(_score_predictions(restorer.scheme, references, predictions, seconds))
    return scores


def disfluency_table(figures: dict[str, dict[str, float]]) -> str:
    """A Markdown table of :func:`evaluate_disfluency` figures, one row per named split."""
    rows = [
        "| calls | words | disfl. P | disfl. R | disfl. F1 | um/uh marked | fluent words kept | punct. F1 | casing F1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, scores in figures.items():
        rows.append(
            f"| {name} | {scores['words']:,} | {100 * scores['disfl_overall_precision']:.1f} "
            f"| {100 * scores['disfl_overall_recall']:.1f} | **{100 * scores['disfl_overall_f1']:.1f}** "
            f"| {100 * scores['filler_recall']:.1f}% of {scores['fillers']} | {100 * scores['fluent_retention']:.1f}% "
            f"| {100 * scores['punct_overall_f1']:.1f} | {100 * scores['case_overall_f1']:.1f} |"
        )
    return "\n".join(rows)


def evaluate_dev_set(restorer, dev_set: DevSet, root: Path, batch_size: int = 16, **pipeline_kwargs) -> dict[str, float]:
    """Scores of one dev set as model cards read them (punct_* and, where the set has casing, case_*), with
    ``words`` and ``words_per_second``. A reference label of None (one a source could not give) is left out."""
    references = dev_set.load(root, restorer.scheme)
    predictions, seconds = restore_references(restorer, references, batch_size, **pipeline_kwargs)
    pairs: dict[str, tuple[list[str], list[str]]] = {"punct": ([], []), "case": ([], [])}
    for ref, predicted in zip(references, predictions):
        for key, output in (("punct", "punctuation"), ("case", "casing")):
            for label, word in zip(getattr(ref, key), predicted):
                if label is not None:
                    pairs[key][0].append(label)
                    pairs[key][1].append(word[output])
    casing = pairs["case"] if dev_set.has_casing else (None, None)
    scores = score_labels(restorer.scheme, *pairs["punct"], *casing)
    scores["words"] = sum(len(ref) for ref in references)
    scores["words_per_second"] = scores["words"] / seconds
    return scores


def score_asr_pairs(
    restorer, pairs: Sequence[tuple[list[str], LabeledWords]], batch_size: int = 16, **pipeline_kwargs
) -> tuple[dict, float]:
    """Restore ASR hypotheses (``(words, human reference)`` pairs) and score their punctuation against
    the human transcripts, aligned word by word (``PunctCase`` with words). Returns the metric's scores
    and the seconds the pipeline took."""
    hypotheses = [words for words, _ in pairs]
    start = time.perf_counter()
    results = restorer(hypotheses, is_split_into_words=True, batch_size=batch_size, **pipeline_kwargs)
    seconds = time.perf_counter() - start
    scores = PunctCase().compute(
        predictions=[[w["punctuation"] for w in r["words"]] for r in results],
        references=[ref.punct for _, ref in pairs],
        prediction_words=hypotheses,
        reference_words=[ref.words for _, ref in pairs],
    )
    return scores, seconds


def evaluate_asr_set(restorer, asr_set: AsrDevSet, root: Path, batch_size: int = 16, **pipeline_kwargs) -> dict[str, float]:
    """Punctuation scores of an ASR dev set against its human transcripts (``punct_*``, ``words``,
    ``words_per_second``)."""
    pairs = asr_set.load(root, restorer.scheme)
    scores, seconds = score_asr_pairs(restorer, pairs, batch_size, **pipeline_kwargs)
    flat = flatten_scores(scores, "punct")
    flat["words"] = sum(len(words) for words, _ in pairs)
    flat["words_per_second"] = flat["words"] / seconds
    return flat
