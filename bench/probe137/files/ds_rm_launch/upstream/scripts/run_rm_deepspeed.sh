#!/usr/bin/env bash
# Reward-model training (pairwise ranking loss) with DeepSpeed ZeRO-2 on 4 local GPUs.
#   bash scripts/run_rm_deepspeed.sh [MODEL] [DATA] [OUT]
# Multi-node: set HOSTFILE=/job/hostfile and NNODES; the launcher ssh-es into every host.

set -x

MODEL=${1:-meta-llama/Llama-2-7b-hf}
DATA=${2:-data/hh_rlhf_pairs}
OUT=${3:-checkpoints/rm-llama2-7b}
ZERO_CFG=${ZERO_CFG:-configs/ds_zero2.json}
MASTER_PORT=${MASTER_PORT:-29511}

# 4090/A6000 boxes without NVLink/IB hang in NCCL P2P otherwise
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export TORCH_NCCL_BLOCKING_WAIT=1
export OMP_NUM_THREADS=4

mkdir -p "${OUT}"

if [[ -n "${HOSTFILE}" ]]; then
    LAUNCH="deepspeed --hostfile ${HOSTFILE} --master_port ${MASTER_PORT}"
else
    LAUNCH="deepspeed --include localhost:0,1,2,3 --master_port ${MASTER_PORT}"
fi

${LAUNCH} train_rm.py \
    --model_name_or_path "${MODEL}" \
    --data_path "${DATA}" \
    --output_dir "${OUT}" \
    --deepspeed "${ZERO_CFG}" \
    --num_train_epochs 1 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 8 \
    --gradient_accumulation_steps 4 \
    --learning_rate 9e-6 \
    --lr_scheduler_type cosine \
    --warmup_ratio 0.03 \
    --weight_decay 0.0 \
    --max_length 1024 \
    --bf16 True \
    --tf32 True \
    --gradient_checkpointing True \
    --logging_steps 10 \
    --evaluation_strategy steps \
    --eval_steps 200 \
    --save_strategy steps \
    --save_steps 500 \
    --save_total_limit 2 \
    --report_to tensorboard 2>&1 | tee "${OUT}/train.log"
