"""The punct_case metric against hand-computed examples, offline through evaluate.load."""

import evaluate
import pytest

from hf_punctcase.metrics import PUNCT_CASE_METRIC_PATH, PunctCase

PUNCT = ["O", "COMMA", "PERIOD", "QUESTION"]
CASE = ["LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED"]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(PUNCT_CASE_METRIC_PATH)


def test_plain_mode_by_hand(metric):
    references = [["O", "COMMA", "PERIOD"], ["O", "QUESTION", "PERIOD"]]
    predictions = [["COMMA", "COMMA", "PERIOD"], ["O", "PERIOD", "O"]]
    scores = metric.compute(predictions=predictions, references=references)
    # COMMA: tp 1, fp 1 → P .5 R 1; PERIOD: tp 1, fp 1, fn 1; QUESTION: fn 1.
    assert scores["COMMA"] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3), "support": 1}
    assert scores["PERIOD"]["f1"] == pytest.approx(0.5) and scores["QUESTION"]["f1"] == 0.0
    assert scores["overall_precision"] == pytest.approx(0.5) and scores["overall_recall"] == pytest.approx(0.5)
    # slots: 4 reference marks; 1 insertion (O→COMMA), 1 substitution (?→.), 1 deletion (.→O)
    assert scores["slot_error_rate"] == pytest.approx(3 / 4)
    assert scores["confusion_matrix"] == {
        "labels": PUNCT,
        "matrix": [[1, 1, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 0]],
    }
    assert scores["words"] == 6


def test_ids_with_ignored_positions():
    casing = evaluate.load(PUNCT_CASE_METRIC_PATH, "casing")
    scores = casing.compute(predictions=[[1, 0, 3, 2]], references=[[1, 2, -100, 0]], label_names=CASE)
    # pairs: (UF, UF), (ALL_UPPER, LOWER), (LOWER, ALL_UPPER); LOWER is the null class.
    assert scores["overall_precision"] == pytest.approx(0.5)
    assert scores["overall_recall"] == pytest.approx(0.5)
    assert "LOWER" not in scores and scores["UPPER_FIRST"]["f1"] == 1.0
    with pytest.raises(ValueError, match="label_names"):
        casing.compute(predictions=[[1]], references=[[1]])


def test_mismatched_lengths_are_an_error(metric):
    with pytest.raises(ValueError, match="example 0: 2 predicted labels but 3 reference labels"):
        metric.compute(predictions=[["O", "O"]], references=[["O", "O", "PERIOD"]])


@pytest.mark.parametrize(
    "hyp_words, hyp_labels, expected",
    [
        # insertion: "um" added with a comma → a false COMMA (insertion slot)
        (["so", "um", "well", "yes"], ["O", "COMMA", "COMMA", "PERIOD"],
         {"COMMA": (0.5, 1.0), "PERIOD": (1.0, 1.0), "ser": 1 / 2}),
        # deletion: "well" dropped by the ASR → its COMMA is missed
        (["so", "yes"], ["O", "PERIOD"], {"COMMA": (0.0, 0.0), "PERIOD": (1.0, 1.0), "ser": 1 / 2}),
        # substitution: "well" heard as "bell", labels compared across the substituted pair
        (["so", "bell", "yes"], ["O", "COMMA", "QUESTION"], {"COMMA": (1.0, 1.0), "PERIOD": (0.0, 0.0), "ser": 1 / 2}),
    ],
)
def test_asr_alignment(hyp_words, hyp_labels, expected):
    scores = PunctCase().compute(
        predictions=[hyp_labels], references=[["O", "COMMA", "PERIOD"]],
        prediction_words=[hyp_words], reference_words=[["So", "well,", "yes."]],
    )
    for name in ("COMMA", "PERIOD"):
        assert (scores[name]["precision"], scores[name]["recall"]) == pytest.approx(expected[name]), name
    assert scores["slot_error_rate"] == pytest.approx(expected["ser"])


def test_asr_mode_checks_its_inputs():
    with pytest.raises(ValueError, match="both prediction_words and reference_words"):
        PunctCase().compute(predictions=[["O"]], references=[["O"]], prediction_words=[["a"]])
    with pytest.raises(ValueError, match="one label per word"):
        PunctCase().compute(predictions=[["O"]], references=[["O"]], prediction_words=[["a", "b"]], reference_words=[["a"]])
