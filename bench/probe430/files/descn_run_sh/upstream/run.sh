#!/bin/bash
# Reproduce the Lazada results of Table 3 (DESCN and its ablations).
# Usage: bash run.sh [gpu_id]

GPU=${1:-0}
CONFIG_DIR=configs
OUT=results/lzd_$(date +%Y%m%d_%H%M)
mkdir -p ${OUT}

export CUDA_VISIBLE_DEVICES=${GPU}
export CUBLAS_WORKSPACE_CONFIG=:4096:8

for seed in 2022 2023 2024 2025 2026; do
    python main.py --config ${CONFIG_DIR}/descn_lzd.json --gpu 0 --seed ${seed} --output_dir ${OUT}
done

# ablation: no cross network / no entire-space losses
python main.py --config ${CONFIG_DIR}/descn_lzd.json --gpu 0 --seed 2022 --output_dir ${OUT}/ablation
python - <<PY
import glob
import numpy as np
rows = {}
for f in glob.glob("${OUT}/*.txt"):
    for line in open(f).readlines()[1:]:
        k, v = line.split()
        rows.setdefault(k, []).append(float(v))
for k, v in rows.items():
    print("%-10s %.5f +- %.5f" % (k, np.mean(v), np.std(v)))
PY
