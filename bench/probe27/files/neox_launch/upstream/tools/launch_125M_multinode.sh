#!/bin/bash
# Launch a GPT-NeoX run across the nodes listed in the hostfile.
#
# Usage:  bash tools/launch_125M_multinode.sh <config-dir>
#
# The deepy.py wrapper reads the YAML configs, writes a DeepSpeed-compatible
# hostfile and hands off to the deepspeed launcher (pdsh backend).

set -euo pipefail

CONFIG_DIR=${1:-configs}
NEOX_DIR=$(cd "$(dirname "$0")/.." && pwd)
cd "$NEOX_DIR"

# ----- cluster ---------------------------------------------------------------
GPUS_PER_NODE=8
NNODES=$(wc -l < /job/hostfile)
WORLD_SIZE=$((GPUS_PER_NODE * NNODES))
MASTER_ADDR=$(head -n 1 /job/hostfile | cut -d' ' -f1)
MASTER_PORT=29500
export MASTER_ADDR MASTER_PORT

# pin the visible devices on every node
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

# ----- NCCL / network --------------------------------------------------------
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=ens
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_TIMEOUT=1800
export CUDA_DEVICE_MAX_CONNECTIONS=1

# ----- python / misc ---------------------------------------------------------
export PYTHONPATH="$NEOX_DIR:${PYTHONPATH:-}"
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=neox

LOG_DIR=${LOG_DIR:-logs}
mkdir -p "$LOG_DIR"
RUN_NAME=125M_$(date +%Y%m%d_%H%M%S)

echo "nodes=$NNODES gpus/node=$GPUS_PER_NODE world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT"

# sanity check: every node sees its GPUs
pdsh -w ^/job/hostfile "nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader" | sort

# write the deepspeed hostfile (slots = accelerators per node)
awk -v slots=$GPUS_PER_NODE '{print $1" slots="slots}' /job/hostfile > /job/ds_hostfile

python ./deepy.py train.py \
    "$CONFIG_DIR/125M.yml" \
    "$CONFIG_DIR/local_setup.yml" \
    "$CONFIG_DIR/slurm_125M.yml" \
    2>&1 | tee "$LOG_DIR/$RUN_NAME.log"

status=${PIPESTATUS[0]}

# collect GPU memory high-water marks for the run report
pdsh -w ^/job/hostfile "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader" \
    > "$LOG_DIR/$RUN_NAME.mem.txt" || true

exit $status
