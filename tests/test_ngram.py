"""n-gram data selection with IRSTLM (estimation) and kenlm (scoring), on a toy corpus."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from hf_punctcase.labels import LabelScheme
from hf_punctcase.training.ngram import Sentence, irstlm_tool, oov_rates, perplexities, select_by_perplexity, split_sentences, train_ngram_lm

try:
    irstlm_tool("tlm")
    import kenlm  # noqa: F401
except (FileNotFoundError, ImportError) as error:  # .ci/run installs both; say so rather than pass
    pytestmark = pytest.mark.skip(reason=f"n-gram toolkits missing: {error}")

RECIPES = Path(__file__).resolve().parents[1] / "recipes"

CONVERSATION = [
    "yeah i think so too", "uh i don't know what you mean", "well you know we went there last summer",
    "i mean it was kind of fun", "so do you have any kids", "oh that's really nice", "yeah we have two dogs",
    "i think it's pretty expensive you know", "well i don't really watch much television",
]
OFF_DOMAIN = [
    "the mitochondrial membrane potential regulates apoptosis", "quarterly revenue exceeded analyst estimates",
    "the theorem follows from compactness of the unit ball", "parliament ratified the treaty in march",
]


def _conversation(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(CONVERSATION) for _ in range(n)]


def test_lm_ranks_in_domain_like_sentences_above_off_domain(tmp_path):
    rng = random.Random(0)
    lm = train_ngram_lm(_conversation(rng, 500), tmp_path / "conv.arpa", order=4, smoothing="wb")
    assert lm.read_text().lstrip().startswith("\\data\\")
    candidates = ["yeah i think it's really nice you know", "well we went there last summer"] + OFF_DOMAIN
    scores = perplexities(lm, candidates)
    assert max(scores[:2]) < min(scores[2:])
    sentences = [Sentence(f"d{i}", c.split(), [0] * len(c.split()), [0] * len(c.split())) for i, c in enumerate(candidates)]
    kept = select_by_perplexity(sentences, scores, max_words=14, min_words=3)
    assert kept == [0, 1]  # both conversational ones, in their original order


def test_split_sentences_cuts_after_sentence_marks():
    scheme = LabelScheme()
    labeled = scheme.parse("Hello there. How are you? Fine")
    row = {"doc_id": "d", "words": labeled.words, "punct": [scheme.punct2id[p] for p in labeled.punct],
           "case": [scheme.case2id[c] for c in labeled.case]}
    assert [s.lm_text for s in split_sentences([row], scheme.punct_labels)] == ["hello there", "how are you", "fine"]


def test_bad_smoothing_and_empty_input_are_refused(tmp_path):
    with pytest.raises(ValueError, match="smoothing"):
        train_ngram_lm(["a b c"], tmp_path / "x.arpa", smoothing="good-turing-ish")
    with pytest.raises(ValueError, match="no in-domain sentence"):
        train_ngram_lm(["", "  "], tmp_path / "x.arpa")


def test_sample_external_recipe_keeps_the_in_domain_like_text(tmp_path):
    sys.path.insert(0, str(RECIPES))
    import sample_external

    rng = random.Random(1)
    in_domain = tmp_path / "in.jsonl"
    external = tmp_path / "ext.jsonl"
    with open(in_domain, "w") as handle:
        for i in range(60):
            handle.write(json.dumps({"id": f"c{i}", "text": ". ".join(s.capitalize() for s in _conversation(rng, 8)) + "."}) + "\n")
    with open(external, "w") as handle:
        for i in range(40):
            pool = CONVERSATION if i % 2 else OFF_DOMAIN
            handle.write(json.dumps({"id": f"e{i}", "text": ". ".join(s.capitalize() for s in rng.choices(pool, k=6)) + "."}) + "\n")
    output = sample_external.main([
        "--in_domain", f"text:{in_domain}", "--external", f"text:{external}", "--max_words", "150",
        "--smoothing", "wb", "--output", str(tmp_path / "sampled.jsonl"),
    ])
    kept = [json.loads(line) for line in output.read_text().splitlines()]
    sources = [source for doc in kept for source in doc["sources"]]
    assert sources and all(int(source.split("/e")[-1]) % 2 == 1 for source in sources)  # only conversational documents
    assert len(kept) == 1  # packed into one pseudo-document (--document_words 1000)
    words = sum(len(doc["text"].split()) for doc in kept)
    assert 100 <= words <= 150
    assert kept[0]["text"][0].isupper() and kept[0]["text"].endswith(".")  # punctuation and casing kept
    summary = json.loads(output.with_suffix(".summary.json").read_text())
    assert summary["kept_words"] == words


def test_oov_rate_keeps_unknown_word_sentences_out(tmp_path):
    rng = random.Random(0)
    lm = train_ngram_lm(_conversation(rng, 500), tmp_path / "conv.arpa", order=4, smoothing="wb")
    candidates = ["yeah i think it's really nice you know", "미국 진출 기업은 과학재단 비교적 얍볼 수 있게 됐다"]
    rates = oov_rates(lm, candidates)
    assert rates[0] == 0.0 and rates[1] == 1.0
    sentences = [Sentence(f"d{i}", c.split(), [0] * len(c.split()), [0] * len(c.split())) for i, c in enumerate(candidates)]
    scores = perplexities(lm, candidates)
    assert select_by_perplexity(sentences, scores, max_words=100, oov=rates, max_oov_rate=0.1) == [0]
