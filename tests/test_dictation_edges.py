"""Spoken punctuation at its edges, as a clinician dictates: commands first, commands said twice, fillers
beside commands, dictated marks beside marks already written, and the options' errors. Each rule on
hand-made restorations (the labels a model would give), then the same cases through the embedded default."""

from __future__ import annotations

import subprocess
import sys

import pytest

import hf_punctcase
from hf_punctcase.options.dictation import apply_commands, command_spans
from hf_punctcase.options.disfluency import fluent_inputs, is_filler
from hf_punctcase.labels import LabelScheme

SCHEME = LabelScheme()


def restored(words, punct, case, command, disfluent=None, written_marks=None):
    """A restoration as the pipeline gives it: each entry's word rendered from its labels, or, for a word
    whose marks were kept as written (``written_marks``), its core and those marks."""
    entries = []
    for i, (word, p, c, k) in enumerate(zip(words, punct, case, command)):
        text = SCHEME.render_word(word, p, c)
        if written_marks and written_marks[i]:
            text = SCHEME.render_word(word, "O", c) + written_marks[i]
        entries.append({
            "word": text, "punctuation": p, "casing": c, "punct_score": 0.9, "case_score": 0.9,
            "command": k, "command_score": 0.8,
            **({"disfluent": disfluent[i], "disfluency_score": 0.95 if disfluent[i] else 0.05} if disfluent else {}),
        })
    return {"text": " ".join(e["word"] for e in entries), "words": entries}


def test_a_command_with_no_word_before_it_is_carried_out_as_nothing_and_the_text_starts_with_a_capital():
    words = "period the patient is stable".split()
    result = apply_commands(
        restored(words, ["O", "O", "O", "O", "PERIOD"], ["LOWER"] * 5, ["PERIOD", "WORD", "WORD", "WORD", "WORD"]), words
    )
    assert result["text"] == "The patient is stable."
    words = "new line the patient".split()
    result = apply_commands(restored(words, ["O", "O", "O", "PERIOD"], ["LOWER"] * 4, ["NEWLINE", "NEWLINE", "WORD", "WORD"]), words)
    assert result["text"] == "The patient."


@pytest.mark.parametrize(
    ("words", "labels", "spans"),
    [
        # The head read neither as a command: a phrase said twice in a row has no reading as words.
        ("stable period period plan".split(), ["WORD"] * 4, [(1, 2, "PERIOD"), (2, 3, "PERIOD")]),
        ("okay question mark question mark".split(), ["WORD", "WORD", "WORD", "WORD", "WORD"],
         [(1, 3, "QUESTION"), (3, 5, "QUESTION")]),
        # Read partly as a command, then wholly: still the command said twice.
        ("okay question mark question mark".split(), ["WORD", "QUESTION", "WORD", "QUESTION", "QUESTION"],
         [(1, 3, "QUESTION"), (3, 5, "QUESTION")]),
        ("pain period period".split(), ["WORD", "PERIOD", "WORD"], [(1, 2, "PERIOD"), (2, 3, "PERIOD")]),
        ("a new paragraph new paragraph b".split(), ["WORD"] * 6, [(1, 3, "PARAGRAPH"), (3, 5, "PARAGRAPH")]),
        # Said once and read as a word, it stays a word; said twice, one read as a command, the other too.
        ("a period of two weeks".split(), ["WORD"] * 5, []),
        ("not a period period".split(), ["WORD", "WORD", "WORD", "PERIOD"], [(3, 4, "PERIOD")]),
    ],
)
def test_a_command_said_twice_in_a_row_is_a_command(words, labels, spans):
    assert command_spans(words, labels) == spans


def test_a_command_said_twice_is_carried_out_once():
    words = "stable period period new paragraph new paragraph plan".split()
    result = apply_commands(
        restored(words, ["COMMA", "COMMA", "COMMA", "O", "COMMA", "O", "O", "PERIOD"], ["UPPER_FIRST"] + ["LOWER"] * 7, ["WORD"] * 8),
        words,
    )
    assert result["text"] == "Stable.\n\nPlan."
    words = "are you okay question mark question mark".split()
    result = apply_commands(
        restored(words, ["O", "O", "QUESTION", "O", "QUESTION", "O", "QUESTION"], ["UPPER_FIRST"] + ["LOWER"] * 6, ["WORD"] * 7),
        words,
    )
    assert result["text"] == "Are you okay?"


@pytest.mark.parametrize(
    ("words", "marks", "command", "text"),
    [
        (["plan", "colon", "rest"], [":", None, None], "COLON", "Plan: rest."),
        (["wait", "exclamation", "point", "stop"], ["!", None, None, None], "EXCLAMATION", "Wait! Stop."),
        (["said", "semicolon", "and"], [";", None, None], "SEMICOLON", "Said; and."),
        # Closing quotes stay where they were written, the dictated mark inside them.
        (["stable", "period", "next"], ['."', None, None], "PERIOD", 'Stable." Next.'),
    ],
)
def test_a_dictated_mark_next_to_the_same_mark_written_gives_one_mark(words, marks, command, text):
    n = len(words)
    spoken = n - 2 if command != "EXCLAMATION" else 2
    commands = ["WORD"] + [command] * spoken + ["WORD"]
    case = ["UPPER_FIRST"] + ["LOWER"] * (n - 1)
    # keep_punctuation reports a kept mark's label (a colon's is COMMA in the default scheme).
    punct = ["COMMA"] + ["O"] * (n - 2) + ["PERIOD"]
    result = apply_commands(restored(words, punct, case, commands, written_marks=marks), words)
    assert result["text"] == text


def test_kept_marks_without_a_command_come_back_as_written():
    words = "plan rest fluids and follow up".split()
    marks = [":", ",", ";", None, None, "."]
    result = apply_commands(
        restored(words, ["COMMA", "COMMA", "COMMA", "O", "O", "PERIOD"], ["UPPER_FIRST"] + ["LOWER"] * 5, ["WORD"] * 6, written_marks=marks),
        words,
    )
    assert result["text"] == "Plan: rest, fluids; and follow up."


def test_a_filler_beside_a_command_goes_as_any_filler_and_a_meant_word_stays():
    words = "chest pain um period he".split()
    first = apply_commands(
        restored(words, ["O", "O", "O", "O", "PERIOD"], ["UPPER_FIRST"] + ["LOWER"] * 4, ["WORD", "WORD", "WORD", "PERIOD", "WORD"],
                 disfluent=[False, False, True, False, False]),
        words,
    )
    kept, _ = fluent_inputs(first, words)
    assert kept == [0, 1, 3, 4]  # "um" goes; "period" stays to be carried out after "pain"
    # A word the head marks disfluent before a command is kept: a speaker dictates a mark after words they mean.
    words = "chest pain pain period he".split()
    first = apply_commands(
        restored(words, ["O", "O", "O", "O", "PERIOD"], ["UPPER_FIRST"] + ["LOWER"] * 4, ["WORD", "WORD", "WORD", "PERIOD", "WORD"],
                 disfluent=[False, True, True, False, False]),
        words,
    )
    assert fluent_inputs(first, words)[0] == [0, 2, 3, 4]


def test_a_filled_pause_goes_at_even_odds_and_other_words_at_the_models_threshold():
    words = "ok um did the pain come".split()
    first = restored(words, ["PERIOD", "COMMA", "O", "O", "O", "QUESTION"], ["UPPER_FIRST"] + ["LOWER"] * 5, ["WORD"] * 6,
                     disfluent=[False] * 6)
    for entry, score in zip(first["words"], [0.1, 0.6, 0.6, 0.1, 0.1, 0.1]):
        entry["disfluency_score"] = score  # below the model's threshold (disfluent False) for every word
    assert fluent_inputs(first, words)[0] == [0, 2, 3, 4, 5]  # "um" goes, "did" at the same score stays
    assert not is_filler("er") and not is_filler("mm")  # the ER, millimetres: words a reader needs


@pytest.mark.parametrize("text", ["um", "uh", "um um", "Uh, um."])
def test_an_input_of_fillers_only_keeps_no_word(text):
    words = text.split()
    first = restored(words, ["O"] * len(words), ["LOWER"] * len(words), ["WORD"] * len(words), disfluent=[False] * len(words))
    assert fluent_inputs(first, words) == ([], [])
    assert all(is_filler(word) for word in words) and not is_filler("umbrella")


# ---- through the embedded default, as the user calls it ---------------------------------------------


@pytest.fixture(scope="module")
def default():
    # fp32 torch: the same labels on every CPU kind (the plan's graphs round differently on each).
    return hf_punctcase.load_pipeline(runtime="torch", dtype="float32")


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("period the patient is stable", {}, "The patient is stable."),
        ("new line the patient is stable", {}, "The patient is stable."),
        ("stable period period new paragraph new paragraph plan", {}, "Stable.\n\nPlan."),
        ("are you okay question mark question mark", {}, "Are you okay?"),
        ("chest pain um period he denies fever", {"remove_disfluencies": True}, "Chest pain. He denies fever."),
        ("um the patient is stable period uh new paragraph plan colon rest period", {"remove_disfluencies": True},
         "The patient is stable.\n\nPlan: rest."),
        # "rest" closes a written stretch ("Plan:" is cased): it keeps its lack of a mark, as written.
        ("Plan: colon rest", {"keep_punctuation": True}, "Plan: rest"),
        ("Wait! exclamation point stop", {"keep_punctuation": True}, "Wait! Stop."),
        ("Plan: rest, fluids; and follow up.", {"keep_punctuation": True}, "Plan: rest, fluids; and follow up."),
    ],
)
def test_the_default_dictates_as_a_clinician_expects(default, text, options, expected):
    assert default(text, spoken_punctuation=True, **options)["text"] == expected


def test_fillers_alone_come_back_empty_every_word_disfluent(default):
    for text in ("um", "uh", "um um"):
        result = default(text, remove_disfluencies=True)
        assert result["text"] == "" and all(w["disfluent"] and w["removed"] for w in result["words"])


def test_return_commands_without_the_head_is_the_same_error_naming_the_model_asked_for():
    accurate = hf_punctcase.load_pipeline("accurate")
    for option in ("return_commands", "spoken_punctuation"):
        with pytest.raises(ValueError, match=rf"{option}=True needs a model with a spoken command head") as error:
            accurate("chest pain period", **{option: True})
        assert str(hf_punctcase.ACCURATE_MODEL_DIR) in str(error.value) and "onnx" not in str(error.value)


def test_lines_before_a_bad_line_on_stdin_are_written_before_the_error():
    done = subprocess.run(
        [sys.executable, "-m", "hf_punctcase.cli", "restore", "--spoken-punctuation", "--runtime", "torch", "--dtype", "float32"],
        input=b"chest pain period he denies fever\nbad \xff line\n", capture_output=True, timeout=600,
    )
    assert done.returncode == 2 and b"line 2 is not valid UTF-8" in done.stderr
    assert done.stdout.decode() == "Chest pain. He denies fever.\n"
