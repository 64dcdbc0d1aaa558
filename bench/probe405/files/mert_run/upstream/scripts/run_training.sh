#!/bin/bash
# Launch MERT pre-training with fairseq-hydra-train.
#
# usage: bash scripts/run_training.sh NNODES NODE_RANK MASTER_ADDR CONFIG_NAME [MASTER_PORT]
# e.g.   bash scripts/run_training.sh 8 0 10.0.0.1 MERT_RVQ-VAE_CQT_330M
#
# Each node runs 8 GPUs. Data manifests and labels are expected under $DATA_DIR.

set -e

NNODES=${1:-1}
NODE_RANK=${2:-0}
MASTER_ADDR=${3:-127.0.0.1}
CONFIG_NAME=${4:-MERT_RVQ-VAE_CQT_95M}
MASTER_PORT=${5:-39683}

NPROCES_PER_NODE=8
WORLD_SIZE=$((NNODES * NPROCES_PER_NODE))

MAP_PROJ_DIR=$HOME/MERT
FAIRSEQ_PATH=${MAP_PROJ_DIR}/src/fairseq
DATA_DIR=${MAP_PROJ_DIR}/data/music4all_sh
LABEL_ROOT_DIR=${MAP_PROJ_DIR}/data/encodec_labels
SAVE_DIR=${MAP_PROJ_DIR}/data/fairseq_savedir/ckpt_${CONFIG_NAME}

source ~/miniconda3/etc/profile.d/conda.sh
conda activate map

export PYTHONPATH=${FAIRSEQ_PATH}:${PYTHONPATH}
export OMP_NUM_THREADS=6
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export CUDA_LAUNCH_BLOCKING=0
export HYDRA_FULL_ERROR=1

echo "node ${NODE_RANK}/${NNODES}, master ${MASTER_ADDR}:${MASTER_PORT}, world size ${WORLD_SIZE}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

mkdir -p ${SAVE_DIR}

python -u ${FAIRSEQ_PATH}/fairseq_cli/hydra_train.py \
    -m --config-dir ${MAP_PROJ_DIR}/mert_fairseq/config/pretrain \
    --config-name ${CONFIG_NAME} \
    common.user_dir=${MAP_PROJ_DIR}/mert_fairseq \
    common.tensorboard_logdir=${SAVE_DIR}/tb \
    checkpoint.save_dir=${SAVE_DIR} \
    distributed_training.distributed_world_size=${WORLD_SIZE} \
    distributed_training.distributed_rank=$((NODE_RANK * NPROCES_PER_NODE)) \
    distributed_training.distributed_init_method="tcp://${MASTER_ADDR}:${MASTER_PORT}" \
    distributed_training.nprocs_per_node=${NPROCES_PER_NODE} \
    task.data=${DATA_DIR} \
    task.label_dir=${LABEL_ROOT_DIR} \
    task.labels='["encodec_0","encodec_1","encodec_2","encodec_3","encodec_4","encodec_5","encodec_6","encodec_7"]' \
    dataset.num_workers=6 \
    hydra.run.dir=${SAVE_DIR} \
    hydra.sweep.dir=${SAVE_DIR} \
    2>&1 | tee ${SAVE_DIR}/train_node${NODE_RANK}.log
