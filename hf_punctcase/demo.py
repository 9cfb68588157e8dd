"""``hf-punctcase demo``: a Gradio app to try the models in a browser, offline, and the same app as a
Hugging Face Space (:func:`write_space`).

A transcript goes in; out come the restored text, the words highlighted where the model was unsure
of a mark or a capital, and on request the per-word table. Switches: disfluency removal, punctuation
only / casing only, and the model (the accurate default or the on-device model). A Whisper JSON with
word timestamps becomes SRT or WebVTT subtitles to preview and download. The button's event is the
API endpoint ``restore``: ``gradio_client.Client(url).predict(text, api_name="/restore")`` returns the
restored text.

Needs the ``[demo]`` extra (gradio). Nothing is downloaded: the models are the package's own, and the
page uses the system's fonts.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .tasks import TASKS, task_options

#: The models the app offers by default: label → what load_pipeline takes.
MODELS = {
    "default (6 layers)": "default",
    "accurate (12 layers, about twice as slow)": "accurate",
    "on-device (small, no torch at run time)": "on-device",
    "open (6 layers, trained on text that allows commercial use)": "open",
}

#: A word whose mark or casing the model chose with less probability than this is highlighted.
LOW_CONFIDENCE = 0.7

#: The most words one request restores (a transcript, or a Whisper JSON's words): about half an hour
#: of speech, under a minute with the default model on two CPU cores. The app runs one request at a
#: time, so a larger one would keep every other request waiting (200,000 words took minutes).
MAX_WORDS = 5_000
#: The largest Whisper JSON file read, in bytes (its words are counted only once it is parsed).
MAX_JSON_BYTES = 10_000_000

#: The choices of what to restore: label → the pipeline's ``tasks``.
RESTORE_CHOICES = {"punctuation and casing": None, "punctuation only": ("punct",), "casing only": ("case",)}

#: Transcripts written for the demo, one per domain the models were trained for.
EXAMPLES = [
    "so um what are the risks i am not technical but i have read that the new model was trained on "
    "talks and phone calls do you think it will work on our meetings",
    "hello is this the pharmacy yes hi uh i wanted to ask whether my prescription is ready it should be "
    "under smith john smith okay thank you so much have a great day",
    "good morning doctor i have had a headache for three days and a bit of a fever how high was the "
    "fever about thirty eight degrees all right any nausea or vomiting no just the headache",
]

_WHISPER_EXAMPLE = {
    "text": " so what are the risks i am not technical",
    "segments": [
        {
            "start": 0.0,
            "end": 2.6,
            "text": " so what are the risks i am not technical",
            "words": [
                {"word": " so", "start": 0.0, "end": 0.2},
                {"word": " what", "start": 0.25, "end": 0.45},
                {"word": " are", "start": 0.5, "end": 0.6},
                {"word": " the", "start": 0.62, "end": 0.7},
                {"word": " risks", "start": 0.72, "end": 1.1},
                {"word": " i", "start": 1.6, "end": 1.7},
                {"word": " am", "start": 1.72, "end": 1.85},
                {"word": " not", "start": 1.9, "end": 2.1},
                {"word": " technical", "start": 2.15, "end": 2.6},
            ],
        }
    ],
}


class Restorers:
    """The app's pipelines, each loaded on first use and kept (one lock: Gradio calls from threads)."""

    def __init__(self, models: Mapping[str, str]):
        self.models = dict(models)
        self._loaded: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __getitem__(self, label: str):
        from .registry import load_pipeline

        if label not in self.models:
            raise KeyError(f"unknown model {label!r}; the app offers {sorted(self.models)}")
        with self._lock:  # two first requests for one model load it once
            if label not in self._loaded:
                self._loaded[label] = load_pipeline(self.models[label])
            return self._loaded[label]


def restore_transcript(
    restorers: Restorers,
    text: str,
    model: str,
    tasks: str = "punctuation and casing",
    **switches: bool,
) -> tuple[str, list[tuple[str, str | None]], list[list[Any]], str]:
    """One run of the app: restored text, highlighted words, the per-word rows, and a line of figures.
    ``switches`` are the task options ticked (``remove_disfluencies=True``, :func:`~hf_punctcase.tasks.task_options`).
    Raises ValueError for a transcript of more than :data:`MAX_WORDS` words and for an option the model lacks."""
    if not text or not text.strip():
        return "", [], [], "Type or paste a transcript."
    words = text.split()
    _check_size(len(words), "this transcript")
    restorer = restorers[model]
    for task in TASKS.values():
        if task.option is not None and switches.get(task.option.name) and task not in restorer.model_tasks:
            raise ValueError(f"the {model} model has no {task.title} head: untick '{task.option.label}'")
    start = time.perf_counter()
    result = restorer(text, tasks=RESTORE_CHOICES[tasks], progress=len(words) > 2000, **switches)
    seconds = time.perf_counter() - start
    highlighted: list[tuple[str, str | None]] = []
    rows: list[list[Any]] = []
    for entry in result["words"]:
        # a removed word has no scores: the second pass restored the words around it
        scores = [entry.get(key) for key in ("punct_score", "case_score")]
        if entry.get("removed"):
            highlighted.append((entry["word"] + " ", "removed"))
        else:
            unsure = min((score for score in scores if score is not None), default=1.0) < LOW_CONFIDENCE
            highlighted.append((entry["word"] + " ", "unsure" if unsure else None))
        rows.append([
            entry["word"],
            entry.get("punctuation") or "",
            entry.get("casing") or "",
            *(None if score is None else round(float(score), 3) for score in scores),
            bool(entry.get("removed", False)),
        ])
    figures = (
        f"{len(words):,} words in {seconds:.2f} s: {len(words) / max(seconds, 1e-9):,.0f} words/s ({model}; "
        f"{restorer.execution_plan.describe()})"
    )
    return result["text"], highlighted, rows, figures


def _check_size(num_words: int, what: str) -> None:
    """Raise ValueError when ``num_words`` passes :data:`MAX_WORDS`, naming ``what`` and the limit."""
    if num_words > MAX_WORDS:
        raise ValueError(
            f"{what} has {num_words:,} words; this demo restores up to {MAX_WORDS:,} at a time: "
            "split it, or run hf-punctcase on your own machine"
        )


def subtitles_from_whisper(restorers: Restorers, path: str | os.PathLike, model: str, fmt: str = "srt") -> tuple[str, str]:
    """Restore a Whisper JSON (word timestamps) into subtitles; returns (file path, its text). Raises
    ValueError naming the file for a file that is not Whisper JSON (not JSON, nested too deeply,
    times out of range or running backwards: :func:`~hf_punctcase.subtitles.whisper_words`), over
    :data:`MAX_JSON_BYTES` or with more than :data:`MAX_WORDS` words."""
    from .subtitles import check_writers, parse_json, restore_cues, whisper_words, write

    check_writers(fmt)
    name = Path(path).name
    size = os.path.getsize(path)
    if size > MAX_JSON_BYTES:
        raise ValueError(f"{name} has {size:,} bytes; this demo reads Whisper JSON files of up to {MAX_JSON_BYTES:,}")
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        data = parse_json(raw, name)
    except ValueError as error:
        raise ValueError(f"not a Whisper JSON file: {error}") from None
    try:
        words = whisper_words(data)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    _check_size(len(words), name)
    _, cues = restore_cues(restorers[model], words)
    text = write(cues, fmt)
    folder = Path(tempfile.mkdtemp(prefix="hf_punctcase_demo_"))
    target = folder / f"{Path(path).stem}.{fmt}"
    target.write_text(text, encoding="utf-8")
    return str(target), text


def build_demo(models: Mapping[str, str] | None = None):
    """The Gradio app (a ``gr.Blocks``): ``build_demo().launch()``. ``models`` maps the labels the app
    shows to what :func:`~hf_punctcase.registry.load_pipeline` takes (default: :data:`MODELS`)."""
    from .extras import require_extra

    require_extra("demo", "the demo", {"gradio": "gradio"})
    import gradio as gr

    restorers = Restorers(models or MODELS)
    labels = list(restorers.models)

    options = task_options()

    def restore(text: str, model: str, *choices, progress=gr.Progress(track_tqdm=True)):
        # The inputs: the transcript, the model, one checkbox per task option, then what to restore.
        *ticked, tasks = choices
        switches = {option.name: bool(on) for option, on in zip(options, ticked)}
        try:
            return restore_transcript(restorers, text, model, tasks, **switches)
        except ValueError as error:  # a fault of the request: a message, not a traceback in the log
            raise gr.Error(str(error), print_exception=False) from None

    def make_subtitles(path: str | None, model: str, fmt: str):
        if not path:
            raise gr.Error("Upload a Whisper JSON file with word timestamps first.")
        try:
            return subtitles_from_whisper(restorers, path, model, fmt.lower())
        except ValueError as error:
            raise gr.Error(str(error), print_exception=False) from None

    example_file = Path(tempfile.mkdtemp(prefix="hf_punctcase_demo_")) / "whisper_example.json"
    example_file.write_text(json.dumps(_WHISPER_EXAMPLE, indent=1), encoding="utf-8")

    with gr.Blocks(title="hf_punctcase: punctuation, casing and disfluencies for ASR transcripts", analytics_enabled=False) as demo:
        gr.Markdown(
            "# hf_punctcase\nRaw ASR transcript in, readable text out: punctuation, truecasing and, on request, "
            "disfluency removal. Words the model was unsure of are highlighted."
        )
        with gr.Row():
            with gr.Column():
                transcript = gr.Textbox(label="Transcript", lines=6, elem_id="transcript",
                                        info=f"Up to {MAX_WORDS:,} words at a time",
                                        placeholder="so um what are the risks i am not technical")
                with gr.Row():
                    model = gr.Dropdown(labels, value=labels[0], label="Model", elem_id="model")
                    tasks = gr.Radio(list(RESTORE_CHOICES), value="punctuation and casing", label="Restore", elem_id="tasks")
                with gr.Row():
                    switches = [gr.Checkbox(label=option.label, elem_id=option.name) for option in options]
                    show_table = gr.Checkbox(label="per-word table", elem_id="show_table")
                button = gr.Button("Restore", variant="primary", elem_id="restore")
            with gr.Column():
                restored = gr.Textbox(label="Restored", lines=6, elem_id="restored", buttons=["copy"])
                highlighted = gr.HighlightedText(
                    label="Confidence", color_map={"unsure": "orange", "removed": "gray"}, show_legend=True,
                    elem_id="highlighted",
                )
                figures = gr.Markdown(label="Speed", elem_id="figures")
        table = gr.Dataframe(
            label="Per word", headers=["word", "punctuation", "casing", "punct score", "case score", "removed"],
            visible=False, elem_id="table", interactive=False,
        )
        gr.Examples(EXAMPLES, inputs=[transcript], label="Examples: a talk, a phone call, a doctor and a patient")
        gr.on([button.click, transcript.submit], restore, inputs=[transcript, model, *switches, tasks],
              outputs=[restored, highlighted, table, figures], api_name="restore")
        show_table.change(lambda shown: gr.Dataframe(visible=shown), inputs=[show_table], outputs=[table], api_name=False)

        gr.Markdown(
            "## Subtitles from Whisper\nA Whisper JSON with word timestamps (`word_timestamps=True`) → SRT or WebVTT "
            f"(up to {MAX_WORDS:,} words)."
        )
        with gr.Row():
            whisper_file = gr.File(label="Whisper JSON", file_types=[".json"], type="filepath", elem_id="whisper_json")
            with gr.Column():
                fmt = gr.Radio(["SRT", "VTT"], value="SRT", label="Format", elem_id="format")
                make = gr.Button("Make subtitles", elem_id="make_subtitles")
        with gr.Row():
            preview = gr.Textbox(label="Preview", lines=8, elem_id="preview")
            download = gr.File(label="Download", elem_id="download")
        gr.Examples([[str(example_file)]], inputs=[whisper_file], label="Example Whisper JSON")
        make.click(make_subtitles, inputs=[whisper_file, model, fmt], outputs=[download, preview], api_name="subtitles")
    return demo


def launch(
    model: str | None = None, host: str = "127.0.0.1", port: int | None = None, share: bool = False, block: bool = True
):
    """Build the app and serve it (``model``: a folder or embedded name offered first, beside the two
    embedded models). Returns the app; with ``block=False`` it serves from a thread."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    models = dict(MODELS)
    if model is not None:  # offered first: under its embedded label, or its own name
        first = next((label for label, name in MODELS.items() if name == model), str(model))
        models = {first: str(model), **{label: name for label, name in MODELS.items() if label != first}}
    demo = build_demo(models)
    # One restoration at a time: they share the CPU, and a fast tokenizer must not be called from two
    # threads at once. MAX_WORDS bounds how long a request keeps the next one waiting.
    demo.queue(default_concurrency_limit=1)
    demo.launch(server_name=host, server_port=port, share=share, prevent_thread_lock=not block, ssr_mode=False,
                quiet=not block, footer_links=["api"], theme=_theme())
    return demo


def _theme():
    import gradio as gr

    # system fonts: the default theme would ask Google Fonts for its own
    fonts = [gr.themes.Font("system-ui"), gr.themes.Font("sans-serif")]
    return gr.themes.Default(font=fonts, font_mono=[gr.themes.Font("ui-monospace"), gr.themes.Font("monospace")])


#: A Space's files: its README (the Space card), app.py and requirements.txt.
SPACE_README = """---
title: hf_punctcase
emoji: ✍️
colorFrom: blue
colorTo: green
sdk: gradio
app_file: app.py
pinned: false
---

Punctuation, truecasing and disfluency removal for ASR transcripts, with the models of
[hf_punctcase](https://pypi.org/project/hf-punctcase/).
"""
SPACE_APP = '''from hf_punctcase.demo import build_demo, _theme

build_demo().launch(theme=_theme())
'''
SPACE_REQUIREMENTS = "hf-punctcase[demo]\n"


def write_space(folder: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write the files of a Hugging Face Space that serves this app (README.md, app.py,
    requirements.txt) into ``folder``, all or nothing (``hf-punctcase demo --space-dir``)."""
    from .atomic_files import atomic_directory

    target = Path(folder)
    with atomic_directory(target, overwrite=overwrite) as staging:
        (staging / "README.md").write_text(SPACE_README, encoding="utf-8")
        (staging / "app.py").write_text(SPACE_APP, encoding="utf-8")
        (staging / "requirements.txt").write_text(SPACE_REQUIREMENTS, encoding="utf-8")
    return target


__all__ = [
    "EXAMPLES", "LOW_CONFIDENCE", "MAX_JSON_BYTES", "MAX_WORDS", "MODELS", "build_demo", "launch",
    "restore_transcript", "subtitles_from_whisper", "write_space",
]
