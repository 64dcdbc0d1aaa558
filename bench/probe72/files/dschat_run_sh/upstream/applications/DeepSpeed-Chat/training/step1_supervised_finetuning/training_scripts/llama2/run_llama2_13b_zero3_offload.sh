#!/bin/bash
# Copyright (c) Microsoft Corporation.
# SPDX-License-Identifier: Apache-2.0

# DeepSpeed Team
#
# Step-1 SFT of Llama-2-13B on a single 8x A100-40G node.
# ZeRO stage 3 with the optimizer states offloaded to host memory (DeepSpeedCPUAdam),
# HF gradient checkpointing on, LoRA off.
#
# usage: bash run_llama2_13b_zero3_offload.sh [OUTPUT_DIR] [ZERO_STAGE] [HOSTFILE]

OUTPUT=$1
ZERO_STAGE=$2
HOSTFILE=$3
if [ "$OUTPUT" == "" ]; then
    OUTPUT=./output_step1_llama2_13b_offload
fi
if [ "$ZERO_STAGE" == "" ]; then
    ZERO_STAGE=3
fi
mkdir -p $OUTPUT

# ---------------------------------------------------------------------------
# runtime environment
# ---------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512
# CPU Adam runs on the host: give each rank a fair share of the cores
export OMP_NUM_THREADS=16
export TOKENIZERS_PARALLELISM=false

GPUS_PER_NODE=$(nvidia-smi --list-gpus | wc -l)
echo "[run] found ${GPUS_PER_NODE} GPUs on $(hostname)"
if [ "${GPUS_PER_NODE}" -lt 8 ]; then
    echo "[run] WARNING: this recipe was tuned for 8 GPUs; expect OOM with ZeRO-3 offload on fewer"
fi

# Pre-build the CPU Adam op once; otherwise every rank JIT-compiles it at start-up.
python -c "from deepspeed.ops.op_builder import CPUAdamBuilder; CPUAdamBuilder().load()" \
    || { echo "[run] failed to build cpu_adam"; exit 1; }

# host memory check: ZeRO-3 offload of a 13B model needs ~ 16 bytes/param on the host
HOST_MEM_GB=$(free -g | awk '/^Mem:/{print $2}')
echo "[run] host memory: ${HOST_MEM_GB} GB"

LAUNCH_ARGS="--num_gpus ${GPUS_PER_NODE} --master_port 29611"
if [ "$HOSTFILE" != "" ]; then
    LAUNCH_ARGS="--hostfile ${HOSTFILE} --master_port 29611"
fi

deepspeed ${LAUNCH_ARGS} main.py \
   --data_path Dahoas/rm-static Dahoas/full-hh-rlhf Dahoas/synthetic-instruct-gptj-pairwise yitingxie/rlhf-reward-datasets \
   --data_split 2,4,4 \
   --model_name_or_path meta-llama/Llama-2-13b-hf \
   --per_device_train_batch_size 4 \
   --per_device_eval_batch_size 4 \
   --max_seq_len 512 \
   --learning_rate 9.65e-6 \
   --weight_decay 0. \
   --num_train_epochs 4  \
   --gradient_accumulation_steps 1 \
   --lr_scheduler_type cosine \
   --num_warmup_steps 0 \
   --seed 1234 \
   --gradient_checkpointing \
   --dtype bf16 \
   --offload \
   --zero_stage $ZERO_STAGE \
   --deepspeed \
   --output_dir $OUTPUT \
   &> $OUTPUT/training.log

status=$?
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv >> $OUTPUT/training.log
exit $status
