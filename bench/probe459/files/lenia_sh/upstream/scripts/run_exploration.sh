#!/usr/bin/env bash
# Launch several IMGEP seeds in parallel, one per GPU.
#   bash scripts/run_exploration.sh 4        # 4 seeds on GPUs 0..3
set -euo pipefail

N_SEEDS=${1:-4}
CONFIG=${CONFIG:-experiments/config/imgep_lenia.yaml}
OUT=${OUT:-results/$(date +%Y%m%d_%H%M%S)}
mkdir -p "$OUT/logs"

echo "== GPUs =="
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

cd "$(dirname "$0")/.."

for SEED in $(seq 0 $((N_SEEDS - 1))); do
    GPU=$((SEED % 8))
    echo "seed $SEED -> GPU $GPU"
    CUDA_VISIBLE_DEVICES=$GPU LENIA_GPU=0 \
        nohup python experiments/run_imgep.py \
            --config "$CONFIG" \
            --seed "$SEED" \
            --out "$OUT" \
            > "$OUT/logs/seed_${SEED}.log" 2>&1 &
    sleep 2
done

wait
echo "all seeds finished, results in $OUT"
python -c "import json,glob; [print(f, json.load(open(f))) for f in sorted(glob.glob('$OUT/*/summary.json'))]"
