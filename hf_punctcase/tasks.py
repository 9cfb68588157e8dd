"""What a punct-case model predicts for each word, one :class:`Task` per thing, each declared once.

A task names everything that differs from one task to another: its labels and the config field that
holds them, the dataset column of its word labels and the subword label column ``forward`` takes, the
model's head, output and loss weight, the fields a restored word gets, how it is scored, and the call
option (CLI flag, demo switch) that puts it to use. Model families, the collator, restoration, scoring,
the CLI and the demo iterate the tasks a model has (:func:`tasks_of`) instead of naming them.

Punctuation and casing are the tasks every model has, declared here; they change the text, and
restoration decides them together (:func:`hf_punctcase.restoration.decode`). Every other task is a
*head task*: an optional head reading the encoder, whose label each restored word carries, declared
with the option it makes possible in its own module of :mod:`hf_punctcase.options` (disfluencies,
spoken commands, paragraphs), which importing the package registers; nothing here imports them. A new
head task is one :func:`register_task` call (see docs/extending.md, "Adding a task")::

    >>> from hf_punctcase.tasks import Task, register_task
    >>> BOUNDARY = register_task(Task(
    ...     "boundary", ("INSIDE", "END"), config_field="boundary_labels", word_column="boundary",
    ...     output_field="sentence_end", score_field="sentence_end_score", positive_label="END"))

A config that lists ``boundary_labels`` then builds the head, its batches carry ``boundary_labels``,
its loss adds ``boundary_loss_weight`` × the head's cross-entropy, restored words carry
``sentence_end`` and ``sentence_end_score``, and the Trainer's scores ``boundary_overall_f1``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .inputs import parse_inputs
from .labels import DEFAULT_CASE_LABELS, DEFAULT_PUNCT_LABELS


@dataclass(frozen=True)
class TaskOption:
    """A way of restoring that a task makes possible, switched on by a call option of the pipeline and
    the torch-free runtime (``name=True``), a CLI flag (:attr:`flag`) and a demo checkbox (``label``).

    Attributes:
        name: the call option (``remove_disfluencies``).
        help: the CLI flag's help.
        label: the demo checkbox's label.
        run: ``run(restore, inputs, is_split_into_words, **options)``, the restoration with the option
            on, given the restorer's own call ``restore(inputs, is_split_into_words, **options)``.
        rank: where the option runs when several are on: an option of higher rank runs outside those
            of lower rank, its restorations being theirs (disfluency removal restores the kept words
            with spoken punctuation and paragraphs; paragraphs lay out the text that dictated breaks
            have laid out).
    """

    name: str
    help: str
    label: str
    run: Callable[..., Any]
    rank: int = 0

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Task:
    """One per-word prediction of a punct-case model.

    Attributes:
        name: the task's name: the prefix of its head (``<name>_classifier``), its logits
            (``<name>_logits``), its subword label column (``<name>_labels``), its probabilities in a
            backend's output and its scores (``<name>_overall_f1``).
        labels: the default label set; the first is the null class, left out of "overall" scores.
        config_field: the config attribute listing the model's labels (None or absent: no such head).
        word_column: the dataset column of word-level label ids.
        output_field: the restored word's field showing the label (for a head task).
        score_field: the restored word's field showing the label's probability (for a head task).
        loss_weight_field: the config attribute weighting the task's cross-entropy (1 when absent).
        required: every model has it (punctuation, casing): restoration decodes it into the text.
        positive_label: for a two-class head task, the label whose probability is the score; the
            output field is then a bool, True where that probability exceeds the decision threshold
            (0.5, or the config's :attr:`threshold_field`).
        threshold_field: the config attribute that may hold the task's decision threshold (0.5 where
            it holds none), tuned on dev data (a rare label, such as a paragraph's end, is
            under-predicted at 0.5). For a task with a positive label, the label is given where its
            probability exceeds the threshold; for a task of more labels, a word takes the likeliest
            label but the null one where the probabilities of all labels but the null one add up to
            more than the threshold, and the null label otherwise (the likeliest of many labels may
            be the null one at 0.45 while the others together have 0.55).
        option: the way of restoring that the task makes possible, if any.
        asked_by: the restore option (a switch of :class:`~hf_punctcase.restoration.RestoreOptions`)
            without which a call does not run the head, its words then lacking the head's fields; None:
            the head runs on every call. For a head that only its option uses and that may carry layers
            of its own (the spoken-command head): calls that do not use it do not pay for it. The option
            of :attr:`option` and ``return_probabilities`` switch it on too (:func:`tasks_to_run`).
        title: what the task is called in messages (``"disfluency"``: "a disfluency head"); default: ``name``.
        description: the task in a few words (CLI help, docs).
        reads: for a head whose option reads its labels of some words only (spoken punctuation reads
            them only of the words that spell a command phrase): ``reads(words)``, a bool per word of an
            input (lowercased), True for each word the option may read. A call that runs the head for
            its option alone (:attr:`~hf_punctcase.restoration.RestoreOptions.option_heads`) runs it
            only on the windows whose core holds such a word, and gives every other word the null
            label with certainty, as it gives a word passed through (:func:`words_read`).
    """

    name: str
    labels: tuple[str, ...]
    config_field: str
    word_column: str
    output_field: str
    score_field: str
    loss_weight_field: str | None = None
    required: bool = False
    positive_label: str | None = None
    threshold_field: str | None = None
    option: TaskOption | None = None
    asked_by: str | None = None
    title: str = ""
    description: str = ""
    reads: Callable[[Sequence[str]], Sequence[bool]] | None = None

    def __repr__(self) -> str:
        return f"Task({self.name!r})"

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "title", self.title or self.name)
        if not self.name.isidentifier():
            raise ValueError(f"a task name must be an identifier, got {self.name!r}")
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError(f"task {self.name!r} needs two or more distinct labels, got {self.labels}")
        if self.positive_label is not None and (len(self.labels) != 2 or self.positive_label not in self.labels):
            raise ValueError(f"task {self.name!r}: positive_label must be one of two labels {self.labels}")

    @property
    def label_field(self) -> str:
        """The subword label column of a batch, and the ``forward`` argument it feeds."""
        return f"{self.name}_labels"

    @property
    def logits_field(self) -> str:
        return f"{self.name}_logits"

    @property
    def classifier(self) -> str:
        """The name of the head's module in a model (and so of its weights)."""
        return f"{self.name}_classifier"

    @property
    def null_label(self) -> str:
        return self.labels[0]

    def labels_in(self, config: Any) -> tuple[str, ...] | None:
        """The labels a config (object or config.json dict) gives this task; None where it has no such head."""
        value = config.get(self.config_field) if isinstance(config, Mapping) else getattr(config, self.config_field, None)
        return tuple(value) if value else None

    def check_labels(self, labels: Sequence[str]) -> list[str]:
        """A head task's labels from a config, checked: distinct strings, and for a two-class task with a
        positive label exactly :attr:`labels` (its output reads one of them by position)."""
        labels = list(labels)
        if len(labels) < 2 or len(set(labels)) != len(labels) or not all(isinstance(label, str) for label in labels):
            raise ValueError(f"{self.config_field} must be two or more distinct label names, got {labels}")
        if self.positive_label is not None and tuple(labels) != self.labels:
            raise ValueError(f"{self.config_field} must be {list(self.labels)} or None, got {labels}")
        return labels

    def threshold_in(self, config: Any) -> float:
        """The decision threshold of the positive label that a config (object or config.json dict)
        gives, checked; 0.5 where it gives none."""
        if self.threshold_field is None:
            return 0.5
        value = config.get(self.threshold_field) if isinstance(config, Mapping) else getattr(config, self.threshold_field, None)
        if value is None:
            return 0.5
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
            raise ValueError(f"{self.threshold_field} must be a number between 0 and 1, got {value!r}")
        return float(value)

    def word_fields(
        self, row: np.ndarray, labels: Sequence[str], passed_through: bool, threshold: float = 0.5
    ) -> dict[str, Any]:
        """A restored word's fields from the head's probabilities for the word (a word passed through
        untouched is certain of the null label); ``threshold``: the positive label's decision threshold."""
        if passed_through:
            row = np.zeros(len(labels), dtype=np.float32)
            row[0] = 1.0
        if self.positive_label is not None:
            score = float(row[list(labels).index(self.positive_label)])
            return {self.output_field: score > threshold, self.score_field: score}
        if self.threshold_field is not None:
            best = 1 + int(np.argmax(row[1:])) if 1.0 - float(row[0]) > threshold else 0
        else:
            best = int(np.argmax(row))
        return {self.output_field: labels[best], self.score_field: float(row[best])}

    def label_of(self, entry: Mapping[str, Any], labels: Sequence[str]) -> str:
        """The label a restored word's entry shows (what scoring compares with the reference)."""
        value = entry[self.output_field]
        if self.positive_label is not None:
            return self.positive_label if value else next(label for label in labels if label != self.positive_label)
        return value


#: Every task a model may have, by name, in the order models output them and scores list them.
TASKS: dict[str, Task] = {}


def register_task(task: Task) -> Task:
    """Add a task to :data:`TASKS` (returns it); its name and its fields must be new."""
    if task.name in TASKS:
        raise ValueError(f"a task named {task.name!r} is already registered")
    for other in TASKS.values():
        taken = {other.config_field, other.word_column, other.output_field, other.score_field}
        clash = taken & {task.config_field, task.word_column, task.output_field, task.score_field}
        if clash:
            raise ValueError(f"task {task.name!r} uses {sorted(clash)}, already used by task {other.name!r}")
        if task.option is not None and other.option is not None and task.option.name == other.option.name:
            raise ValueError(f"task {task.name!r}: the option {task.option.name} is task {other.name!r}'s")
    TASKS[task.name] = task
    return task


def unregister_task(name: str) -> None:
    """Remove a task that :func:`register_task` added (the required ones stay)."""
    if TASKS[name].required:
        raise ValueError(f"task {name!r} is one every model has")
    del TASKS[name]


PUNCTUATION = register_task(
    Task(
        "punct", DEFAULT_PUNCT_LABELS, config_field="punct_labels", word_column="punct",
        output_field="punctuation", score_field="punct_score", loss_weight_field="punct_loss_weight",
        required=True, title="punctuation", description="the mark after each word",
    )
)
CASING = register_task(
    Task(
        "case", DEFAULT_CASE_LABELS, config_field="case_labels", word_column="case",
        output_field="casing", score_field="case_score", loss_weight_field="case_loss_weight",
        required=True, title="casing", description="how each word is written",
    )
)
def tasks_of(config: Any) -> tuple[Task, ...]:
    """The tasks a model has, by its config (object or config.json dict): every registered task whose
    labels it lists, in :data:`TASKS` order."""
    return tuple(task for task in TASKS.values() if task.required or task.labels_in(config) is not None)


def head_tasks(config: Any) -> tuple[Task, ...]:
    """The head tasks a model has: :func:`tasks_of` without punctuation and casing."""
    return tuple(task for task in tasks_of(config) if not task.required)


def head_labels(config: Any) -> dict[Task, tuple[str, ...]]:
    """The model's head tasks and the labels its config gives each (what restoration decodes)."""
    return {task: task.labels_in(config) for task in head_tasks(config)}


def head_thresholds(config: Any) -> dict[Task, float]:
    """The decision thresholds the config gives its head tasks' positive labels (those it sets)."""
    thresholds = {task: task.threshold_in(config) for task in head_tasks(config)}
    return {task: threshold for task, threshold in thresholds.items() if threshold != 0.5}


def tasks_named(names: Iterable[str]) -> tuple[Task, ...]:
    """The registered tasks among ``names`` (a backend's outputs), in :data:`TASKS` order."""
    names = set(names)
    return tuple(task for task in TASKS.values() if task.name in names)


def tasks_to_run(model_tasks: Iterable[Task], options: Any) -> tuple[str, ...]:
    """The names of a model's tasks that a call with ``options`` (a
    :class:`~hf_punctcase.restoration.RestoreOptions`) runs: every one but those whose
    :attr:`Task.asked_by` option is off, unless the call returns every task's probabilities."""
    return tuple(
        task.name
        for task in model_tasks
        if task.asked_by is None
        or options.return_probabilities
        or getattr(options, task.asked_by)
        or task.name in options.option_heads
    )


def tasks_together(each: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """The tasks that a batch of windows runs, each window running the tasks named in one of ``each``:
    every one of them, in :data:`TASKS` order."""
    names = set().union(*each)
    return tuple(name for name in TASKS if name in names)


def words_read(model_tasks: Iterable[Task], options: Any, words: Sequence[str]) -> dict[str, np.ndarray]:
    """For each head that a call with ``options`` runs for its option alone (named in
    ``options.option_heads``, neither asked for by its own switch nor for its probabilities) and whose
    task says which words its option reads (:attr:`Task.reads`): a bool per word of ``words``, True
    where the option may read the head's label. Such a head runs only on the windows that hold a word
    read (:func:`window_tasks`); the other words are certain of its null label."""
    read = {}
    for task in model_tasks:
        if task.reads is None or task.name not in options.option_heads or options.return_probabilities:
            continue
        if task.asked_by is not None and getattr(options, task.asked_by):
            continue
        mask = np.asarray(task.reads([word.lower() for word in words]), dtype=bool)
        if mask.shape != (len(words),):
            raise RuntimeError(f"internal error: task {task.name!r} read {mask.shape} of {len(words)} words")
        read[task.name] = mask
    return read


def window_tasks(tasks: tuple[str, ...], read: Mapping[str, np.ndarray], core_start: int, core_size: int) -> tuple[str, ...]:
    """The tasks of ``tasks`` that a window whose core is words ``[core_start, core_start + core_size)``
    runs: a head of ``read`` (:func:`words_read`) only where its core holds a word read."""
    return tuple(name for name in tasks if name not in read or read[name][core_start : core_start + core_size].any())


def task_options() -> tuple[TaskOption, ...]:
    """The options the registered tasks make possible."""
    return tuple(task.option for task in TASKS.values() if task.option is not None)


def option_runner(options: dict[str, Any], model_tasks: Sequence[Task], model: str = "this model") -> Callable | None:
    """The run of the task options switched on among a call's ``options`` (taken out of them; an option
    set to False is taken out too), or None. Several options run together, the one of highest
    :attr:`TaskOption.rank` outermost. Raises ValueError when the model lacks an option's task."""
    chosen = []
    for task in TASKS.values():
        # A head's labels asked for (return_commands=True) need the head as much as its option does.
        if task.asked_by is not None and options.get(task.asked_by) and task not in model_tasks:
            others = ", ".join(t.title for t in model_tasks)
            raise ValueError(
                f"{task.asked_by}=True needs a model with a {task.title} head ({task.config_field}); "
                f"{model} has no {task.title} head, only {others}"
            )
        if task.option is not None and options.pop(task.option.name, False):
            if task not in model_tasks:
                others = ", ".join(t.title for t in model_tasks)
                raise ValueError(
                    f"{task.option.name}=True needs a model with a {task.title} head ({task.config_field}); "
                    f"{model} has no {task.title} head, only {others}"
                )
            chosen.append(task.option)
    if not chosen:
        return None
    return _together(tuple(sorted(chosen, key=lambda option: -option.rank)))


def finish_each(restore: Callable, inputs: Any, is_split_into_words: bool, finish: Callable, **options: Any) -> Any:
    """What an option's run (:attr:`TaskOption.run`) that finishes one restoration returns: ``restore``
    (the restorer's own call) on ``inputs`` with ``options``, then ``finish(result, words)`` for each
    transcript, ``words`` its words as given (str or timed dicts); one result for one transcript, a
    list for a batch ([] for an empty batch)."""
    items, single = parse_inputs(inputs, is_split_into_words)
    if not items:
        return []
    batch = [inputs] if single else list(inputs)
    restored = restore(inputs, is_split_into_words, **options)
    tokens = [item.split() if isinstance(item, str) else list(item) for item in batch]
    results = [finish(result, words) for result, words in zip([restored] if single else restored, tokens)]
    return results[0] if single else results


def _together(options: Sequence[TaskOption]) -> Callable:
    """One run of ``options`` (outermost first): each restores through the ones after it."""
    outer, inner = options[0], options[1:]
    if not inner:
        return outer.run
    run_inner = _together(inner)

    def run(restore, inputs, is_split_into_words: bool, **given):
        def restore_inner(items, split, **kwargs):
            return run_inner(restore, items, split, **kwargs)

        return outer.run(restore_inner, inputs, is_split_into_words, **given)

    return run


#: The head tasks' old names here, each now its option module's (:mod:`hf_punctcase.options`).
_MOVED = {"DISFLUENCY": ("disfl", "disfluency"), "COMMAND": ("command", "dictation"), "PARAGRAPH": ("paragraph", "paragraphs")}


def __getattr__(name: str) -> Task:
    # Read from the registry, which the package's import fills, so that the core imports no option.
    if name in _MOVED:
        task, module = _MOVED[name]
        import warnings

        warnings.warn(
            f"hf_punctcase.tasks.{name} is now hf_punctcase.options.{module}.{name} "
            f"(also hf_punctcase.options.{name}); the old name goes in the next release",
            FutureWarning,
            stacklevel=2,
        )
        return TASKS[task]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CASING",
    "PUNCTUATION",
    "TASKS",
    "Task",
    "TaskOption",
    "head_labels",
    "head_tasks",
    "finish_each",
    "head_thresholds",
    "option_runner",
    "register_task",
    "task_options",
    "tasks_named",
    "tasks_of",
    "tasks_to_run",
    "tasks_together",
    "unregister_task",
    "window_tasks",
    "words_read",
]
