#!/bin/bash
# MaskTextSpotterV3: pretrain on SynthText, then finetune on the mixed set.
# usage: bash train.sh [pretrain|finetune]
STAGE=${1:-finetune}

export NGPUS=8
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1

if [ "$STAGE" == "pretrain" ]; then
    CONFIG=configs/pretrain/seg_rec_poly_fuse_feature.yaml
else
    CONFIG=configs/mixtrain/seg_rec_poly_fuse_feature.yaml
fi

python3 -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=29501 \
    tools/train_net.py --config-file ${CONFIG} \
    SOLVER.IMS_PER_BATCH 8 OUTPUT_DIR ./output/${STAGE}

# single-GPU evaluation of the final weights on Total-Text
CUDA_VISIBLE_DEVICES=0 python3 tools/test_net.py --config-file configs/mixtrain/seg_rec_poly_fuse_feature.yaml \
    MODEL.WEIGHT ./output/${STAGE}/model_final.pth TEST.IMS_PER_BATCH 1
