#!/usr/bin/env bash
# Evaluate OS-Atlas checkpoints on ScreenSpot-v2 (grounding) with 4 GPUs.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
NUM_GPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)

DATA_DIR=${DATA_DIR:-./data/ScreenSpot-v2}
OUT_DIR=${OUT_DIR:-./results}
mkdir -p ${OUT_DIR}

echo "GPUs: ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS})"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

for MODEL in OS-Copilot/OS-Atlas-Base-7B OS-Copilot/OS-Atlas-Pro-7B; do
    NAME=$(basename ${MODEL})
    for SPLIT in mobile desktop web; do
        python evaluation/eval_screenspot_multi_gpu.py \
            --model_path ${MODEL} \
            --data_dir ${DATA_DIR} \
            --split ${SPLIT} \
            --num_gpus ${NUM_GPUS} \
            --out ${OUT_DIR}/${NAME}_${SPLIT}.json 2>&1 | tee ${OUT_DIR}/${NAME}_${SPLIT}.log
    done
done

python - <<PY
import glob, json
for path in sorted(glob.glob("${OUT_DIR}/*.json")):
    with open(path) as f:
        summary = json.load(f)["summary"]
    print(path, " ".join(f"{k}={v*100:.1f}" for k, v in summary.items()))
PY
