"""The ``"punct-case"`` pipeline: raw transcript in, punctuated and cased text out.

A thin transformers ``ChunkPipeline`` over :mod:`hf_punctcase.restoration` (words, windows, subwords,
probabilities → labels → text) and a backend that maps subword ids to per-task probabilities
(:mod:`hf_punctcase.backends`): a :class:`~hf_punctcase.backends.torch.TorchBackend` over a torch model,
or the backend a graph model carries (:func:`backend_for`). Windows of all inputs are batched together
(``batch_size`` windows per forward pass).

Output contract: ``result["text"].split()`` has one token per input word, in order, each the input
word up to case plus trailing punctuation.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np
import torch
from transformers.pipelines.base import ChunkPipeline

from ..execution import TORCH, ExecutionPlan, check_dtype
from ..inputs import InputWords, parse_inputs, transcript
from ..labels import LabelScheme
from ..restoration import (
    OPTION_NAMES,
    EncodedWindow,
    RestorationEngine,
    RestoreOptions,
    WindowRows,
    batch_rows,
    max_input_length,
)
from ..tasks import PUNCTUATION, head_labels, head_thresholds, option_runner, tasks_of, tasks_together
from ..restoration.engine import weakly_bound
from ..backends.torch import TorchBackend

#: Set by :class:`~hf_punctcase.AutoModelForJointTokenClassification` on a model it loaded for this
#: pipeline: ``(model, tokenizer, *, device, dtype) -> (model, plan)``, which runs it as planned
#: (:func:`hf_punctcase.loading.planned_model`). A model object a caller built runs as it is.
LOADED_FOR_PIPELINE = "punct_case_planner"

#: The pipeline task: ``pipeline("punct-case")``.
PIPELINE_TASK = "punct-case"


def backend_for(model):
    """The backend that runs a pipeline's model (:class:`hf_punctcase.backends.Backend`): a
    :class:`~hf_punctcase.backends.torch.TorchBackend` over a torch model; a model of another runtime
    (:class:`hf_punctcase.formats.onnx.OnnxModel`, ...) carries its own ``backend``."""
    if isinstance(model, torch.nn.Module):
        return TorchBackend(model)
    if not callable(getattr(model, "backend", None)):
        raise TypeError(f"{type(model).__name__} is neither a torch model nor a model with a backend")
    return model.backend


def check_model_object(model: object) -> None:
    """Raise a TypeError unless ``model`` is a punct-case model: one whose config lists the punct-case
    labels (as :class:`~hf_punctcase.JointTokenClassificationModel` and
    :class:`~hf_punctcase.CnnBiLstmForJointTokenClassification` have), rather than any torch module."""
    config = getattr(model, "config", None)
    if config is None or not isinstance(getattr(config, PUNCTUATION.config_field, None), (list, tuple)):
        raise TypeError(
            f"model for the punct-case pipeline must be a punct-case model, whose config lists {PUNCTUATION.config_field} "
            "(a JointTokenClassificationModel or CnnBiLstmForJointTokenClassification), or a checkpoint folder, Hub repo "
            f"id or embedded model name; got {type(model).__name__}"
        )


class PunctCasePipeline(ChunkPipeline):
    """Restore punctuation and casing in ASR transcripts.

    Call with a string, a list of strings, or (with ``is_split_into_words=True``) a list of words or a
    list of such lists. Each result is a dict with ``"text"`` (the restored string) and ``"words"``:
    one entry per input word with the restored ``word``, its ``punctuation`` and ``casing`` labels,
    their ``punct_score`` / ``case_score``, and ``start_char`` / ``end_char``, where the word lies in
    ``"text"`` (``text[start_char:end_char] == word``). A model's further heads add their fields
    (``disfluent`` / ``disfluency_score``, ``paragraph_end`` / ``paragraph_end_score``; the
    spoken-command head's ``command`` / ``command_score`` where the call runs it: ``return_commands``).

    With ``is_split_into_words=True`` the words may also be dicts, as speech recognisers give timed
    words: ``{"word": " Hello", "start": 0.0, "end": 0.4, ...}`` (a list of such dicts is one
    transcript; a list of lists, a batch). ``"word"`` is the word (whitespace around it is dropped,
    none may be inside); every other field (``start``, ``end``, ``probability``, ...) is carried to
    the word's output entry as it is, in its order, after the fields above (a field named as one of
    them is replaced by the restored value).

    Args (at construction or call time):
        window_words (`int`, defaults to 200): words per model window.
        context_words (`int`, defaults to 50): words of context on each side of a window's core.
        vote_windows (`bool`, defaults to `False`): every window answers for all of its words, and each
            word's probabilities are the average of the windows that hold it, weighted by its distance
            from each one's cut edge (the same windows run).
        keep_punctuation (`bool`, defaults to `False`): keep marks already in the input instead of
            stripping them and predicting.
        consistent_casing (`bool`, defaults to `True`): decide the mark after each word together with
            the casing of the next word, so that a sentence end is always followed by a capital and a
            capital after a comma or no mark is a name (:func:`~hf_punctcase.restoration.decode`);
            `False`: each head's argmax.
        ends_sentence (`bool`, defaults to `True`): each input is a whole text, whose last word ends a
            sentence: where the model gives it no sentence end, it gets the one the model finds
            likeliest (:func:`~hf_punctcase.restoration.closing_mark`). `False` for pieces that may stop
            mid-sentence (a caption line, a recogniser's segment): the last word's mark is then the
            model's, as every other word's.
        return_probabilities (`bool`, defaults to `False`): also return ``"probabilities"``, the
            per-word probabilities of each task (``{"punct": array (words, labels), "case": ...}``)
            that the labels were decided from. Every head runs.
        return_commands (`bool`, defaults to `False`): also run the spoken-command head (models with
            one), so that each word carries its ``command`` and ``command_score`` without the commands
            being carried out (``spoken_punctuation=True`` runs it and carries them out). Other calls
            do not run it, nor the encoder layers of its own it may have.
        return_sentences (`bool`, defaults to `False`): also return ``"sentences"``, the restored text
            cut after each sentence end (PERIOD, QUESTION, EXCLAMATION) and at the end: a list of
            ``{"text", "first_word", "last_word", "start", "end", "start_char", "end_char"}`` (word
            indices inclusive; ``start``/``end``: the times of the first and last word where the input
            words carry them, else None; :func:`~hf_punctcase.restoration.sentences`).
        return_paragraphs (`bool`, defaults to `False`): also return ``"paragraphs"``, given as
            sentences are, where the model's paragraph head ends one at a sentence end (models with
            a paragraph head, else ValueError; :func:`~hf_punctcase.restoration.layout.paragraph_spans`). The
            text is unchanged; ``paragraphs=True`` also writes a blank line between them.
        tasks (`tuple`, defaults to `("punct", "case")`): what to restore. ``("punct",)``: predict
            punctuation only, every word keeps its casing as written; ``("case",)``: predict casing
            only, every word keeps its marks as written and none are added. ``keep_punctuation``
            with ``("punct",)`` keeps written marks and predicts the others; with ``("case",)`` it
            changes nothing (:func:`~hf_punctcase.restoration.decode`).
        is_split_into_words (`bool`, defaults to `False`): the input is already split into words (a
            list of words is one transcript; a list of lists is a batch).
        progress (`bool`, *optional*): show a tqdm bar (over transcripts for a list, over windows for
            one long transcript); default: when stderr is a terminal and there are more than 20 of them.

    The model runs in the dtype it has. ``pipeline("punct-case", model=...)`` without a ``dtype`` picks
    the runtime and precision by what the machine has (:func:`hf_punctcase.loading.plan_execution`: the
    default's int8 ONNX Runtime graph on CPUs without AMX or avx512_bf16, bf16 where the CPU or GPU computes in it,
    else fp32); ``execution_plan`` says what was chosen and why. A model object passed in is used as it is.
    """

    def __init__(self, *args, **kwargs):
        check_model_object(kwargs.get("model", args[0] if args else None))
        requested_dtype = kwargs.get("dtype")
        check_dtype(requested_dtype)
        super().__init__(*args, **kwargs)
        if self._batch_size is None:
            self._batch_size = 16  # windows of one long input are batched too
        #: How the model runs and why (:class:`~hf_punctcase.execution.ExecutionPlan`): for a model
        #: loaded by name for this pipeline, the plan that chose its runtime and precision; for a model
        #: object given, the model as it is.
        # Taken off the model: the same object given to another pipeline later runs as it is.
        plan_for = vars(self.model).pop(LOADED_FOR_PIPELINE, None)
        if callable(plan_for) and getattr(self.model, "hf_device_map", None) is None:
            self.model, self.execution_plan = plan_for(self.model, self.tokenizer, device=str(self.device), dtype=requested_dtype)
        else:
            self.execution_plan = ExecutionPlan(
                TORCH if isinstance(self.model, torch.nn.Module) else getattr(self.model, "runtime", TORCH),
                str(getattr(self.model, "dtype", "float32")).removeprefix("torch."),
                str(self.device),
                "the model as given",
            )
        self.backend = backend_for(self.model)
        self.scheme: LabelScheme = self.model.config.label_scheme
        self.lexicon: dict[str, str] = dict(self.model.config.mixed_case_lexicon or {})
        self.max_length = max_input_length(self.model.config.max_position_embeddings, self.tokenizer.model_max_length)
        #: The model's tasks (:func:`hf_punctcase.tasks.tasks_of`): each head task adds its fields to every
        #: word (the disfluency head: ``disfluent``), and its option (``remove_disfluencies=True``) works.
        self.model_tasks = tasks_of(self.model.config)
        #: The head tasks and their labels, as decoding reads them.
        self.heads = head_labels(self.model.config)
        self.head_thresholds = head_thresholds(self.model.config)
        #: Windows, the model's runs and decoding (:class:`~hf_punctcase.restoration.RestorationEngine`),
        #: what the torch-free runtime and a stream drive too.
        self.engine = RestorationEngine(
            tokenizer=self.tokenizer, scheme=self.scheme, lexicon=self.lexicon,
            lowercase_input=self.model.config.lowercase_input, max_length=self.max_length,
            model_tasks=self.model_tasks, heads=self.heads, head_thresholds=self.head_thresholds,
            run_batch=weakly_bound(self._run_batch),
        )

    def save_pretrained(self, save_directory, **kwargs):
        """Save the model (with the code that loads it and this pipeline without the plugin) and the
        tokenizer. The base class would copy this module's file as it is, whose package-relative
        imports do not load outside the plugin."""
        os.makedirs(save_directory, exist_ok=True)
        self.model.save_pretrained(save_directory, **kwargs)
        self.tokenizer.save_pretrained(save_directory, **kwargs)

    # ---- arguments ---------------------------------------------------------------------------
    def _sanitize_parameters(self, progress: bool | None = None, **kwargs):
        # Called with the construction's arguments first, then with each call's: the options a call
        # gives update the ones the pipeline was made with, and are checked once, here.
        unknown = sorted(set(kwargs) - set(OPTION_NAMES))
        if unknown:
            raise TypeError(f"unknown arguments for the punct-case pipeline: {unknown}")
        made_with = getattr(self, "_postprocess_params", {}).get("options", RestoreOptions())
        options = made_with.updated(**kwargs)
        preprocess = {"options": options}
        if progress is not None:
            preprocess["progress"] = progress
        return preprocess, {}, {"options": options}

    def __call__(self, inputs, is_split_into_words: bool = False, **kwargs):
        """Restore one transcript (``str``, or a list of words with ``is_split_into_words=True``) or many
        (a list of either).

        A task option (:func:`hf_punctcase.tasks.task_options`) restores another way.
        ``remove_disfluencies=True`` (models with the disfluency head) returns the fluent text: the
        words marked disfluent are left out and the words kept are punctuated and cased again as a
        transcript of their own; ``words`` still has one entry per input word, those removed marked
        ``removed`` (:func:`hf_punctcase.options.disfluency.merge_fluent`)."""
        run = option_runner(kwargs, self.model_tasks, str(getattr(self.model, "name_or_path", "") or "this model"))
        if run is not None:
            return run(
                lambda items, split, **options: self(items, is_split_into_words=split, **options),
                inputs, is_split_into_words, **kwargs,
            )
        items, single = parse_inputs(inputs, is_split_into_words)
        if single:
            return super().__call__(items[0], **kwargs)
        return self._call_many(items, kwargs)

    def _call_many(self, inputs: list, kwargs: dict):
        if not inputs:
            return []
        progress = kwargs.pop("progress", None)
        if progress is None:
            progress = len(inputs) > 20 and sys.stderr.isatty()
        if not progress:
            return super().__call__(inputs, **kwargs)
        from tqdm.auto import tqdm

        # One bar over transcripts; a generator makes the base class stream results as they come.
        results = super().__call__((item for item in inputs), progress=False, **kwargs)
        return list(tqdm(results, total=len(inputs), unit="transcript", desc="punct-case"))

    # ---- text → windows of subwords -------------------------------------------------------
    def preprocess(self, text, options: RestoreOptions, progress: bool | None = None):
        source = transcript(text)
        planned = self.engine.plan(source, options)
        show = progress if progress is not None else (len(planned) > 20 and sys.stderr.isatty())
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(planned), unit="window", desc="punct-case")
        # Every item carries the same keys (batches across inputs are collated key by key); the
        # input's words travel by reference, "tasks" names the heads the window runs and "is_last"
        # marks the input's final window.
        pending = None
        counted = None if bar is None else (lambda: bar.update(1))
        for encoded, tasks in self.engine.windows(source, options, planned, counted):
            if pending is not None:
                yield pending
            pending = _item(encoded, source, tasks)
        pending["is_last"] = True
        if bar is not None:
            bar.close()
        yield pending

    # ---- subwords → per-word probabilities ---------------------------------------------------
    def _forward(self, model_inputs):
        windows = model_inputs["window"]
        if isinstance(windows, EncodedWindow):  # one unbatched item
            windows = [windows]
        tasks = model_inputs["tasks"]
        if isinstance(tasks, list):  # a batch's items, each naming its window's tasks
            tasks = tasks_together(tasks)
        probs = self.backend(model_inputs["input_ids"], model_inputs["attention_mask"], tasks=tasks)
        # Keep only the rows of the words each window answers for: memory stays bounded by the
        # window batch, whatever the input's length.
        return {
            "probs": batch_rows(probs, windows),
            "source": model_inputs["source"],
            "is_last": model_inputs["is_last"],
        }

    @property
    def lowercase_input(self) -> bool:
        """Whether words are lowercased for the model (its config's ``lowercase_input``)."""
        return self.model.config.lowercase_input

    def run_windows(self, windows: Sequence[EncodedWindow], tasks: tuple[str, ...]) -> list[WindowRows]:
        """Run the model on windows in one call, padded on the right (pad id, mask 0): each window's rows
        of its core words (:meth:`RestorationEngine.run_windows
        <hf_punctcase.restoration.RestorationEngine.run_windows>`); the torch-free
        :class:`~hf_punctcase.runtime.OnDeviceRestorer` has the same method."""
        return self.engine.run_windows(windows, tasks)

    def _run_batch(self, ids: np.ndarray, mask: np.ndarray, tasks: tuple[str, ...]) -> dict[str, np.ndarray]:
        with self.device_placement(), self.get_inference_context()():
            return self.backend(torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device), tasks=tasks)

    # ---- per-word probabilities → labels → text ------------------------------------------
    def postprocess(self, model_outputs, options: RestoreOptions):
        source = model_outputs[-1]["source"]
        if isinstance(source, list):  # batch_size=1 keeps the collated list of one
            source = source[0]
        windows = [window for output in model_outputs for window in _unbatched(output["probs"])]
        return self.engine.result(source, windows, options)


def _item(encoded, source: InputWords, tasks: tuple[str, ...]) -> dict:
    return {
        "input_ids": torch.tensor([encoded.input_ids], dtype=torch.long),
        "attention_mask": torch.tensor([encoded.attention_mask], dtype=torch.long),
        "window": encoded,
        "source": source,
        "tasks": tasks,
        "is_last": False,
    }


def _unbatched(probs) -> list[WindowRows]:
    """A model output's windows' rows: a list of one per window (the base class may have unbatched it
    into one, or kept a list of one)."""
    return [probs] if isinstance(probs, WindowRows) else list(probs)


__all__ = ["PunctCasePipeline", "backend_for", "check_model_object"]
