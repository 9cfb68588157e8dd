#!/usr/bin/env bash
# The default's recipe on corpora that all allow commercial use (recipes/configs/open), from the
# pretrained encoder to its dev figures, each step resumed where it stopped when the script is started
# again (a finished step is skipped):
#   1. stage 1 (open_mpnet6.yaml: 1,300 steps of 150-word windows), from its newest checkpoint;
#   2. stage 2 (open_mpnet6_stage2.yaml: 1,000 steps of 200-word windows, the rate to zero);
#   3. stage 3 (open_mpnet6_stage3.yaml: 600 steps at 1e-5, ACI-BENCH's transcripts at weight 1 and their
#      real ASR output at 12);
#   4. every dev set through the pipeline for each stage's end, in torch fp32.
# The shipped stage 3 went on from a stage 2 started from the shipped open model (int8 per row) rather than
# stage 1's checkpoint (open_mpnet6_stage2_from_shipped.yaml: the same data, steps, rate and seed); this
# script trains every stage from the encoder.
# Usage (from the repository root, the corpora in HF_PUNCTCASE_DATA), after any other training has ended:
#   HF_PUNCTCASE_DATA=../shared/data nohup nice bash docs/research/scripts/open_transformer_run.sh > runs/open_transformer_run.log 2>&1 &
set -euo pipefail
export HF_PUNCTCASE_DATA="${HF_PUNCTCASE_DATA:-../shared/data}"
. "$(dirname "$0")/preload_jemalloc.sh"
configs=recipes/configs/open

[ -f runs/open/mpnet6/final/config.json ] || python recipes/finetune.py "$configs/open_mpnet6.yaml"
[ -f runs/open/mpnet6_s2/final/config.json ] || python recipes/finetune.py "$configs/open_mpnet6_stage2.yaml"
[ -f runs/open/mpnet6_s3/final/config.json ] || python recipes/finetune.py "$configs/open_mpnet6_stage3.yaml"

mkdir -p runs/dev_eval
evaluate() {  # NAME MODEL_FOLDER
    [ -f "runs/dev_eval/$1.json" ] && return 0
    python benchmarks/dev_eval.py --model "$2" --dtype float32 --no-truecase --data-dir "$HF_PUNCTCASE_DATA" \
        --json "runs/dev_eval/$1.json" > "runs/dev_eval/$1.txt"
}
evaluate open_mpnet6_s1 runs/open/mpnet6/final
evaluate open_mpnet6_s2 runs/open/mpnet6_s2/final
evaluate open_mpnet6_s3 runs/open/mpnet6_s3/final
echo "done: runs/dev_eval/open_mpnet6_s1.txt, open_mpnet6_s2.txt, open_mpnet6_s3.txt"
