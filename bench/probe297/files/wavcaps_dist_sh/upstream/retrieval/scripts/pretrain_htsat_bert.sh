#!/bin/bash
# Pre-train HTSAT-BERT on WavCaps + AudioCaps + Clotho with 8 GPUs on one node.
# Usage: bash scripts/pretrain_htsat_bert.sh [exp_name]

EXP_NAME=${1:-htsat_bert_pretrain}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export TOKENIZERS_PARALLELISM=false

cd "$(dirname "$0")/.." || exit 1

python -m torch.distributed.launch \
    --nproc_per_node=8 \
    --master_port=29501 \
    --use_env \
    train.py \
    -c settings/pretrain.yaml \
    -n "${EXP_NAME}" \
    -t transformer \
    -m htsat \
    -l 5e-5 \
    -s 128

# fine-tune on AudioCaps / Clotho from the best pre-trained checkpoint (single GPU)
CUDA_VISIBLE_DEVICES=0 python finetune.py -c settings/finetune.yaml -n "${EXP_NAME}_ft_ac" -d AudioCaps
CUDA_VISIBLE_DEVICES=0 python finetune.py -c settings/finetune.yaml -n "${EXP_NAME}_ft_clotho" -d Clotho
