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


# ---- removal on long inputs: only the sentences that lost words restored again -----------------------------

from hf_punctcase.options.disfluency import lost_stretches, piece_words, restore_without_disfluencies, spliced_fluent  # noqa: E402


def _entries(words, punct, case, disfluent=None):
    """A restoration as the pipeline gives it, from punctuation and casing labels."""
    entries = [
        {"word": SCHEME.render_word(word, p, c), "punctuation": p, "casing": c, "punct_score": 0.9, "case_score": 0.9}
        for word, p, c in zip(words, punct, case)
    ]
    for entry, flag in zip(entries, disfluent or [False] * len(words)):
        entry.update(disfluent=flag, disfluency_score=0.9 if flag else 0.1)
    add_char_offsets(entries)
    return {"text": " ".join(e["word"] for e in entries), "words": entries}


SPLICE_WORDS = "we left um so she came then we ate".split()
#: The first restoration: "um" disfluent, three sentences.
SPLICE_FIRST = _entries(
    SPLICE_WORDS, ["O", "PERIOD", "COMMA", "COMMA", "O", "PERIOD", "O", "O", "PERIOD"],
    ["UPPER_FIRST", "LOWER", "UPPER_FIRST", "LOWER", "LOWER", "LOWER", "UPPER_FIRST", "LOWER", "LOWER"],
    disfluent=[False, False, True] + [False] * 6,
)
SPLICE_KEPT = [0, 1, 3, 4, 5, 6, 7, 8]


def test_the_lost_stretch_is_the_sentence_that_lost_a_word_and_its_piece_has_context_around_it():
    assert lost_stretches(SPLICE_FIRST, SPLICE_KEPT) == [(2, 6)]
    assert piece_words((2, 6), SPLICE_KEPT, 2) == [0, 1, 3, 4, 5, 6, 7]
    assert piece_words((2, 6), SPLICE_KEPT, 0) == [3, 4, 5]
    # One sentence: nothing to splice.
    one = _entries(["so", "um", "yes"], ["O", "O", "O"], ["LOWER"] * 3, disfluent=[False, True, False])
    assert lost_stretches(one, [0, 2]) is None


def test_a_splice_takes_the_stretch_from_its_piece_and_every_other_word_from_the_first_restoration():
    piece = _entries(
        [SPLICE_WORDS[i] for i in [0, 1, 3, 4, 5, 6, 7]], ["O", "PERIOD", "O", "O", "PERIOD", "O", "COMMA"],
        ["LOWER", "LOWER", "UPPER_FIRST", "LOWER", "LOWER", "LOWER", "LOWER"],
    )
    first = {**SPLICE_FIRST, "sentences": []}
    fluent = spliced_fluent(first, SPLICE_KEPT, [((2, 6), [0, 1, 3, 4, 5, 6, 7], piece)])
    # "So she came." from the piece; "We left." and "Then we ate." as the first restoration wrote them.
    assert fluent["text"] == "We left. So she came. Then we ate."
    assert [e["word"] for e in fluent["words"]] == fluent["text"].split()
    for entry in fluent["words"]:
        assert fluent["text"][entry["start_char"]:entry["end_char"]] == entry["word"]
    assert [s["text"] for s in fluent["sentences"]] == ["We left.", "So she came.", "Then we ate."]
    assert [(s["first_word"], s["last_word"]) for s in fluent["sentences"]] == [(0, 1), (2, 4), (5, 7)]


def test_a_splice_whose_piece_ends_no_sentence_at_a_seam_is_refused():
    # The piece runs "came" on into "then": the first restoration's capital on "Then" would follow no
    # sentence end, so the kept words must be restored whole.
    piece = _entries(
        [SPLICE_WORDS[i] for i in [0, 1, 3, 4, 5, 6, 7]], ["O", "PERIOD", "O", "O", "COMMA", "O", "O"],
        ["LOWER", "LOWER", "UPPER_FIRST", "LOWER", "LOWER", "LOWER", "LOWER"],
    )
    assert spliced_fluent(SPLICE_FIRST, SPLICE_KEPT, [((2, 6), [0, 1, 3, 4, 5, 6, 7], piece)]) is None
    # Nor one whose context before the stretch ends no sentence.
    piece = _entries(
        [SPLICE_WORDS[i] for i in [0, 1, 3, 4, 5, 6, 7]], ["O", "COMMA", "O", "O", "PERIOD", "O", "O"],
        ["LOWER", "LOWER", "LOWER", "LOWER", "LOWER", "UPPER_FIRST", "LOWER"],
    )
    assert spliced_fluent(SPLICE_FIRST, SPLICE_KEPT, [((2, 6), [0, 1, 3, 4, 5, 6, 7], piece)]) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from([word for word in VOCABULARY if word.isalpha() or word in ("fine.", "Yes,")]), min_size=30, max_size=120),
    st.sets(st.sampled_from(("spoken_punctuation", "paragraphs"))), st.booleans(),
)
def test_removal_on_inputs_longer_than_a_window_keeps_the_word_contract(every_head_pipe, tokens, chosen, timed):
    options = {name: True for name in chosen}
    inputs = _timed(tokens) if timed else tokens
    sizes = []

    def restore(items, split, **given):
        sizes.append([len(item) for item in items] if items and isinstance(items[0], list) else [len(items)])
        return every_head_pipe(items, is_split_into_words=split, **given)

    result = restore_without_disfluencies(
        restore, inputs, True, window_words=20, context_words=5, return_sentences=True, **options
    )
    entries = result["words"]
    assert len(entries) == len(tokens)
    for token, entry in zip(tokens, entries):
        assert split_trailing_marks(entry["word"])[0].lower() == split_trailing_marks(token)[0].lower()
        if entry["removed"]:
            assert entry["disfluent"] or (options.get("spoken_punctuation") and entry.get("command", "WORD") != "WORD")
    placed = [entry for entry in entries if not entry["removed"]]
    assert result["text"].split() == [entry["word"] for entry in placed]
    for entry in placed:
        assert result["text"][entry["start_char"]:entry["end_char"]] == entry["word"]
    spans = [(s["first_word"], s["last_word"]) for s in result["sentences"]]
    assert [i for first, last in spans for i in range(first, last + 1) if not entries[i]["removed"]] == [
        i for i, entry in enumerate(entries) if not entry["removed"]
    ]
    for span in result["sentences"] + result.get("paragraphs", []):
        assert result["text"][span["start_char"]:span["end_char"]] == span["text"]
    if timed:
        assert [(e["start"], e["end"]) for e in entries] == [(w["start"], w["end"]) for w in inputs]
    kept = sum(not entry["disfluent"] for entry in entries)
    if len(sizes) > 1 and sum(sizes[1]) < kept:
        # Spliced: the stretches restored again, with their context, hold at most half the kept words.
        assert sum(sizes[1]) <= kept / 2


#: A talk of about 320 words, as an ASR writes it, with one filled pause in it.
LONG_TALK = (
    "thank you all for coming this morning i want to talk about how we build the maps that ships use to find "
    "their way into a harbour most people think that the sea floor is known everywhere but it is not in fact "
    "we have better maps of the moon than of the bottom of our own coastal waters when a survey boat goes out "
    "it sends a pulse of sound down and listens for the echo the time it takes tells us how deep the water is "
    "and the strength of the echo tells us whether the bottom is sand or rock or mud we do this thousands of "
    "times a second as the boat moves along a line and then we turn around and do the next line a little to "
    "the side the result is a picture of the floor with every hill and every wreck on it now the hard part is "
    "not the measuring um the hard part is everything that moves while we measure the boat rolls the tide rises "
    "and falls and the speed of sound in water changes with the temperature and the salt so every number has "
    "to be corrected before it means anything we spend more time on those corrections than on the survey "
    "itself and that is why a good chart takes months to make when it is done though the captain of a large "
    "ship can trust that the channel is as deep as the chart says and that there is no rock waiting where the "
    "chart shows clear water that trust is what we are really making and it is worth every hour we put into it "
    "so next time you see a ship come into port think of the people who measured the water for it thank you "
    "very much and i am happy to take questions about any of this now or later in the day"
)


@pytest.fixture(scope="module")
def default_fp32():
    # fp32 torch: the same labels on every CPU kind (the plan's graphs round differently on each).
    return hf_punctcase.load_pipeline(runtime="torch", dtype="float32")


def test_a_long_talk_that_loses_a_filler_has_only_its_sentence_restored_again(default_fp32):
    words = LONG_TALK.split()
    sizes = []

    def restore(items, split, **given):
        sizes.append([len(item) for item in items] if items and isinstance(items[0], list) else [len(items)])
        return default_fp32(items, is_split_into_words=split, **given)

    result = restore_without_disfluencies(restore, words, True)
    removed = [entry["word"] for entry in result["words"] if entry["removed"]]
    assert removed == ["um"]
    # Two restorations: the talk, then the sentence that lost "um" with 50 kept words on each side.
    assert len(sizes) == 2 and len(sizes[1]) == 1 and sizes[1][0] < (len(words) - 1) / 2
    # The same text as the kept words restored whole.
    assert result["text"] == default_fp32([w for w in words if w != "um"], is_split_into_words=True)["text"]
    assert "Now, the hard part is not the measuring. The hard part is everything that moves." in result["text"]


def test_a_long_talk_with_written_marks_kept_is_restored_again_whole_and_a_bare_one_in_pieces(default_fp32):
    words = LONG_TALK.split()
    for written, pieces in ((words, True), (["Thank", "you."] + words[2:], False)):
        sizes = []

        def restore(items, split, **given):
            sizes.append([len(item) for item in items] if items and isinstance(items[0], list) else [len(items)])
            return default_fp32(items, is_split_into_words=split, **given)

        result = restore_without_disfluencies(restore, written, True, keep_punctuation=True)
        assert [entry["word"] for entry in result["words"] if entry["removed"]] == ["um"]
        kept = [w for w in written if w != "um"]
        assert (sizes[1][0] < len(kept)) is pieces
        assert result["text"] == default_fp32(kept, is_split_into_words=True, keep_punctuation=True)["text"]
