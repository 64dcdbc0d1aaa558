#!/usr/bin/env bash
# Evaluate GeoTransformer on 3DMatch / 3DLoMatch.
#
# usage: bash scripts/eval_3dmatch.sh <gpu_id> <epoch> [estimator]
#   estimator: lgr (default) | ransac
set -e

GPU_ID=${1:-0}
EPOCH=${2:-40}
ESTIMATOR=${3:-lgr}

EXP_DIR=experiments/geotransformer.3dmatch.stage4.gse.k3.max.oacl.stage2.sinkhorn
SNAPSHOT=output/geotransformer.3dmatch.stage4.gse.k3.max.oacl.stage2.sinkhorn/snapshots/epoch-${EPOCH}.pth.tar

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export OMP_NUM_THREADS=8

echo "[eval] gpu=${CUDA_VISIBLE_DEVICES} epoch=${EPOCH} estimator=${ESTIMATOR}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

cd ${EXP_DIR}

for BENCHMARK in 3DMatch 3DLoMatch; do
    # extract features and coarse/fine correspondences
    python test.py --snapshot=../../${SNAPSHOT} --benchmark=${BENCHMARK}

    # registration recall etc.
    if [ "${ESTIMATOR}" = "ransac" ]; then
        for N in 250 500 1000 2500 5000; do
            python eval.py --benchmark=${BENCHMARK} --method=ransac --num_corr=${N}
        done
    else
        python eval.py --epoch=${EPOCH} --benchmark=${BENCHMARK} --method=lgr
    fi
done

cd -
echo "[eval] done"
