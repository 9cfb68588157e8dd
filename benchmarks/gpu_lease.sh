#!/usr/bin/env bash
# What a lent GPU runs first, in one call of the device tool (a few minutes): words/s of the default and
# the accurate model at batch 64 against transformers' token-classification pipeline on the same GPU
# (benchmarks/speed.py, interleaved rounds), in the plan's choice there and in bf16, and that choice.
# The GPU machine's image has torch and transformers but neither datasets, rapidfuzz, evaluate, torchao nor
# OpenVINO, and no copy of ../shared/data: the package runs from its source (PYTHONPATH), which needs
# none of them for this, and the one transcript travels in gpu_data/ (ignored by git, named in carry).
#
# A call carries a working tree of at most 64 MiB, and the embedded weights alone are 177 MB: for the call,
# benchmarks/gpu_tree.sh takes them out of git's index (they stay on disk, ignored), and the models timed
# there are the default's and the accurate model's architectures with weights drawn at random
# (benchmarks/random_weights.py: every head, the same shapes; the stock pipeline's model is drawn at random
# too). Words/s do not depend on the weights' values, and nothing else is measured there.
#
#   mkdir -p gpu_data/iwslt && cp ../shared/data/iwslt/dev2010_cased.txt gpu_data/iwslt/
#   bash benchmarks/gpu_tree.sh slim
#   device run: command "bash benchmarks/gpu_lease.sh", carry ["gpu_data"], timeout_s 420
#   bash benchmarks/gpu_tree.sh restore
#
# The figures come back under $OUT (runs/gpu_lease where it is not set): plan.txt, speed_<model>.json
# and .md, and the log. DEVICE=cpu runs the same steps on the CPU (a check before a lease; slow).
set -euo pipefail
OUT=${OUT:-runs/gpu_lease}
DEVICE=${DEVICE:-cuda}
REPEATS=${REPEATS:-5}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
for model in default accurate; do
    python3 benchmarks/random_weights.py --model "$model" --out "gpu_data/models/$model"
done
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
    python3 -c "
import torch, transformers, hf_punctcase.loading as loading
print('torch', torch.__version__, 'transformers', transformers.__version__)
for model in ('default', 'accurate'):
    print(model, loading.plan_execution('gpu_data/models/' + model, device='$DEVICE'))"
} 2>&1 | tee "$OUT/plan.txt"
for model in default accurate; do
    python3 benchmarks/speed.py --model "gpu_data/models/$model" --device "$DEVICE" --dtypes auto bfloat16 --batch-size 64 --stock \
        --interleave --repeats "$REPEATS" --latency-repeats 9 --data-dir gpu_data \
        --json "$OUT/speed_$model.json" --markdown "$OUT/speed_$model.md" 2>&1 | tee "$OUT/log_$model.txt"
done
