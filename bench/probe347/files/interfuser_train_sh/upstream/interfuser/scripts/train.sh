#!/bin/bash
# Train InterFuser on 8 GPUs of one node.
#   bash scripts/train.sh            -> all 8 GPUs
#   GPUS=4,5,6,7 bash scripts/train.sh -> only the last four (e.g. when the first four run CARLA servers)
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
GPU_NUM=$(echo ${GPUS} | tr ',' '\n' | wc -l)
DATASET_ROOT='dataset/'

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=8
export NCCL_P2P_DISABLE=1  # some of our 3090 boxes hang in P2P all-reduce

cd "$(dirname "$0")/.."

python3 -m torch.distributed.launch --nproc_per_node=${GPU_NUM} --master_port=$((RANDOM+10000)) train.py $DATASET_ROOT \
    --dataset carla --train-towns 1 2 3 4 6 7 10 --val-towns 5 \
    --train-weathers 0 1 2 3 4 5 6 7 8 9 10 11 14 15 16 17 18 19 --val-weathers 12 13 20 \
    --model interfuser_baseline --sched cosine --epochs 25 --warmup-epochs 5 --lr 0.0005 --batch-size 16 -j 16 \
    --no-prefetcher --eval-metric l1_error \
    --opt adamw --opt-eps 1e-8 --weight-decay 0.05 \
    --scale 0.9 1.1 --saver-decreasing --clip-grad 10 --freeze-num -1 \
    --with-backbone-lr --backbone-lr 0.0002 \
    --multi-view --with-lidar --multi-view-input-size 3 128 128 \
    --experiment interfuser_baseline \
    --pretrained
