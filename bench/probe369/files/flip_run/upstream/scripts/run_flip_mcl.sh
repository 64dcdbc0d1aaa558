#!/bin/bash
# Leave-one-domain-out protocol (MCIO) and the single-source CelebA-Spoof/WMCA/CeFA/SURF runs.
# Usage: bash scripts/run_flip_mcl.sh <gpu_id> [amp]

GPU=${1:-0}
AMP_FLAG=""
if [ "$2" == "amp" ]; then
    AMP_FLAG="--amp"
fi

export CUDA_VISIBLE_DEVICES=${GPU}

OUT=results/flip_mcl
mkdir -p ${OUT}

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

for TGT in I O C M
do
    echo "=== target domain ${TGT} on GPU ${GPU} ==="
    python train_flip.py \
        --config ${TGT} \
        --op_dir ${OUT}/${TGT} \
        --report_logger_path ${OUT}/${TGT}_performance.csv \
        ${AMP_FLAG}
done

for TGT in cefa surf wmca
do
    echo "=== target domain ${TGT} on GPU ${GPU} ==="
    python train_flip.py \
        --config ${TGT} \
        --op_dir ${OUT}/${TGT} \
        --report_logger_path ${OUT}/${TGT}_performance.csv \
        ${AMP_FLAG}
done
