"""Paragraphs: labels from the transcribers' line breaks, and the text cut where the head ends one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import tiny_config

import hf_punctcase
from hf_punctcase.checkpoints import CheckpointError
from hf_punctcase.data.builder import _paragraph_ends
from hf_punctcase.labels import PARAGRAPH_LABELS, LabelScheme
from hf_punctcase.options.paragraphs import cut_into_paragraphs
from hf_punctcase.restoration.layout import paragraph_ends
from hf_punctcase.restoration.sentences import add_char_offsets

SCHEME = LabelScheme()


def test_the_last_word_of_each_line_ends_a_paragraph_and_a_lone_mark_belongs_to_the_word_before():
    text = "So it began. We went home --\nThen it rained.\n\nThe end ."
    tokens = text.split()
    labeled, token_of_word = SCHEME.parse_tokens(tokens)
    ends = _paragraph_ends(text, token_of_word)
    assert [w for w, e in zip(labeled.words, ends) if e == "END"] == ["home", "rained", "end"]


def restored(words, punct, paragraph_end, times=False):
    entries = []
    for i, (word, p, end) in enumerate(zip(words, punct, paragraph_end)):
        entry = {"word": SCHEME.render_word(word, p, "LOWER"), "punctuation": p, "casing": "LOWER",
                 "paragraph_end": end, "paragraph_end_score": 0.9 if end else 0.1}
        if times:
            entry.update(start=float(i), end=i + 0.5)
        entries.append(entry)
    add_char_offsets(entries)
    return {"text": " ".join(e["word"] for e in entries), "words": entries,
            "sentences": [{"first_word": 0, "last_word": 1}, {"first_word": 2, "last_word": 4}]}


def test_paragraphs_break_only_at_sentence_ends_and_keep_every_word():
    words = "it works we think so".split()
    # The head ends a paragraph after "works" (a sentence end) and after "think" (none): one break.
    result = cut_into_paragraphs(restored(words, ["PERIOD", "PERIOD", "O", "O", "PERIOD"], [False, True, False, True, True], times=True))
    assert result["text"] == "it. works.\n\nwe think so."
    assert [p["text"] for p in result["paragraphs"]] == ["it. works.", "we think so."]
    assert result["paragraphs"][1]["first_word"] == 2 and result["paragraphs"][1]["start"] == 2.0
    for entry in result["words"]:
        assert result["text"][entry["start_char"]:entry["end_char"]] == entry["word"]
    assert [s["text"] for s in result["sentences"]] == ["it. works.", "we think so."]
    assert paragraph_ends(result["words"]) == [1, 4]


def test_no_paragraph_head_is_an_internal_error():
    with pytest.raises(RuntimeError, match="no paragraph labels"):
        cut_into_paragraphs({"text": "a", "words": [{"word": "a", "punctuation": "O"}]})


@pytest.fixture(scope="module")
def paragraph_model_dir(tiny_tokenizer, tmp_path_factory):
    torch.manual_seed(0)
    model = hf_punctcase.JointTokenClassificationModel(tiny_config(paragraph_labels=list(PARAGRAPH_LABELS))).eval()
    folder = tmp_path_factory.mktemp("paragraph_model")
    model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return folder


def _with_threshold(folder: Path, threshold, tmp_path: Path) -> Path:
    copy = tmp_path / f"threshold_{threshold}"
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    config["paragraph_threshold"] = threshold
    (copy / "config.json").write_text(json.dumps(config))
    return copy


def test_a_paragraph_ends_where_the_score_exceeds_the_models_threshold(paragraph_model_dir, tmp_path):
    text = " ".join(["so what are the risks i am not technical"] * 6)
    scores = None
    for threshold in (None, 0.2, 0.8):
        folder = paragraph_model_dir if threshold is None else _with_threshold(paragraph_model_dir, threshold, tmp_path)
        words = hf_punctcase.load_pipeline(str(folder), dtype=torch.float32)(text, paragraphs=True)["words"]
        scores = scores or [entry["paragraph_end_score"] for entry in words]
        assert [entry["paragraph_end_score"] for entry in words] == scores  # the threshold decides, the scores stay
        assert [entry["paragraph_end"] for entry in words] == [score > (threshold or 0.5) for score in scores]
    assert any(0.2 < score <= 0.8 for score in scores)  # the two thresholds decide some words apart


@pytest.mark.parametrize("threshold", [0, 1, 2, "0.3", True])
def test_a_threshold_that_is_none_is_refused_in_one_line(paragraph_model_dir, tmp_path, threshold):
    folder = _with_threshold(paragraph_model_dir, threshold, tmp_path)
    with pytest.raises(CheckpointError, match=f"config.json paragraph_threshold must be a number between 0 and 1, got {threshold!r}"):
        hf_punctcase.load_pipeline(str(folder))


def test_return_paragraphs_lists_them_in_the_text_as_it_stands(paragraph_model_dir, tmp_path):
    text = " ".join(["so what are the risks i am not technical"] * 6)
    folder = _with_threshold(paragraph_model_dir, 0.2, tmp_path)  # some paragraph ends, not all
    pipe = hf_punctcase.load_pipeline(str(folder), dtype=torch.float32)
    plain = pipe(text)
    listed = pipe(text, return_paragraphs=True)
    cut = pipe(text, paragraphs=True)
    assert listed["text"] == plain["text"] and "\n" not in listed["text"]
    assert [(p["first_word"], p["last_word"]) for p in listed["paragraphs"]] == [
        (p["first_word"], p["last_word"]) for p in cut["paragraphs"]
    ]
    assert len(listed["paragraphs"]) == cut["text"].count("\n\n") + 1 > 1
    for paragraph in listed["paragraphs"]:
        assert listed["text"][paragraph["start_char"]:paragraph["end_char"]] == paragraph["text"]
    assert listed["paragraphs"][0]["first_word"] == 0 and listed["paragraphs"][-1]["last_word"] == len(text.split()) - 1


def test_return_paragraphs_needs_the_head(tiny_pipeline):
    with pytest.raises(ValueError, match="return_paragraphs=True needs a model with a paragraph head"):
        tiny_pipeline("so what are the risks", return_paragraphs=True)


@pytest.mark.parametrize("window_words, context_words", [(200, 50), (40, 10)])
def test_paragraphs_in_a_stream_are_the_pipelines(paragraph_model_dir, tmp_path, window_words, context_words):
    from hf_punctcase import StreamingRestorer

    folder = _with_threshold(paragraph_model_dir, 0.2, tmp_path)  # some paragraph ends, not all
    pipe = hf_punctcase.load_pipeline(str(folder), dtype=torch.float32)
    words = " ".join(["so what are the risks i am not technical"] * 12).split()
    whole = pipe(words, is_split_into_words=True, paragraphs=True, window_words=window_words, context_words=context_words)
    assert "\n\n" in whole["text"]
    stream = StreamingRestorer(pipe, window_words=window_words, context_words=context_words, paragraphs=True)
    entries = []
    for start in range(0, len(words), 7):
        entries += stream.push(words[start:start + 7])
    entries += stream.flush()
    assert [(e["word"], e["start_char"], e["end_char"]) for e in entries] == [
        (e["word"], e["start_char"], e["end_char"]) for e in whole["words"]
    ]


def test_a_stream_refuses_paragraphs_without_the_head(tiny_pipeline):
    from hf_punctcase import StreamingRestorer

    with pytest.raises(ValueError, match="paragraph head"):
        StreamingRestorer(tiny_pipeline, paragraphs=True)
