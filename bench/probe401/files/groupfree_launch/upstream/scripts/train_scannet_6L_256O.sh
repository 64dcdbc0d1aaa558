#!/usr/bin/env bash
# Group-Free-3D, ScanNet V2, 6 decoder layers, 256 object candidates, PointNet++ w1x.
# Paper setting: 4 GPUs x batch 8 (32 scenes per iteration), 400 epochs.
#
# usage: bash scripts/train_scannet_6L_256O.sh [NUM_GPUS] [PORT]

NUM_GPUS=${1:-4}
PORT=${2:-2222}
LOG_DIR=${LOG_DIR:-log/scannet_6L_256O}
DATA_ROOT=${DATA_ROOT:-data}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

python -m torch.distributed.launch --master_port ${PORT} --nproc_per_node ${NUM_GPUS} \
    train_dist.py --num_point 50000 --num_decoder_layers 6 \
    --size_delta 0.111111111111 --center_delta 0.04 \
    --learning_rate 0.006 --decoder_learning_rate 0.0006 --weight_decay 0.0005 \
    --max_epoch 400 --lr_decay_epochs 280 340 \
    --dataset scannet --data_root ${DATA_ROOT} \
    --log_dir ${LOG_DIR} \
    --batch_size 8 --num_target 256

# evaluation of the last checkpoint (averaged over 5 runs)
python -m torch.distributed.launch --master_port ${PORT} --nproc_per_node 1 \
    eval_avg.py --num_point 50000 --num_decoder_layers 6 \
    --checkpoint_path ${LOG_DIR}/ckpt_epoch_last.pth \
    --avg_times 5 \
    --dataset scannet --data_root ${DATA_ROOT} \
    --dump_dir ${LOG_DIR}/eval \
    --num_target 256 --use_3d_nms --use_cls_nms --per_class_proposal
