#!/usr/bin/env bash
# Train the attribute-to-music generator on one or more 8-GPU nodes.
#
#   single node : bash scripts/launch_ddp.sh
#   multi node  : NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh   (on every node)
set -x

NGPU=${NGPU:-$(nvidia-smi --list-gpus | wc -l)}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29501}

DATA_DIR=${DATA_DIR:-data/remi_bin}
SAVE_DIR=${SAVE_DIR:-checkpoints/attr2music_$(date +%Y%m%d)}

# communication settings for our cluster (25GbE, no InfiniBand)
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):$PYTHONPATH

mkdir -p ${SAVE_DIR}

python -m torch.distributed.launch \
    --nproc_per_node=${NGPU} \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py \
    --data_dir ${DATA_DIR} \
    --save_dir ${SAVE_DIR} \
    --n_layers 16 --d_model 1024 --n_heads 16 --max_len 5120 \
    --batch_size 4 --grad_accum 4 --lr 2e-4 --warmup_steps 4000 --max_steps 200000 \
    --fp16 --opt_level O1 \
    2>&1 | tee ${SAVE_DIR}/train_node${NODE_RANK}.log

# dump GPU state at the end of the run for the experiment log
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv >> ${SAVE_DIR}/train_node${NODE_RANK}.log
