#!/bin/bash
# Train the three HNC-CAD codebooks (solid / profile / loop) with 4 GPUs each.
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=8
NGPU=4
PORT=${PORT:-29511}

DATA=data/deepcad/train_deduplicate.pkl
INVALID=data/deepcad/train_invalid.pkl

for FORMAT in solid profile loop; do
    torchrun --nproc_per_node=${NGPU} --master_port=${PORT} gen/train_vq.py \
        --input ${DATA} --invalid ${INVALID} \
        --output proj_log/vq_${FORMAT} --format ${FORMAT} \
        --batchsize 256 --epoch 250 --fp16
done

# Extract the codebooks for the code-tree generator
python gen/extract_code.py --vq_dir proj_log --output proj_log/codes --device 0
