#!/usr/bin/env bash
# Train / test / evaluate SiamRPN++ (ResNet-50, layers 2-4, depthwise xcorr) on one 8-GPU node.
#
#   bash run.sh train        # 20 epochs on COCO/DET/VID/YTB, ~2 days on 8x V100
#   bash run.sh test 11 20   # test snapshots e11..e20 on VOT2018
#   bash run.sh eval
#   bash run.sh hp           # hyper-parameter search, one GPU per worker

set -e

EXP_DIR=$(cd "$(dirname "$0")" && pwd)
PYSOT_ROOT=$(cd "${EXP_DIR}/../.." && pwd)
export PYTHONPATH=${PYSOT_ROOT}:$PYTHONPATH

cd "${EXP_DIR}"
mkdir -p logs snapshot

MODE=${1:-train}
DATASET=${DATASET:-VOT2018}
NUM_GPUS=${NUM_GPUS:-8}

# single node: no InfiniBand on our cluster, keep NCCL on sockets / shared memory
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN

case ${MODE} in
train)
    export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
    python -m torch.distributed.launch \
        --nproc_per_node=${NUM_GPUS} \
        --master_port=2333 \
        ../../tools/train.py --cfg config.yaml 2>&1 | tee logs/train.log
    ;;
test)
    START=${2:-11}
    END=${3:-20}
    seq ${START} 1 ${END} | \
        xargs -I {} echo "snapshot/checkpoint_e{}.pth" | \
        xargs -P 4 -I {} \
        python -u ../../tools/test.py \
            --snapshot {} \
            --config config.yaml \
            --dataset ${DATASET} 2>&1 | tee logs/test_${DATASET}.log
    ;;
eval)
    python ../../tools/eval.py \
        --tracker_path ./results \
        --dataset ${DATASET} \
        --num 4 \
        --tracker_prefix 'ch*'
    ;;
hp)
    # one search worker per GPU, each pinned to its own device
    for gpu in $(seq 0 $((NUM_GPUS - 1))); do
        CUDA_VISIBLE_DEVICES=${gpu} python -u ../../tools/hp_search.py \
            --snapshot snapshot/checkpoint_e20.pth \
            --config config.yaml \
            --dataset ${DATASET} \
            --penalty-k 0.04,0.5,0.02 \
            --lr 0.3,0.8,0.05 \
            --window-influence 0.15,0.65,0.05 > logs/hp_gpu${gpu}.log 2>&1 &
    done
    wait
    ;;
*)
    echo "usage: $0 {train|test START END|eval|hp}"
    exit 1
    ;;
esac
