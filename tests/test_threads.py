"""One pipeline shared by a server's threads: the results of serial calls, on every runtime the plan can pick."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import random_text

import hf_punctcase

OPTION_SETS = [{}, {"remove_disfluencies": False, "return_sentences": True}, {"keep_punctuation": True}, {"ends_sentence": False}]


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_PUNCTCASE_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("runtime", ["torch", "onnxruntime", "openvino"])
def test_one_pipeline_shared_by_eight_threads_gives_the_serial_results(tiny_model_dir, own_cache, runtime):
    pipe = hf_punctcase.load_pipeline(tiny_model_dir, runtime=runtime)
    assert pipe.execution_plan.runtime == runtime
    rng = random.Random(0)
    calls = [(random_text(rng, rng.randint(3, 90)), OPTION_SETS[i % len(OPTION_SETS)]) for i in range(32)]
    serial = [pipe(text, **options) for text, options in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda call: pipe(call[0], **call[1]), calls))
    assert threaded == serial
