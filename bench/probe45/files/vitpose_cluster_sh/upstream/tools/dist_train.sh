#!/usr/bin/env bash
# Copyright (c) OpenMMLab. All rights reserved.
# Multi-node ViTPose training: torch.distributed.launch on each node, or srun when PARTITION is set.
#
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash tools/dist_train.sh \
#       configs/body/2d_kpt_sview_rgb_img/topdown_heatmap/coco/ViTPose_base_coco_256x192.py 8 \
#       --cfg-options model.pretrained=weights/mae_pretrain_vit_base.pth --seed 0
#
#   PARTITION=pose bash tools/dist_train.sh <config> 8 --work-dir work_dirs/vitpose_b

set -x

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
PARTITION=${PARTITION:-""}
SRUN_ARGS=${SRUN_ARGS:-""}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
PY_ARGS=${@:3}

# ----- environment ----------------------------------------------------------
source /opt/conda/etc/profile.d/conda.sh
conda activate vitpose
module load cuda/11.3 cudnn/8.2.1 nccl/2.9.9
export CUDA_HOME=/usr/local/cuda-11.3
export LD_LIBRARY_PATH=$CUDA_HOME/lib64:$LD_LIBRARY_PATH

# pin each job to its GPUs (shared nodes run two 4-GPU jobs side by side)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

# ----- communication (InfiniBand) ------------------------------------------
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_SOCKET_IFNAME=ib0
export NCCL_DEBUG=WARN
export GLOO_SOCKET_IFNAME=ib0
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4

WORK_DIR=${WORK_DIR:-work_dirs/$(basename ${CONFIG%.*})}
mkdir -p ${WORK_DIR}
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv > ${WORK_DIR}/gpus_node${NODE_RANK}.csv

if [ -n "$PARTITION" ]; then
    # ----- SLURM ----------------------------------------------------------
    srun -p ${PARTITION} \
        --job-name=vitpose \
        --gres=gpu:${GPUS} \
        --ntasks=$((GPUS * NNODES)) \
        --ntasks-per-node=${GPUS} \
        --cpus-per-task=${CPUS_PER_TASK} \
        --kill-on-bad-exit=1 \
        ${SRUN_ARGS} \
        python -u tools/train.py ${CONFIG} --work-dir=${WORK_DIR} --launcher="slurm" ${PY_ARGS}
else
    # ----- torch.distributed.launch ----------------------------------------
    PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
    python -m torch.distributed.launch \
        --nnodes=$NNODES \
        --node_rank=$NODE_RANK \
        --master_addr=$MASTER_ADDR \
        --nproc_per_node=$GPUS \
        --master_port=$PORT \
        $(dirname "$0")/train.py \
        $CONFIG \
        --work-dir=${WORK_DIR} \
        --seed 0 \
        --launcher pytorch ${PY_ARGS}
fi

# ----- evaluate the best checkpoint on node 0 --------------------------------
if [ "${NODE_RANK}" = "0" ]; then
    BEST=$(ls -t ${WORK_DIR}/best_AP_epoch_*.pth 2>/dev/null | head -n 1)
    if [ -n "${BEST}" ]; then
        PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
        python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$((PORT + 1)) \
            $(dirname "$0")/test.py $CONFIG ${BEST} --launcher pytorch --eval mAP
    fi
fi
