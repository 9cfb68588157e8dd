"""Faults of the text and times given to a restorer: words passed through keep the marks written after
them; timed words whose times run backwards, are out of range or not numbers are refused by every
front door (pipeline, torch-free runtime, stream, ``hf-punctcase subtitles``, the demo); a JSON file
nested too deeply is named; the demo bounds the work of one request. Each test fails without its fix."""

from __future__ import annotations

import importlib.util
import json
import math
import re

import numpy as np
import pytest
from conftest import run_cli

from hf_punctcase.inputs import parse_words, split_words
from hf_punctcase.labels import LabelScheme
from hf_punctcase.restoration import decode
from hf_punctcase.runtime import OnDeviceRestorer
from hf_punctcase.streaming import StreamingRestorer
from hf_punctcase.subtitles import whisper_words

needs_gradio = pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="gradio ([demo] extra) not installed")

# ---- words passed through keep their marks ------------------------------------------------------

PASSED_THROUGH = ["😀!", "你好?", "привет,", "x" * 150 + ".", "😀!!", "мир…"]
TEXT = "so 😀! what are the risks 你好? i am привет, not " + "x" * 150 + ". technical 😀!! ok мир…"
MODES = [
    {},
    {"tasks": ("punct",)},
    {"tasks": ("case",)},
    {"keep_punctuation": True},
    {"consistent_casing": False},
    {"tasks": ("punct",), "keep_punctuation": True},
]


def _assert_passed_through(result: dict) -> None:
    tokens = result["text"].split(" ")
    assert len(tokens) == len(TEXT.split())
    scheme = LabelScheme()
    for written, token, entry in zip(TEXT.split(), tokens, result["words"]):
        if written in PASSED_THROUGH:
            assert token == written == entry["word"]
            # its label is that of the marks it kept, as for marks kept with keep_punctuation
            assert entry["punctuation"] == scheme.label_of_marks(split_words([written]).marks[0])


@pytest.mark.parametrize("options", MODES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_words_passed_through_keep_their_marks(tiny_pipeline, options):
    result = tiny_pipeline(TEXT, **options)
    _assert_passed_through(result)
    stream = StreamingRestorer(tiny_pipeline, **options)
    emitted = stream.push(TEXT.split()) + stream.flush()
    assert " ".join(entry["word"] for entry in emitted) == result["text"]


def test_the_torch_free_runtime_keeps_them_too():
    restorer = OnDeviceRestorer()
    for options in MODES:
        _assert_passed_through(restorer(TEXT, **options))


def test_a_mark_kept_after_a_word_passed_through_is_the_one_decided():
    """The model predicts a period after the emoji and a comma after the Chinese word; the marks written
    stay, and with consistent casing the word after "😀!" starts a sentence."""
    scheme = LabelScheme()
    words = split_words("so 😀! what 你好? ok".split())
    punct = np.full((5, len(scheme.punct_labels)), 0.01)
    punct[:, scheme.punct_labels.index("O")] = 0.97
    punct[1] = punct[3] = 0.01
    punct[1, scheme.punct_labels.index("PERIOD")] = punct[3, scheme.punct_labels.index("COMMA")] = 0.97
    case = np.full((5, len(scheme.case_labels)), 0.01)
    case[:, scheme.case_labels.index("LOWER")] = 0.97
    probs = {"punct": punct, "case": case}
    consistent = decode(words, probs, scheme)
    assert consistent["text"] == "So 😀! What 你好? Ok."  # a whole text: its last sentence is closed
    assert [w["punctuation"] for w in consistent["words"]] == ["O", scheme.label_of_marks("!"), "O", "QUESTION", "PERIOD"]
    argmax = decode(words, probs, scheme, consistent_casing=False, ends_sentence=False)
    assert argmax["text"] == "so 😀! what 你好? ok"
    # the score is the probability of the label reported
    assert argmax["words"][3]["punct_score"] == pytest.approx(0.01)


# ---- times of timed words -----------------------------------------------------------------------

BACKWARDS = [
    {"word": "hello.", "start": 0.0, "end": 0.5},
    {"word": "how", "start": 1.0, "end": 1.2},
    {"word": "are", "start": 1.3, "end": 1.4},
    {"word": "you?", "start": 1.5, "end": 1.8},
    {"word": "fine.", "start": 0.5, "end": 0.6},
    {"word": "thanks.", "start": 0.7, "end": 0.7},
]
# words, the error, the word named (its index, then the word), what is wrong with it
SO = [{"word": "so", "start": 0, "end": 1}]
BAD_TIMES = {
    "backwards": (BACKWARDS, ValueError, 4, "'fine.'", "starts at 0.5 s, before the timed word before it (1.5 s)"),
    "end before start": ([{"word": "so", "start": 1.0, "end": 0.5}], ValueError, 0, "'so'", "ends at 0.5 s, before it starts (1.0 s)"),
    "1e14": (SO + [{"word": "what", "start": 1e14, "end": 1e14}], ValueError, 1, "'what'",
             "'start' is 100000000000000.0, not a time from 0 to 1,000,000,000 seconds"),
    "1e20": (SO + [{"word": "what", "start": 1, "end": 1e20}], ValueError, 1, "'what'",
             "'end' is 1e+20, not a time from 0 to 1,000,000,000 seconds"),
    "nan": ([{"word": "so", "start": math.nan, "end": 1}], ValueError, 0, "'so'", "'start' is nan, not a time"),
    "inf": ([{"word": "so", "start": 0, "end": math.inf}], ValueError, 0, "'so'", "'end' is inf, not a time"),
    "negative": ([{"word": "so", "start": -1, "end": 1}], ValueError, 0, "'so'", "'start' is -1, not a time"),
    "an int too large for a float": ([{"word": "so", "start": 0, "end": 10**400}], ValueError, 0, "'so'",
                                     "'end' is 100000000000000000000000… (401 digits), not a time"),
    "a string": ([{"word": "so", "start": "0", "end": 1}], TypeError, 0, "'so'", "'start' is not a time in seconds (got '0')"),
}


def _message(name: str, where: str = "") -> str:
    """The start of the message for BAD_TIMES[name], the word named as in a transcript (``where``: " of transcript 1")."""
    _, _, index, word, detail = BAD_TIMES[name]
    return re.escape(f"word {index}{where} ({word}): {detail}")


@pytest.mark.parametrize("name", BAD_TIMES)
def test_times_are_refused_by_the_pipeline_and_the_runtime(tiny_pipeline, name):
    words, error, *_ = BAD_TIMES[name]
    with pytest.raises(error, match="^" + _message(name)):
        tiny_pipeline(words, is_split_into_words=True)
    with pytest.raises(error, match="^" + _message(name, " of transcript 1")):
        tiny_pipeline([[{"word": "ok", "start": 0}], words], is_split_into_words=True)  # in a batch
    with pytest.raises(error, match="^" + _message(name)):
        OnDeviceRestorer()(words, is_split_into_words=True)


def test_times_that_pass():
    """Overlapping words, equal starts, words without times or with None, NumPy numbers: accepted."""
    from hf_punctcase.inputs import MAX_SECONDS

    words = [
        {"word": "so", "start": 0, "end": 0.6},
        {"word": "what", "start": 0.5, "end": 0.5},
        {"word": "are", "start": 0.5, "end": 0.7},
        {"word": "the"},
        {"word": "risks", "start": None, "end": None},
        "i",
        {"word": "am", "start": np.float32(0.8), "end": np.float64(1.0)},
        {"word": "here", "start": MAX_SECONDS, "end": MAX_SECONDS},
    ]
    assert len(parse_words(words)) == len(words)


def test_the_stream_checks_times_across_pushes(tiny_pipeline):
    stream = StreamingRestorer(tiny_pipeline)
    stream.push([{"word": "so", "start": 1.0, "end": 1.2}])
    with pytest.raises(ValueError, match=r"word 1 of this push \(word 2 of the stream\) \('are'\): starts at 0.5 s"):
        stream.push([{"word": "what", "start": 2.0, "end": 2.1}, {"word": "are", "start": 0.5, "end": 0.6}])
    # the push refused took none of its words, its times included: 1.5 s follows 1.0 s
    emitted = stream.push([{"word": "what", "start": 1.5, "end": 1.6}]) + stream.flush()
    assert [entry["input_word"] for entry in emitted] == ["so", "what"]
    with pytest.raises(ValueError, match="'end' is 1e\\+20"):
        StreamingRestorer(tiny_pipeline).push([{"word": "so", "start": 0, "end": 1e20}])


def test_whisper_words_refuse_the_same_times():
    for name, (words, *_) in BAD_TIMES.items():
        if name == "end before start":
            assert whisper_words(words)[0]["end"] == 1.0  # Whisper's words: an end before the start is the start
            continue
        with pytest.raises(ValueError, match="^" + _message(name)):  # a string time too: a fault of the file
            whisper_words({"segments": [{"words": words}]})


@pytest.mark.parametrize("name", ["backwards", "1e14", "1e20"])
@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_cli_subtitles_refuse_bad_times(monkeypatch, capsys, tiny_model_dir, tmp_path, name, fmt):
    words = BAD_TIMES[name][0]
    source = tmp_path / "talk.json"
    source.write_text(json.dumps(words))
    target = tmp_path / f"talk.{fmt}"
    target.write_text("old subtitles")
    code, out, err = run_cli(monkeypatch, capsys, ["subtitles", str(source), "-o", str(target), "-m", tiny_model_dir])
    assert code == 2 and out == ""
    assert re.match(re.escape(f"hf-punctcase: error: input {source}: ") + _message(name), err) and err.count("\n") == 1
    assert target.read_text() == "old subtitles" and sorted(p.name for p in tmp_path.iterdir()) == ["talk.json", f"talk.{fmt}"]


# ---- JSON nested too deeply ---------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def test_cli_subtitles_name_a_file_nested_too_deeply(monkeypatch, capsys, tmp_path):
    source = tmp_path / "deep.json"
    source.write_text('{"segments": ' + DEEP + "}")
    target = tmp_path / "out.srt"
    code, out, err = run_cli(monkeypatch, capsys, ["subtitles", str(source), "-o", str(target), "-m", str(tmp_path / "none")])
    assert code == 2 and out == "" and not target.exists()
    assert err == f"hf-punctcase: error: input {source} nests arrays or objects too deeply to be read as JSON (Whisper JSON nests five levels)\n"
    code, _, err = run_cli(monkeypatch, capsys, ["subtitles", "-", "-m", str(tmp_path / "none")], stdin=DEEP)
    assert code == 2 and err.startswith("hf-punctcase: error: stdin nests") and err.count("\n") == 1


def test_parse_json_faults_name_the_file():
    from hf_punctcase.subtitles import parse_json

    with pytest.raises(ValueError, match="^talk.json nests arrays or objects too deeply"):
        parse_json(DEEP, "talk.json")
    with pytest.raises(ValueError, match=r"^talk.json is not valid JSON \(line 1, column 2"):
        parse_json(b"{not json", "talk.json")
    with pytest.raises(ValueError, match=r"^talk.json is not valid UTF-8 \(byte 0xe9 at byte 3\)"):
        parse_json(b'["\xe9"]', "talk.json")
    assert parse_json(b'\xef\xbb\xbf{"segments": []}', "talk.json") == {"segments": []}


# ---- the demo -----------------------------------------------------------------------------------


@needs_gradio
def test_the_demo_bounds_a_transcript(tiny_model_dir):
    import time

    from hf_punctcase.demo import MAX_WORDS, Restorers, restore_transcript

    restorers = Restorers({"tiny": tiny_model_dir})
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"this transcript has 200,000 words; this demo restores up to {MAX_WORDS:,} at a time"):
        restore_transcript(restorers, "so what " * 100_000, "tiny")
    assert time.perf_counter() - start < 5  # refused before the model runs
    assert restore_transcript(restorers, "so " * MAX_WORDS, "tiny")[0].count(" ") == MAX_WORDS - 1


@needs_gradio
@pytest.mark.parametrize(
    "content,message",
    [
        (json.dumps(BACKWARDS), "talk.json: word 4 ('fine.'): starts at 0.5 s, before the timed word before it"),
        (json.dumps(BAD_TIMES["1e20"][0]), "talk.json: word 1 ('what'): 'end' is 1e+20, not a time"),
        ('{"segments": ' + DEEP + "}", "not a Whisper JSON file: talk.json nests arrays or objects too deeply"),
        (json.dumps([{"word": "so", "start": i, "end": i} for i in range(6000)]), "talk.json has 6,000 words; this demo"),
    ],
    ids=["backwards", "1e20", "deep", "too many words"],
)
def test_the_demo_names_each_bad_whisper_file(tiny_model_dir, tmp_path, capsys, content, message):
    """The function behind the upload raises ValueError with its own message; the app's handler turns it
    into a gr.Error shown to the user, without a traceback in the server's log."""
    import gradio as gr

    from hf_punctcase.demo import Restorers, build_demo, subtitles_from_whisper

    whisper = tmp_path / "talk.json"
    whisper.write_text(content)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        subtitles_from_whisper(Restorers({"tiny": tiny_model_dir}), whisper, "tiny")
    demo = build_demo({"tiny": tiny_model_dir})
    (handler,) = [f.fn for f in demo.fns.values() if f.api_name == "subtitles"]
    with pytest.raises(gr.Error) as raised:
        handler(str(whisper), "tiny", "SRT")
    assert raised.value.message.startswith(message) and raised.value.print_exception is False


@needs_gradio
def test_the_demo_says_its_limit_and_refuses_a_large_transcript_with_a_message(tiny_model_dir):
    import gradio as gr

    from hf_punctcase.demo import MAX_WORDS, build_demo
    from hf_punctcase.tasks import task_options

    demo = build_demo({"tiny": tiny_model_dir})
    (box,) = [block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "transcript"]
    assert f"{MAX_WORDS:,} words" in box.info
    (handler,) = [f.fn for f in demo.fns.values() if f.api_name == "restore"]
    with pytest.raises(gr.Error) as raised:
        handler("so what " * 100_000, "tiny", *[False] * len(task_options()), "punctuation and casing")
    assert raised.value.message.startswith("this transcript has 200,000 words") and raised.value.print_exception is False
