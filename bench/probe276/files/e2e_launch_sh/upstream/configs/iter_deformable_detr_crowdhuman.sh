#!/usr/bin/env bash
# ------------------------------------------------------------------------
# Iter-E2EDet on CrowdHuman.
#   8 GPUs on one node:   GPUS_PER_NODE=8 ./configs/iter_deformable_detr_crowdhuman.sh
#   slurm, 2 x 8 GPUs:     LAUNCHER=slurm GPUS=16 PARTITION=vc_research ./configs/iter_deformable_detr_crowdhuman.sh
# Extra arguments are passed to main.py, e.g. --resume exps/.../checkpoint.pth --eval
# ------------------------------------------------------------------------

set -x

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=4

LAUNCHER=${LAUNCHER:-pytorch}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
MASTER_PORT=${MASTER_PORT:-"29500"}
NODE_RANK=${NODE_RANK:-0}
NNODES=${NNODES:-1}

EXP_DIR=exps/iter_deformable_detr_crowdhuman
PY_ARGS=${@:1}

COMMON_ARGS="--output_dir ${EXP_DIR} \
    --with_box_refine \
    --num_queries 1000 \
    --dataset_file crowdhuman \
    --crowdhuman_path ./data/CrowdHuman \
    --batch_size 2 \
    --epochs 50 \
    --lr_drop 40 \
    --device cuda"

mkdir -p ${EXP_DIR}

if [ "${LAUNCHER}" == "slurm" ]; then
    PARTITION=${PARTITION:-"vc_research"}
    GPUS=${GPUS:-16}
    CPUS_PER_TASK=${CPUS_PER_TASK:-4}
    SRUN_ARGS=${SRUN_ARGS:-""}
    # init_distributed_mode() picks up SLURM_PROCID / SLURM_NTASKS itself
    srun -p ${PARTITION} \
        --job-name=iter_e2edet \
        --gres=gpu:${GPUS_PER_NODE} \
        --ntasks=${GPUS} \
        --ntasks-per-node=${GPUS_PER_NODE} \
        --cpus-per-task=${CPUS_PER_TASK} \
        --kill-on-bad-exit=1 \
        ${SRUN_ARGS} \
        python -u main.py ${COMMON_ARGS} ${PY_ARGS}
    exit $?
fi

python -m torch.distributed.launch \
    --nnodes ${NNODES} \
    --node_rank ${NODE_RANK} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    --nproc_per_node ${GPUS_PER_NODE} \
    --use_env \
    main.py ${COMMON_ARGS} ${PY_ARGS} 2>&1 | tee ${EXP_DIR}/train.log
