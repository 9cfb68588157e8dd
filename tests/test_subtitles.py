"""Subtitles: reading Whisper JSON, cutting cues, writing SRT / WebVTT, and the ``subtitles`` command."""

from __future__ import annotations

import json
import random

import pytest
import srt
import webvtt

from hf_punctcase.cli import main
from hf_punctcase.labels import split_trailing_marks
from hf_punctcase.subtitles import (
    Cue,
    asr_words,
    build_cues,
    restore_cues,
    subtitles,
    to_srt,
    to_vtt,
    whisper_words,
)

from conftest import random_text, run_cli

SENTENCES = [
    "so what are the risks",
    "i am not technical",
    "the doctor asked whether the patient had any pain in her chest or fever yesterday",
    "we think that this is a good idea but you know it was really hard to say",
]


def faster_whisper_json(sentences=SENTENCES, gap=1.0) -> dict:
    """The layout of faster-whisper segments dumped as dicts (``segment._asdict()``), with Whisper's
    leading spaces, capitals and marks on the words."""
    segments, t = [], 0.0
    for n, sentence in enumerate(sentences):
        words = []
        tokens = sentence.split()
        for i, token in enumerate(tokens):
            written = token.capitalize() if i == 0 else token
            if i == len(tokens) - 1:
                written += "."
            words.append({"start": round(t, 2), "end": round(t + 0.3, 2), "word": f" {written}", "probability": 0.9})
            t += 0.35
        segments.append(
            {
                "id": n + 1, "seek": 0, "start": words[0]["start"], "end": words[-1]["end"],
                "text": "".join(w["word"] for w in words), "tokens": [50364, 400], "temperature": 0.0,
                "avg_logprob": -0.2, "compression_ratio": 1.3, "no_speech_prob": 0.01, "words": words,
            }
        )
        t += gap
    return {"segments": segments, "language": "en"}


def _core(word: str) -> str:
    return (split_trailing_marks(word)[0] or word).lower()


def _input_words(data) -> list[str]:
    return [_core(w["word"].strip()) for segment in data["segments"] for w in segment["words"]]


# ---- reading -----------------------------------------------------------------------------------


def test_whisper_words_layouts():
    data = faster_whisper_json()
    words = whisper_words(data)
    assert [w["word"] for w in words][:2] == [" So", " what"]
    assert all(set(w) == {"start", "end", "word", "probability"} for w in words)
    plain = [{"word": "so", "start": 0, "end": 0.5}, {"word": "what", "start": 0.5, "end": 0.4}]
    assert whisper_words(plain) == [
        {"word": "so", "start": 0.0, "end": 0.5}, {"word": "what", "start": 0.5, "end": 0.5}
    ]
    assert whisper_words({"segments": []}) == []


@pytest.mark.parametrize(
    "data,message",
    [
        ({"text": "hello"}, '"segments"'),
        ({"segments": [{"text": "hello"}]}, "segment 0"),
        ([{"word": "so", "start": "0", "end": 1}], "word 0"),
        ([{"word": "so", "start": 0, "end": 1}, {"start": 1, "end": 2}], "word 1"),
        ([{"word": "so", "start": -1, "end": 1}], "word 0"),
        ("hello", "got str"),
    ],
)
def test_whisper_words_faults(data, message):
    with pytest.raises(ValueError, match=message):
        whisper_words(data)


def test_asr_words():
    words = [{"word": " Hello,", "start": 0.0, "end": 0.5}, {"word": " ", "start": 0.5, "end": 0.6},
             {"word": " NASA's", "start": 0.6, "end": 1.0}, {"word": " 東京", "start": 1.0, "end": 1.2}]
    assert [w["word"] for w in asr_words(words)] == ["hello,", "nasa's", "東京"]
    assert [w["word"] for w in asr_words(words, keep_punctuation=True)] == ["Hello,", "NASA's", "東京"]
    assert asr_words(words)[1] == {"word": "nasa's", "start": 0.6, "end": 1.0}
    assert [w["word"] for w in asr_words([{"word": " 1 000", "start": 0, "end": 1}])] == ["1", "000"]


# ---- cues --------------------------------------------------------------------------------------


def _restored(tokens, step=0.4, gaps=()):
    out, t = [], 0.0
    for i, token in enumerate(tokens):
        mark = token[-1] if token[-1] in ".,?" else ""
        label = {"": "O", ",": "COMMA", ".": "PERIOD", "?": "QUESTION"}[mark]
        if i in gaps:
            t += 1.5
        out.append({"word": token, "punctuation": label, "start": t, "end": t + step - 0.05})
        t += step
    return out


def _check_cover(cues, words):
    indices = [i for cue in cues for i in range(cue.first_word, cue.last_word + 1)]
    assert indices == list(range(len(words)))
    for cue in cues:
        assert cue.text == " ".join(w["word"] for w in words[cue.first_word : cue.last_word + 1])
        assert cue.start == words[cue.first_word]["start"] and cue.end == words[cue.last_word]["end"]


def test_cues_cut_at_sentence_ends():
    words = _restored("Hello. How are you? Fine".split())
    cues = build_cues(words)
    assert [c.text for c in cues] == ["Hello.", "How are you?", "Fine"]
    _check_cover(cues, words)


def test_cues_cut_at_comma_then_pause_then_anywhere():
    words = _restored("Well, the doctor asked whether the patient had any pain in her chest or fever.".split())
    cues = build_cues(words, max_chars=42, max_seconds=100)
    assert cues[0].text == "Well,"
    assert all(len(c.text) <= 42 for c in cues)
    _check_cover(cues, words)
    # no comma: the pause before "any" is the cut
    words = _restored("the doctor asked whether the patient had any pain in her chest".split(), gaps=(7,))
    cues = build_cues(words, max_chars=60, max_seconds=3.0, pause=0.8)
    assert cues[0].text == "the doctor asked whether the patient had"
    _check_cover(cues, words)
    # neither: cut before the word that does not fit
    words = _restored("aaaa bbbb cccc dddd eeee".split())
    cues = build_cues(words, max_chars=10, max_seconds=100)
    assert [c.text for c in cues] == ["aaaa bbbb", "cccc dddd", "eeee"]
    # a word longer than a cue is a cue of its own
    cues = build_cues(_restored(["a", "b" * 50, "c"]), max_chars=10)
    assert [c.text for c in cues] == ["a", "b" * 50, "c"]
    with pytest.raises(ValueError):
        build_cues(words, max_chars=0)


def test_cues_random_cover():
    rng = random.Random(0)
    marks = ["", "", "", "", ",", ".", "?"]
    for _ in range(50):
        tokens = [rng.choice(["a", "word", "longerword", "x" * 15]) + rng.choice(marks) for _ in range(rng.randint(1, 60))]
        words = _restored(tokens, gaps=set(rng.sample(range(len(tokens)), k=min(3, len(tokens)))))
        max_chars, max_seconds = rng.randint(5, 50), rng.uniform(0.5, 8)
        cues = build_cues(words, max_chars=max_chars, max_seconds=max_seconds, pause=rng.uniform(0, 2))
        _check_cover(cues, words)
        for cue in cues:
            single = cue.first_word == cue.last_word
            assert single or (len(cue.text) <= max_chars and cue.end - cue.start <= max_seconds)


def test_srt_and_vtt_writers():
    cues = [Cue(0.0, 1.25, "Hello.", 0, 0), Cue(61.5, 3725.004, "Tom & <Jerry>.", 1, 2)]
    parsed = list(srt.parse(to_srt(cues)))
    assert [(s.index, s.start.total_seconds(), s.end.total_seconds(), s.content) for s in parsed] == [
        (1, 0.0, 1.25, "Hello."), (2, 61.5, 3725.004, "Tom & <Jerry>.")
    ]
    text = to_vtt(cues)
    assert text.startswith("WEBVTT") and "01:02:05.004" in text and "Tom &amp; &lt;Jerry&gt;." in text
    captions = webvtt.from_string(text).captions
    assert [(c.start, c.end) for c in captions] == [("00:00:00.000", "00:00:01.250"), ("00:01:01.500", "01:02:05.004")]
    assert to_srt([]) == ""


# ---- restored, end to end ----------------------------------------------------------------------


def test_restore_cues_tiny(tiny_pipeline):
    rng = random.Random(1)
    data = faster_whisper_json([random_text(rng, rng.randint(3, 40)) for _ in range(12)])
    words, cues = restore_cues(tiny_pipeline, whisper_words(data), max_chars=30, max_seconds=4.0)
    assert [_core(w["word"]) for w in words] == _input_words(data)
    assert [w["start"] for w in words] == [w["start"] for s in data["segments"] for w in s["words"]]
    _check_cover(cues, words)
    assert restore_cues(tiny_pipeline, []) == ([], [])


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_cli_subtitles_cover_every_word(monkeypatch, capsys, tiny_model_dir, tmp_path, fmt):
    rng = random.Random(2)
    data = faster_whisper_json([random_text(rng, rng.randint(3, 30)) for _ in range(15)])
    source = tmp_path / "talk.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    target = tmp_path / f"talk.{fmt}"
    code, out, err = run_cli(
        monkeypatch, capsys, ["subtitles", str(source), "-o", str(target), "-m", tiny_model_dir, "--max-chars", "32"]
    )
    assert code == 0 and out == "", err
    if fmt == "srt":
        parsed = list(srt.parse(target.read_text(encoding="utf-8")))
        texts = [s.content for s in parsed]
        times = [(s.start.total_seconds(), s.end.total_seconds()) for s in parsed]
        assert [s.index for s in parsed] == list(range(1, len(parsed) + 1))
        converted = webvtt.from_srt(str(target)).captions
        assert [c.text for c in converted] == texts
    else:
        captions = webvtt.read(str(target)).captions
        texts = [c.text for c in captions]
        times = [(c.start_in_seconds + c.start_time.milliseconds / 1000, c.end_in_seconds + c.end_time.milliseconds / 1000)
                 for c in captions]
    assert all("\n" not in t for t in texts)
    words = [_core(w) for t in texts for w in t.split()]
    assert words == _input_words(data)
    assert all(len(t) <= 32 or len(t.split()) == 1 for t in texts)
    assert [start for start, _ in times] == sorted(start for start, _ in times)
    assert all(start <= end for start, end in times)


def test_cli_subtitles_stdout_and_format(monkeypatch, capsys, tiny_model_dir, tmp_path):
    plain = [{"word": w, "start": i * 0.3, "end": i * 0.3 + 0.25} for i, w in enumerate("so what are the risks".split())]
    source = tmp_path / "words.json"
    source.write_text(json.dumps(plain))
    code, out, _ = run_cli(monkeypatch, capsys, ["subtitles", str(source), "--format", "vtt", "-m", tiny_model_dir])
    assert code == 0 and out.startswith("WEBVTT")
    code, out2, _ = run_cli(monkeypatch, capsys, ["subtitles", "-", "-m", tiny_model_dir], stdin=json.dumps(plain))
    assert code == 0 and [s.content for s in srt.parse(out2)]
    assert [w for s in srt.parse(out2) for w in s.content.split()] == [
        w for c in webvtt.from_string(out).captions for w in c.text.split()
    ]


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "does not exist"),
        ('{"segments": [', "is not valid JSON (line 1, column 15"),
        ('{"segments": [{"text": " hello"}]}', 'segment 0 has no "words"'),
        ('[{"word": "so", "start": null, "end": 1}]', "word 0"),
        ('"hello"', "list of timed words"),
    ],
)
def test_cli_subtitles_faults(monkeypatch, capsys, tmp_path, content, message):
    source = tmp_path / "in.json"
    if content is not None:
        source.write_text(content)
    target = tmp_path / "out.srt"
    code, out, err = run_cli(monkeypatch, capsys, ["subtitles", str(source), "-o", str(target), "-m", str(tmp_path / "no-model")])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("hf-punctcase: error: ") and message in err
    assert not target.exists()


def test_cli_subtitles_usage_errors():
    for argv in (["--max-chars", "0"], ["--max-seconds", "0"], ["--pause", "-1"], ["--format", "ass"]):
        with pytest.raises(SystemExit):
            main(["subtitles", "in.json", *argv])


def test_default_model_subtitles():
    import hf_punctcase

    restorer = hf_punctcase.load_pipeline()
    data = faster_whisper_json(SENTENCES[:2])
    for segment in data["segments"]:  # as ASR without punctuation and casing would give them
        for word in segment["words"]:
            word["word"] = " " + _core(word["word"].strip())
    parsed = list(srt.parse(subtitles(restorer, data, "srt")))
    assert [s.content for s in parsed] == ["So what are the risks?", "I am not technical."]
    assert parsed[1].start.total_seconds() == data["segments"][1]["words"][0]["start"]
    kept = list(srt.parse(subtitles(restorer, faster_whisper_json(SENTENCES[:2]), "srt", keep_punctuation=True)))
    assert [s.content for s in kept] == ["So what are the risks.", "I am not technical."]


def test_words_left_out_of_the_text_are_in_no_cue():
    """remove_disfluencies and spoken_punctuation keep an entry for every input word, marked "removed":
    such a word ("um", a dictated "period") is not in the text, so it is in no cue either."""
    from hf_punctcase.subtitles import build_cues

    words = [
        {"word": "um", "punctuation": "O", "start": 0.0, "end": 0.2, "removed": True},
        {"word": "So", "punctuation": "O", "start": 0.3, "end": 0.5, "removed": False},
        {"word": "far.", "punctuation": "PERIOD", "start": 0.6, "end": 0.9, "removed": False},
        {"word": "period", "punctuation": "O", "start": 1.0, "end": 1.3, "removed": True},
        {"word": "Next", "punctuation": "O", "start": 1.4, "end": 1.6, "removed": False, "dictated": ["PARAGRAPH"]},
        {"word": "one", "punctuation": "O", "start": 1.7, "end": 1.9, "removed": False},
    ]
    cues = build_cues(words)
    assert [cue.text for cue in cues] == ["So far.", "Next", "one"]
    assert cues[0].start == 0.3 and (cues[0].first_word, cues[0].last_word) == (1, 2)
