#!/bin/bash
# Training / testing settings for MixFormer-CvT (22k and 1k pretrained variants).
#
# 1. download the pretrained CvT models (CvT-21-384x384-IN-22k.pth / CvT-w24-384x384-IN-22k.pth / CvT-21-384x384-IN-1k.pth)
# 2. set MODEL.BACKBONE.PRETRAINED_PATH in experiments/mixformer_cvt/<CONFIG_NAME>.yaml
# 3. uncomment / select the stage below
#
# Usage:  bash tracking/train_test_mixformer_cvt.sh {stage1|stage2|multinode|test|analysis}

set -x

SAVE_DIR=${SAVE_DIR:-/data/exp/mixformer}
STAGE1_MODEL=${STAGE1_MODEL:-${SAVE_DIR}/models/mixformer_cvt/baseline/MixFormer_ep0500.pth.tar}
NUM_GPUS=${NUM_GPUS:-8}

# 8 x A100 80G per node; GPUs 0-7
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=8
export NCCL_DEBUG=INFO

case $1 in
stage1)
    ### Training MixFormer-22k
    # Stage1: train mixformer without SPM
    python tracking/train.py --script mixformer_cvt --config baseline --save_dir ${SAVE_DIR} \
        --mode multiple --nproc_per_node ${NUM_GPUS}

    ### Training MixFormer-L-22k
    #python tracking/train.py --script mixformer_cvt --config baseline_large --save_dir ${SAVE_DIR} \
    #    --mode multiple --nproc_per_node ${NUM_GPUS}

    ### Training MixFormer-1k
    #python tracking/train.py --script mixformer_cvt --config baseline_1k --save_dir ${SAVE_DIR} \
    #    --mode multiple --nproc_per_node ${NUM_GPUS}
    ;;
stage2)
    ## Stage2: train mixformer_online, i.e., SPM (score prediction module)
    python tracking/train.py --script mixformer_cvt_online --config baseline --save_dir ${SAVE_DIR}_online \
        --mode multiple --nproc_per_node ${NUM_GPUS} --stage1_model ${STAGE1_MODEL}
    ;;
multinode)
    # 2 nodes x 8 GPUs over RoCE; run once per node with NODE_RANK=0/1
    export NCCL_SOCKET_IFNAME=bond0
    export NCCL_IB_HCA=mlx5_0,mlx5_1
    export NCCL_IB_GID_INDEX=3
    python tracking/train.py --script mixformer_cvt --config baseline_large --save_dir ${SAVE_DIR} \
        --mode multi_node --nproc_per_node ${NUM_GPUS} --nnodes 2 --node_rank ${NODE_RANK:-0} \
        --master_address ${MASTER_ADDR:-10.0.0.1} --master_port 26500
    ;;
test)
    # one tracker process per sequence, spread round-robin over the visible GPUs
    ### LaSOT test and evaluation
    python tracking/test.py mixformer_cvt_online baseline --dataset lasot --threads 32 --num_gpus ${NUM_GPUS} \
        --params__model ${SAVE_DIR}_online/models/mixformer_cvt_online/baseline/MixFormerOnlineScore_ep0040.pth.tar \
        --params__search_area_scale 4.55
    python tracking/analysis_results.py --dataset_name lasot --tracker_param baseline

    ### TrackingNet test and pack
    python tracking/test.py mixformer_cvt_online baseline --dataset trackingnet --threads 32 --num_gpus ${NUM_GPUS} \
        --params__model ${SAVE_DIR}_online/models/mixformer_cvt_online/baseline/MixFormerOnlineScore_ep0040.pth.tar \
        --params__search_area_scale 4.5
    python lib/test/utils/transform_trackingnet.py --tracker_name mixformer_cvt_online --cfg_name baseline

    ### GOT10k test and pack (single GPU is enough)
    CUDA_VISIBLE_DEVICES=3 python tracking/test.py mixformer_cvt_online baseline_got --dataset got10k_test \
        --threads 4 --num_gpus 1 \
        --params__model ${SAVE_DIR}_online/models/mixformer_cvt_online/baseline_got/MixFormerOnlineScore_ep0040.pth.tar \
        --params__search_area_scale 4.55
    python lib/test/utils/transform_got10k.py --tracker_name mixformer_cvt_online --cfg_name baseline_got

    ### UAV123
    #python tracking/test.py mixformer_cvt_online baseline --dataset uav --threads 32 --num_gpus ${NUM_GPUS} \
    #    --params__model ${SAVE_DIR}_online/models/mixformer_cvt_online/baseline/MixFormerOnlineScore_ep0040.pth.tar \
    #    --params__search_area_scale 4.7
    #python tracking/analysis_results.py --dataset_name uav --tracker_param baseline
    ;;
profile)
    python tracking/profile_model.py --script mixformer_cvt --config baseline --gpu 0
    python tracking/profile_model.py --script mixformer_cvt_online --config baseline --online_skip 200 --fp16
    ;;
analysis)
    python tracking/analysis_results.py --dataset_name lasot --tracker_param baseline
    python tracking/analysis_results.py --dataset_name uav --tracker_param baseline
    ;;
*)
    echo "usage: $0 {stage1|stage2|multinode|test|profile|analysis}"
    exit 1
    ;;
esac
