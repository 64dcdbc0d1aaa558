#!/usr/bin/env bash
# Local launcher used for the FocalClick / CDNet experiments.
# Usage: bash run_local.sh [train|eval]   (edit the MODEL_* variables below)

MODE=${1:-train}

MODEL_CFG=models/focalclick/segformerB3_S2_comb.py
CDNET_CFG=models/cdnet/cdnet_res34_cocolvis.py
CHECKPOINT=./weights/focalclick_models/segformerB3_S2_comb.pth

export PYTHONPATH=$PYTHONPATH:$(pwd)
export OMP_NUM_THREADS=4

if [ "$MODE" == "train" ]; then
    # 4 x V100 (32 GB); batch size is the global one and gets split per process
    export CUDA_VISIBLE_DEVICES=0,1,2,3
    export NCCL_DEBUG=WARN
    python -m torch.distributed.launch --nproc_per_node=4 --master_port=59516 --use_env \
        train.py ${MODEL_CFG} \
        --batch-size=64 \
        --ngpus=4 \
        --workers=8 \
        --exp-name=segformerB3_S2_comb

elif [ "$MODE" == "train_cdnet" ]; then
    python train.py ${CDNET_CFG} \
        --gpus=0 \
        --batch-size=32 \
        --workers=8 \
        --exp-name=cdnet_res34

elif [ "$MODE" == "eval" ]; then
    export CUDA_VISIBLE_DEVICES=0
    python scripts/evaluate_model.py FocalClick \
        --model_dir=./weights/focalclick_models/ \
        --checkpoint=${CHECKPOINT} \
        --infer-size=256 \
        --datasets=GrabCut,Berkeley,DAVIS,PascalVOC,SBD,COCO_MVal \
        --gpus=0 \
        --n-clicks=20 \
        --target-iou=0.90 \
        --thresh=0.50

else
    echo "unknown mode: $MODE"
    exit 1
fi
