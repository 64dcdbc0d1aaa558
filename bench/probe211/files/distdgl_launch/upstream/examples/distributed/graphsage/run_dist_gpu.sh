#!/usr/bin/env bash
# Launch distributed GraphSAGE training (DistDGL) on a GPU cluster.
#
# Prerequisites:
#   * the graph has been partitioned with partition_graph.py into
#     $WORKSPACE/data/ogbn-products.json (+ part0 .. partN-1)
#   * passwordless ssh between all machines listed in ip_config.txt
#   * the same conda environment (with the CUDA build of DGL) on every machine
#
# Usage:
#   bash run_dist_gpu.sh [NUM_MACHINES] [GPUS_PER_MACHINE]

set -euo pipefail

NUM_MACHINES=${1:-4}
NUM_GPUS=${2:-4}
NUM_SAMPLERS=${NUM_SAMPLERS:-2}
NUM_SERVERS=${NUM_SERVERS:-1}

WORKSPACE=${WORKSPACE:-$HOME/workspace/dgl/examples/distributed/graphsage}
DGL_HOME=${DGL_HOME:-$HOME/workspace/dgl}
PART_CONFIG=data/ogbn-products.json
IP_CONFIG=ip_config.txt

source "$HOME/miniconda3/etc/profile.d/conda.sh"
conda activate dgl-cu121

# NCCL tuning for our 25GbE cluster (no InfiniBand)
export NCCL_SOCKET_IFNAME=ens5
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export GLOO_SOCKET_IFNAME=ens5
export TP_SOCKET_IFNAME=ens5

export OMP_NUM_THREADS=8
export DGL_NUM_SAMPLER_THREADS=${NUM_SAMPLERS}

# sanity check: every worker must see its GPUs
for host in $(awk '{print $1}' "${WORKSPACE}/${IP_CONFIG}"); do
    ssh -o StrictHostKeyChecking=no "$host" nvidia-smi -L | head -n "${NUM_GPUS}"
done

LOG_DIR=${WORKSPACE}/logs/$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"

python3 "${DGL_HOME}/tools/launch.py" \
    --workspace "${WORKSPACE}" \
    --num_trainers "${NUM_GPUS}" \
    --num_samplers "${NUM_SAMPLERS}" \
    --num_servers "${NUM_SERVERS}" \
    --part_config "${PART_CONFIG}" \
    --ip_config "${IP_CONFIG}" \
    --extra_envs NCCL_SOCKET_IFNAME=ens5 NCCL_IB_DISABLE=1 \
    "python3 node_classification.py --graph_name ogbn-products \
        --ip_config ${IP_CONFIG} --part_config ${PART_CONFIG} \
        --num_epochs 30 --batch_size 1000 --eval_every 5 \
        --num_gpus ${NUM_GPUS} --backend nccl" \
    2>&1 | tee "${LOG_DIR}/train.log"

echo "logs written to ${LOG_DIR}"
