#!/usr/bin/env bash
# Pretrain TCR-BERT on TCRdb + PIRD + VDJdb CDR3s.
#
#   bash bin/run_pretrain.sh jsons/config_bert.json models/bert_pretrain [NGPU]
#
# Uses every GPU listed in CUDA_VISIBLE_DEVICES (default: all four on the node).
set -euo pipefail

CONFIG=${1:?"usage: run_pretrain.sh CONFIG OUTDIR [NGPU]"}
OUTDIR=${2:?"usage: run_pretrain.sh CONFIG OUTDIR [NGPU]"}
NGPU=${3:-$(nvidia-smi -L | wc -l)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false
# NCCL over the on-node NVLink; turn off IB on the lab workstations
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "${OUTDIR}"

echo "[$(date)] pretraining on ${NGPU} GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee "${OUTDIR}/gpus.csv"

if [[ "${NGPU}" -gt 1 ]]; then
    python -m torch.distributed.launch \
        --nproc_per_node "${NGPU}" \
        --master_port "${MASTER_PORT:-29501}" \
        "${SCRIPT_DIR}/transformer_custom_training.py" \
        -c "${CONFIG}" -o "${OUTDIR}" 2>&1 | tee "${OUTDIR}/train.log"
else
    python "${SCRIPT_DIR}/transformer_custom_training.py" \
        -c "${CONFIG}" -o "${OUTDIR}" 2>&1 | tee "${OUTDIR}/train.log"
fi

echo "[$(date)] done, model in ${OUTDIR}"
