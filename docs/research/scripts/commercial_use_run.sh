#!/usr/bin/env bash
# The commercial-use on-device model from its tokenizer to its dev figures, one step after another, each
# resumed where it stopped when the script is started again (a finished step is skipped):
#   1. the tokenizer trained on the open corpora;
#   2. the run (recipes/configs/on_device/on_device_word_open.yaml) to step 3,400, from its newest checkpoint;
#   3. its checkpoint-3400 copied aside as the branch point of the decay stages;
#   4. the decay stage (on_device_word_open_decay_stage.yaml), then the same with the presidents' news
#      conferences (on_device_word_open_news_conferences_decay_stage.yaml; their file is built first);
#   5. every dev set through the pipeline for the branch point and each stage's end, in torch fp32.
# Usage (from the repository root, the corpora in HF_PUNCTCASE_DATA; POLDIS_GIT_DIR a bare copy of
# henriquesposito/poldis, needed for the news conferences' file):
#   HF_PUNCTCASE_DATA=../shared/data POLDIS_GIT_DIR=/work/.mirror/henriquesposito+poldis/repo \
#       nohup nice bash docs/research/scripts/commercial_use_run.sh > runs/commercial_use_run.log 2>&1 &
set -euo pipefail
export HF_PUNCTCASE_DATA="${HF_PUNCTCASE_DATA:-../shared/data}"
. "$(dirname "$0")/preload_jemalloc.sh"
configs=recipes/configs/on_device
runs=runs/cnn_bilstm

finished() {  # a run folder whose trainer has saved the step
    [ -d "$1/checkpoint_models/checkpoint-$2" ]
}

if [ ! -f "$runs/tokenizer_open_5k/tokenizer.json" ]; then
    python recipes/train_tokenizer.py --output_dir "$runs/tokenizer_open_5k" --character_coverage 0.9995 \
        --train_corpora changelog ungd wikipedia_2015 gutenberg masc mts_dialog aci_bench mtsamples
fi
finished "$runs/word_open" 3400 || python recipes/finetune.py "$configs/on_device_word_open.yaml"
if [ ! -d "$runs/branch_points_open/checkpoint-3400" ]; then
    mkdir -p "$runs/branch_points_open"
    cp -r "$runs/word_open/checkpoint-3400" "$runs/branch_points_open/.checkpoint-3400.partial"
    mv "$runs/branch_points_open/.checkpoint-3400.partial" "$runs/branch_points_open/checkpoint-3400"
fi
finished "$runs/word_open_decay_stage" 3800 || python recipes/finetune.py "$configs/on_device_word_open_decay_stage.yaml"
news=runs/external/news_conferences/news_conferences_1960_1980.jsonl
if [ ! -f "$news" ]; then
    python docs/research/scripts/presidential_news_conferences.py --git-dir "${POLDIS_GIT_DIR:?a bare copy of henriquesposito/poldis}" --output "$news"
fi
finished "$runs/word_open_news_conferences_decay_stage" 3800 \
    || python recipes/finetune.py "$configs/on_device_word_open_news_conferences_decay_stage.yaml"

mkdir -p runs/dev_eval
evaluate() {  # NAME MODEL_FOLDER
    [ -f "runs/dev_eval/$1.json" ] && return 0
    python benchmarks/dev_eval.py --model "$2" --dtype float32 --no-truecase --data-dir "$HF_PUNCTCASE_DATA" \
        --json "runs/dev_eval/$1.json" > "runs/dev_eval/$1.txt"
}
evaluate open_3400 "$runs/word_open/checkpoint_models/checkpoint-3400"
evaluate open_decay_3800 "$runs/word_open_decay_stage/checkpoint_models/checkpoint-3800"
evaluate open_news_decay_3800 "$runs/word_open_news_conferences_decay_stage/checkpoint_models/checkpoint-3800"
echo "done: runs/dev_eval/open_3400.txt, open_decay_3800.txt, open_news_decay_3800.txt"
