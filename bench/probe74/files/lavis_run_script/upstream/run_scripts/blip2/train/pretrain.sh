#!/usr/bin/env bash
# BLIP-2 two-stage pre-training on one 8-GPU node (or several, with NNODES/NODE_RANK/MASTER_ADDR set).
#
#   bash run_scripts/blip2/train/pretrain.sh            # stage 1 then stage 2 (OPT-2.7b)
#   STAGE=2 bash run_scripts/blip2/train/pretrain.sh    # stage 2 only, from STAGE1_CKPT
#
set -e

STAGE=${STAGE:-all}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29501}
STAGE1_CKPT=${STAGE1_CKPT:-lavis/output/BLIP2/Pretrain_stage1/latest/checkpoint_9.pth}

# use every GPU on the box unless the caller restricted it
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
echo "[blip2] visible devices: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

# pick a per-GPU batch size that fits: 40G cards take 100, 80G cards 192
GPU_MEM_MB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [ "${GPU_MEM_MB}" -gt 60000 ]; then
    BS_STAGE1=192
    BS_STAGE2=128
else
    BS_STAGE1=100
    BS_STAGE2=64
fi

export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export TORCH_DISTRIBUTED_DEBUG=OFF

LAUNCH="python -m torch.distributed.run \
    --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} \
    --nproc_per_node=${NUM_GPUS}"

echo "[blip2] ${NNODES} node(s) x ${NUM_GPUS} GPU(s), ${GPU_MEM_MB} MB each"

if [ "${STAGE}" = "all" ] || [ "${STAGE}" = "1" ]; then
    ${LAUNCH} train.py \
        --cfg-path lavis/projects/blip2/train/pretrain_stage1.yaml \
        --options run.batch_size_train=${BS_STAGE1} run.amp=True run.num_workers=6
fi

if [ "${STAGE}" = "all" ] || [ "${STAGE}" = "2" ]; then
    ${LAUNCH} train.py \
        --cfg-path lavis/projects/blip2/train/pretrain_stage2.yaml \
        --options model.pretrained=${STAGE1_CKPT} \
                  run.batch_size_train=${BS_STAGE2} run.amp=True run.num_workers=6
fi

# zero-shot retrieval on COCO / Flickr with the stage-2 checkpoint
if [ "${STAGE}" = "all" ] || [ "${STAGE}" = "eval" ]; then
    ${LAUNCH} evaluate.py --cfg-path lavis/projects/blip2/eval/ret_coco_eval.yaml
    ${LAUNCH} evaluate.py --cfg-path lavis/projects/blip2/eval/ret_flickr_eval.yaml
fi
