"""On-device restoration: a folder exported to ONNX, run with ONNX Runtime, tokenizers and NumPy.

:class:`OnDeviceRestorer` gives the same result as ``pipeline("punct-case")`` on the same folder: the
words, windows, subwords and decoding are :mod:`hf_punctcase.restoration`'s (the functions the
pipeline calls), and the model runs through :class:`~hf_punctcase.backends.onnxruntime.OnnxBackend`,
as it does in the pipeline. Neither torch nor transformers is imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path


from ..execution import ONNXRUNTIME
from ..inputs import parse_inputs, transcript
from ..labels import LabelScheme
from ..restoration import EncodedWindow, RestorationEngine, RestoreOptions, WindowRows, max_input_length
from ..restoration.engine import weakly_bound
from ..tasks import head_labels, head_thresholds, option_runner, tasks_of
from ..backends.onnxruntime import OnnxBackend, read_export_info
from .tokenizer import RuntimeTokenizer


def read_export_settings(folder: str | os.PathLike) -> dict:
    """What restoration needs to know of an exported folder: its label scheme, MIXED-case lexicon,
    whether words are lowercased for the model (from ``config.json``) and the longest window in
    subwords (from :data:`~hf_punctcase.backends.onnxruntime.EXPORT_INFO_FILE`, as the export resolved it from the model's config).

    Returns ``{"scheme", "lexicon", "lowercase_input", "model_max_length", "tasks", "labels", "heads",
    "head_thresholds"}`` (the model's tasks, :func:`~hf_punctcase.tasks.tasks_of`, the labels of each by
    name, its head tasks with their labels, and the decision thresholds its config sets)."""
    folder = Path(folder)
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{folder} lacks config.json")
    config = json.loads(config_file.read_text(encoding="utf-8"))
    info = read_export_info(folder)
    if "punct_labels" not in config or "case_labels" not in config:
        raise ValueError(f"{config_file} has no punct_labels / case_labels: not a punctuation and casing model")
    return {
        "scheme": LabelScheme(tuple(config["punct_labels"]), tuple(config["case_labels"])),
        "lexicon": dict(config.get("mixed_case_lexicon") or {}),
        "lowercase_input": bool(config.get("lowercase_input", True)),
        "model_max_length": info.get("max_position_embeddings"),
        "tasks": tasks_of(config),
        "labels": {task.name: task.labels_in(config) or () for task in tasks_of(config)},
        "heads": head_labels(config),
        "head_thresholds": head_thresholds(config),
    }


class OnDeviceRestorer:
    """Restore punctuation and casing with an ONNX export (``hf-punctcase export-onnx``), without torch.

    ``OnDeviceRestorer(folder)(text)`` returns what ``pipeline("punct-case", model=folder)(text)``
    returns: ``{"text": ..., "words": [{"word", "punctuation", "casing", "punct_score", "case_score",
    "start_char", "end_char"}, ...]}``, and ``"sentences"`` / ``"probabilities"`` when asked for. A
    list of transcripts gives a list of results (their windows batched together); with
    ``is_split_into_words=True`` a list of words is one transcript and a list of such lists a batch.
    The output contract is the pipeline's: one output token per input word, in order, each the input
    word up to case plus a trailing mark.

    Args:
        model_dir: a folder written by :func:`hf_punctcase.export.onnx.export_onnx`, or ``"on-device"``
            (the default) for the package's embedded on-device model.
        batch_size: windows per ONNX Runtime call (16, as the pipeline).
        intra_op_num_threads, providers: ONNX Runtime's threads per operator and execution providers
            (default: its own thread count, the CPU).
        options: restore options (:class:`~hf_punctcase.restoration.RestoreOptions`: ``window_words``,
            ``context_words``, ``keep_punctuation``, ...), the defaults of every call; the pipeline's
            defaults where not given.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike = "on-device",
        *,
        batch_size: int = 16,
        intra_op_num_threads: int | None = None,
        providers: Sequence[str] | None = None,
        **options,
    ):
        #: The restore options of a call that gives none (:class:`~hf_punctcase.restoration.RestoreOptions`).
        self.options = RestoreOptions().updated(**options)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int ≥ 1, got {batch_size!r}")
        # Imported here: checkpoints finds formats, and the ONNX format imports this package's backend.
        from ..checkpoints import resolve

        resolved = resolve(model_dir, local_only=True)
        folder = resolved.folder
        self.folder = folder
        if resolved.runtime != ONNXRUNTIME:
            raise ValueError(
                f"model path {folder} is {resolved.format.description}, not an ONNX export: "
                "export it with hf-punctcase export-onnx, or load it with hf_punctcase.load_pipeline"
            )
        settings = read_export_settings(folder)
        self.scheme: LabelScheme = settings["scheme"]
        self.lexicon: dict[str, str] = settings["lexicon"]
        #: Whether words are lowercased for the model (its config's ``lowercase_input``).
        self.lowercase_input: bool = settings["lowercase_input"]
        self.tokenizer = RuntimeTokenizer.from_pretrained(folder)
        self.max_length = max_input_length(settings["model_max_length"], self.tokenizer.model_max_length)
        self.backend = OnnxBackend(folder, providers=providers, intra_op_num_threads=intra_op_num_threads)
        #: The model's tasks (:func:`hf_punctcase.tasks.tasks_of`): each head task adds its fields to
        #: every word, and its option (``remove_disfluencies=True``, ...) works.
        self.model_tasks = settings["tasks"]
        self.heads = settings["heads"]
        self.head_thresholds = settings["head_thresholds"]
        self.backend.check_heads(settings["labels"])
        self.batch_size = batch_size
        #: Windows, the model's runs and decoding (:class:`~hf_punctcase.restoration.RestorationEngine`),
        #: as the pipeline drives them.
        self.engine = RestorationEngine(
            tokenizer=self.tokenizer, scheme=self.scheme, lexicon=self.lexicon, lowercase_input=self.lowercase_input,
            max_length=self.max_length, model_tasks=self.model_tasks, heads=self.heads,
            head_thresholds=self.head_thresholds, run_batch=weakly_bound(self._run_batch),
        )

    # ---- inputs ---------------------------------------------------------------------------------
    def __call__(
        self,
        inputs: str | Sequence[str] | Sequence[Sequence[str]],
        *,
        is_split_into_words: bool = False,
        **options,
    ) -> dict | list[dict]:
        """Restore one transcript (a ``str``, or a list of words with ``is_split_into_words=True``) or
        many (a list of either). The options are the pipeline's: the restore options
        (:class:`~hf_punctcase.restoration.RestoreOptions`, given here for this call) and the task
        options (``remove_disfluencies=True``, :func:`hf_punctcase.tasks.task_options`)."""
        run = option_runner(options, self.model_tasks, str(self.folder))
        if run is not None:
            return run(lambda items, split, **given: self(items, is_split_into_words=split, **given), inputs, is_split_into_words, **options)
        try:
            chosen = self.options.updated(**options)
        except TypeError as error:
            raise TypeError(f"OnDeviceRestorer: {error}") from None
        items, single = parse_inputs(inputs, is_split_into_words, caller="OnDeviceRestorer")
        # Windows of consecutive inputs share ONNX Runtime calls of batch_size windows each.
        results = list(self.engine.restore([transcript(item) for item in items], chosen, self.batch_size))
        return results[0] if single else results

    # ---- windows → model → words ------------------------------------------------------------------
    def _run_batch(self, ids, mask, tasks: tuple[str, ...]) -> dict:
        return self.backend(ids, mask, tasks)

    def run_windows(self, windows: Sequence[EncodedWindow], tasks: tuple[str, ...]) -> list[WindowRows]:
        """Run the model on windows in one call, padded on the right as the pipeline pads them (pad id,
        mask 0): each window's rows of its core words. What a :class:`~hf_punctcase.StreamingRestorer`
        drives, as it drives the pipeline's."""
        return self.engine.run_windows(windows, tasks)


__all__ = ["OnDeviceRestorer", "read_export_settings"]
