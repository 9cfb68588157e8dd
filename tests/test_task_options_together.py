"""Task options together: disfluency removal, spoken punctuation and paragraphs in one call."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_config

import hf_punctcase
from hf_punctcase.options.dictation import apply_commands
from hf_punctcase.options.disfluency import fluent_inputs, merge_fluent
from hf_punctcase.labels import COMMAND_LABELS, DISFLUENCY_LABELS, PARAGRAPH_LABELS, LabelScheme
from hf_punctcase.options.paragraphs import cut_into_paragraphs
from hf_punctcase.restoration.sentences import add_char_offsets

SCHEME = LabelScheme()


def restored(words, punct, command, paragraph_end=None, disfluent=None):
    """A restoration as the pipeline gives it, from labels."""
    entries = []
    for i, (word, p, k) in enumerate(zip(words, punct, command)):
        entry = {"word": SCHEME.render_word(word, p, "LOWER"), "punctuation": p, "casing": "LOWER", "punct_score": 0.9,
                 "case_score": 0.9, "command": k, "command_score": 0.8}
        if paragraph_end is not None:
            entry.update(paragraph_end=paragraph_end[i], paragraph_end_score=0.9 if paragraph_end[i] else 0.1)
        if disfluent is not None:
            entry.update(disfluent=disfluent[i], disfluency_score=0.9 if disfluent[i] else 0.1)
        entries.append(entry)
    add_char_offsets(entries)
    return {"text": " ".join(e["word"] for e in entries), "words": entries}


def test_paragraphs_keep_dictated_breaks_and_a_dictated_new_paragraph_ends_one():
    words = "it hurts new line she said so period new paragraph we agree period and then we left new line".split()
    punct = ["O", "PERIOD", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "PERIOD", "O", "O"]
    command = ["WORD", "WORD", "NEWLINE", "NEWLINE", "WORD", "WORD", "WORD", "PERIOD", "PARAGRAPH", "PARAGRAPH", "WORD",
               "WORD", "PERIOD", "WORD", "WORD", "WORD", "WORD", "NEWLINE", "NEWLINE"]
    # The head ends a paragraph after "hurts" (where a line break was dictated) and on the command
    # words (removed, so they end none).
    ends = [False, True, True, True] + [False] * 3 + [True] * 3 + [False] * 9
    dictated = apply_commands(restored(words, punct, command, paragraph_end=ends), words)
    assert dictated["text"] == "it hurts.\nShe said so.\n\nWe agree. And then we left.\n"
    result = cut_into_paragraphs(dictated)
    # The dictated line break after "hurts" becomes a blank line; the dictated new paragraph ends one;
    # the line break dictated at the end stays.
    assert result["text"] == "it hurts.\n\nShe said so.\n\nWe agree. And then we left.\n"
    assert [p["text"] for p in result["paragraphs"]] == ["it hurts.", "She said so.", "We agree. And then we left."]
    assert [(p["first_word"], p["last_word"]) for p in result["paragraphs"]] == [(0, 1), (4, 6), (10, 16)]
    assert len(result["words"]) == len(words)
    for entry in result["words"]:
        if not entry["removed"]:
            assert result["text"][entry["start_char"]:entry["end_char"]] == entry["word"]


def test_a_text_of_commands_has_no_paragraph():
    dictated = apply_commands(restored(["period"], ["O"], ["PERIOD"], paragraph_end=[True]), ["period"])
    result = cut_into_paragraphs(dictated)
    assert result["text"] == "" and result["paragraphs"] == []


def test_a_word_removed_as_disfluent_carries_out_no_command_and_commands_kept_stay_removed():
    words = "um comma comma we left period".split()
    first = restored(words, ["O"] * 6, ["WORD", "COMMA", "COMMA", "WORD", "WORD", "PERIOD"],
                     paragraph_end=[False] * 6, disfluent=[True, True, False, False, False, False])
    kept = [2, 3, 4, 5]
    fluent = cut_into_paragraphs(apply_commands(
        restored([words[i] for i in kept], ["O"] * 4, ["COMMA", "WORD", "WORD", "PERIOD"], paragraph_end=[False] * 4),
        [words[i] for i in kept],
    ))
    merged = merge_fluent(first, fluent, kept, words)
    # The comma kept has no word before it: carried out as nothing, and the text starts with a capital.
    assert merged["text"] == "We left."
    entries = merged["words"]
    assert [e["removed"] for e in entries] == [True, True, True, False, False, True]
    assert [e["disfluent"] for e in entries] == [True, True, False, False, False, False]
    # The first "comma" was a repetition: left out as disfluent, it carries out no command.
    assert entries[1]["command"] == "WORD" and "dictated" not in entries[1]
    assert entries[2]["command"] == "COMMA" and entries[5]["command"] == "PERIOD"
    assert merged["paragraphs"] == [{**fluent["paragraphs"][0], "first_word": 3, "last_word": 4}]


@pytest.fixture(scope="module")
def every_head_model(tiny_tokenizer, tmp_path_factory):
    """A tiny model with the disfluency, command and paragraph heads. Its command head reads every word
    as a command and its paragraph head ends a paragraph everywhere, so that the words that spell a
    command phrase are commands and every sentence end ends a paragraph."""
    torch.manual_seed(0)
    config = tiny_config(
        disfluency_labels=list(DISFLUENCY_LABELS), command_labels=list(COMMAND_LABELS), paragraph_labels=list(PARAGRAPH_LABELS),
    )
    model = hf_punctcase.JointTokenClassificationModel(config).eval()
    with torch.no_grad():
        for head, label in ((model.command_classifier, COMMAND_LABELS.index("PERIOD")), (model.paragraph_classifier, 1)):
            head.weight.zero_()
            head.bias.zero_()
            head.bias[label] = 10.0
    folder = tmp_path_factory.mktemp("every_head_model")
    model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return str(folder)


TEXT = "um so the patient had chest pain period uh she she denies fever comma cough new paragraph we think it works period"


@pytest.mark.parametrize(
    "options",
    [
        {"remove_disfluencies": True, "spoken_punctuation": True},
        {"remove_disfluencies": True, "paragraphs": True},
        {"spoken_punctuation": True, "paragraphs": True},
        {"remove_disfluencies": True, "spoken_punctuation": True, "paragraphs": True},
    ],
)
def test_options_together_restore_the_kept_words_as_their_own_transcript(every_head_model, options):
    pipe = hf_punctcase.load_pipeline(every_head_model, dtype=torch.float32)
    words = TEXT.split()
    result = pipe(TEXT, return_sentences=True, **options)
    entries = result["words"]
    assert [e["word"].lower().rstrip(".,?!:;") for e in entries] == words  # one entry per input word, in order
    kept = [e for e in entries if not e["removed"]]
    assert result["text"].split() == [e["word"] for e in kept]
    for entry in kept:
        assert result["text"][entry["start_char"]:entry["end_char"]] == entry["word"]
    if options.get("remove_disfluencies"):
        fluent = [w for w, e in zip(words, entries) if not e["disfluent"]]
        inner = {name: on for name, on in options.items() if name != "remove_disfluencies"}
        assert result["text"] == pipe(fluent, is_split_into_words=True, **inner)["text"]
        assert all(e["removed"] for e in entries if e["disfluent"])
    if options.get("spoken_punctuation"):
        commands = [w for w, e in zip(words, entries) if e["removed"] and not e.get("disfluent")]
        assert commands and set(commands) <= {"period", "comma", "new", "paragraph"}
        assert "period" not in result["text"].lower().split()
    if options.get("paragraphs"):
        assert result["text"].count("\n\n") == len(result["paragraphs"]) - 1
        for paragraph in result["paragraphs"]:
            assert not entries[paragraph["first_word"]]["removed"] and not entries[paragraph["last_word"]]["removed"]
            assert result["text"][paragraph["start_char"]:paragraph["end_char"]] == paragraph["text"]
    for sentence in result["sentences"]:
        assert result["text"][sentence["start_char"]:sentence["end_char"]] == sentence["text"]


def test_options_together_from_the_cli_and_the_torch_free_runtime(every_head_model, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnx")
    from hf_punctcase.cli import main
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    options = {"remove_disfluencies": True, "spoken_punctuation": True, "paragraphs": True}
    expected = hf_punctcase.load_pipeline(every_head_model, dtype=torch.float32)(TEXT, **options)
    monkeypatch.setattr("sys.argv", ["hf-punctcase"])
    code = main(["restore", "--model", every_head_model, "--remove-disfluencies", "--spoken-punctuation", "--paragraphs", TEXT])
    assert code == 0 and capsys.readouterr().out == expected["text"] + "\n"
    export_onnx(every_head_model, tmp_path / "onnx")
    result = OnDeviceRestorer(tmp_path / "onnx")(TEXT, **options)
    assert result["text"] == expected["text"]
    assert [e["removed"] for e in result["words"]] == [e["removed"] for e in expected["words"]]


def test_the_words_of_a_command_and_the_word_it_attaches_to_are_never_left_out_as_disfluent():
    words = "um the arms period and then comma".split()
    # The disfluency head, which learnt from speech without dictated commands, marks "arms" before
    # "period", and the commands themselves, disfluent.
    first = apply_commands(
        restored(words, ["O"] * 7, ["WORD", "WORD", "WORD", "PERIOD", "WORD", "WORD", "COMMA"],
                 disfluent=[True, False, True, True, False, False, True]),
        words,
    )
    kept, kept_words = fluent_inputs(first, words)
    assert kept == [1, 2, 3, 4, 5, 6] and kept_words == words[1:]
    # Without spoken punctuation the head decides alone.
    plain = restored(words, ["O"] * 7, ["WORD"] * 7, disfluent=[True, False, True, True, False, False, True])
    assert fluent_inputs(plain, words)[0] == [1, 4, 5]


def test_return_paragraphs_with_spoken_punctuation_and_removal_refer_to_input_words(every_head_model):
    pipe = hf_punctcase.load_pipeline(every_head_model, dtype=torch.float32)
    for options in ({"spoken_punctuation": True}, {"remove_disfluencies": True, "spoken_punctuation": True}):
        result = pipe(TEXT, return_paragraphs=True, **options)
        cut = pipe(TEXT, paragraphs=True, **options)
        # The same paragraphs as paragraphs=True gives, in the text without its blank lines.
        assert [(p["first_word"], p["last_word"]) for p in result["paragraphs"]] == [
            (p["first_word"], p["last_word"]) for p in cut["paragraphs"]
        ]
        assert len(result["paragraphs"]) > 1
        for paragraph in result["paragraphs"]:
            assert not result["words"][paragraph["first_word"]]["removed"]
            assert result["text"][paragraph["start_char"]:paragraph["end_char"]] == paragraph["text"]


def test_a_stream_with_spoken_punctuation_and_paragraphs_is_the_pipelines(every_head_model):
    from hf_punctcase import StreamingRestorer

    pipe = hf_punctcase.load_pipeline(every_head_model, dtype=torch.float32)
    words = TEXT.split() * 3
    whole = pipe(words, is_split_into_words=True, spoken_punctuation=True, paragraphs=True)
    stream = StreamingRestorer(pipe, window_words=200, context_words=50, spoken_punctuation=True, paragraphs=True)
    entries = []
    for start in range(0, len(words), 5):
        entries += stream.push(words[start:start + 5])
    entries += stream.flush()
    assert [(e["word"], e["removed"], e["start_char"], e["end_char"]) for e in entries] == [
        (e["word"], e["removed"], e["start_char"], e["end_char"]) for e in whole["words"]
    ]


# ---- every combination, on random input ----------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hf_punctcase.labels import split_trailing_marks  # noqa: E402

VOCABULARY = [
    "the", "patient", "said", "so", "we", "think", "it", "works", "period", "comma", "new", "line", "paragraph",
    "question", "mark", "colon", "um", "uh", "Plan:", "Wait!", "really?!", "and...", "NASA", "iPhone", "fine.",
    "Yes,", "😀", "3.5", '"quoted."',
]
OPTION_NAMES = ("spoken_punctuation", "remove_disfluencies", "keep_punctuation", "paragraphs")
LABELLED = ".,?!:;"


@pytest.fixture(scope="module")
def every_head_pipe(every_head_model):
    return hf_punctcase.load_pipeline(every_head_model, dtype=torch.float32)


@pytest.fixture(scope="module")
def every_head_runtime(every_head_model, tmp_path_factory):
    """The every-head model as an ONNX export, run by the torch-free runtime."""
    pytest.importorskip("onnx")
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    folder = tmp_path_factory.mktemp("every_head_onnx") / "onnx"
    export_onnx(every_head_model, folder)
    return OnDeviceRestorer(folder)


#: What to restore (``tasks=``): None is the pipeline's default, punctuation and casing.
TASK_CHOICES = (None, ("punct",), ("case",), ("punct", "case"))


def _timed(tokens: list[str]) -> list[dict]:
    """The words as an ASR with word timestamps gives them, a fifth of a second each."""
    return [{"word": token, "start": round(0.2 * i, 1), "end": round(0.2 * i + 0.15, 2)} for i, token in enumerate(tokens)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=40), st.sets(st.sampled_from(OPTION_NAMES)),
    st.sampled_from(TASK_CHOICES), st.booleans(),
)
def test_any_options_together_keep_the_word_contract(every_head_pipe, every_head_runtime, tokens, chosen, tasks, timed):
    options = {name: True for name in chosen}
    if tasks is not None:
        options["tasks"] = tasks
    inputs = _timed(tokens) if timed else tokens
    result = every_head_pipe(inputs, is_split_into_words=True, **options)
    entries = result["words"]
    # Each input word once, in order; only commands and disfluencies left out, and only when asked.
    assert len(entries) == len(tokens)
    for token, entry in zip(tokens, entries):
        assert split_trailing_marks(entry["word"])[0].lower().strip('"') == split_trailing_marks(token)[0].lower().strip('"')
        if entry.get("removed"):
            assert (options.get("spoken_punctuation") and entry.get("command", "WORD") != "WORD") or (
                options.get("remove_disfluencies") and entry.get("disfluent")
            ), (token, entry)
    if timed:
        # A timed word keeps its times, removed or kept.
        assert [(e["start"], e["end"]) for e in entries] == [(w["start"], w["end"]) for w in inputs]
    kept = [(token, entry) for token, entry in zip(tokens, entries) if not entry.get("removed")]
    assert result["text"].split() == [entry["word"] for _, entry in kept]
    if options.get("remove_disfluencies"):
        # The kept words restored as a transcript of their own (in one restoration where none was lost).
        fluent = [word for word, entry in zip(inputs, entries) if not entry.get("disfluent")]
        inner = {name: on for name, on in options.items() if name != "remove_disfluencies"}
        assert result["text"] == (every_head_pipe(fluent, is_split_into_words=True, **inner)["text"] if fluent else "")
    for token, entry in kept:
        trail = split_trailing_marks(entry["word"].rstrip('"'))[1]
        # No mark doubled by the library: a word keeps the marks it was written with or has at most one.
        assert trail == split_trailing_marks(token.rstrip('"'))[1] or sum(ch in LABELLED for ch in trail) <= 1, (token, entry["word"])
        if tasks == ("punct",):
            # Casing not restored: each word as written, but where a dictated sentence end capitalises it.
            assert entry["word"].rstrip(LABELLED + '"').lstrip('"').lower() == token.rstrip(LABELLED + '"').lstrip('"').lower()
        if tasks == ("case",) and not options.get("spoken_punctuation") and not options.get("keep_punctuation"):
            # Punctuation not restored: no mark where the word had none.
            assert sum(ch in LABELLED for ch in trail) <= sum(ch in LABELLED for ch in split_trailing_marks(token)[1]), (token, entry["word"])
    if not options.get("keep_punctuation") and tasks in (None, ("punct", "case")):
        words = [entry["word"] for _, entry in kept]
        starts = [0] + [i + 1 for i, word in enumerate(words[:-1]) if word.rstrip('"')[-1:] in ".?!"]
        for i in starts:
            if i < len(words) and words[i][:1].isalpha():
                # A capital, or a word of mixed case that keeps its form ("iPhone").
                assert words[i][0].isupper() or any(ch.isupper() for ch in words[i][1:]), (words, i)
    # The torch-free runtime gives the pipeline's text and words.
    on_device = every_head_runtime(inputs, is_split_into_words=True, **options)
    assert on_device["text"] == result["text"]
    assert [(e["word"], e.get("removed")) for e in on_device["words"]] == [(e["word"], e.get("removed")) for e in entries]
    if not options.get("remove_disfluencies"):
        stream_options = {name: True for name in chosen if name != "remove_disfluencies"}
        if tasks is not None:
            stream_options["tasks"] = tasks
        stream = hf_punctcase.StreamingRestorer(every_head_pipe, window_words=40, context_words=10, **stream_options)
        streamed = [e for i in range(0, len(inputs), 7) for e in stream.push(inputs[i : i + 7])] + stream.flush()
        expected = every_head_pipe(inputs, is_split_into_words=True, window_words=40, context_words=10, **options)
        assert [e["word"] for e in streamed] == [e["word"] for e in expected["words"]]


def test_a_stream_refuses_disfluency_removal_with_a_clear_error(every_head_pipe):
    with pytest.raises(TypeError, match=r"does not take \['remove_disfluencies'\]"):
        hf_punctcase.StreamingRestorer(every_head_pipe.model.name_or_path, remove_disfluencies=True)
