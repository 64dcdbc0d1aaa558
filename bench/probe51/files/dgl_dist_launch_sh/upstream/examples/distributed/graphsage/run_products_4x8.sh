#!/bin/bash
# Partitioned training of GraphSAGE on ogbn-products with DistDGL:
# 4 machines x 8 GPUs, one trainer process per GPU, one graph server per
# machine.  Run from the head node; ip_config.txt lists the 4 hosts.
#
#   bash run_products_4x8.sh [partition|train|all]
#
set -e

STAGE=${1:-all}
WORKSPACE=${WORKSPACE:-$HOME/workspace/dgl/examples/distributed/graphsage}
DGL_HOME=${DGL_HOME:-$HOME/dgl}
DATA_DIR=${DATA_DIR:-/data/ogbn-products}
NUM_PARTS=4
NUM_TRAINERS=8
NUM_SAMPLERS=2
NUM_SERVERS=1
IP_CONFIG=${WORKSPACE}/ip_config.txt
PART_CONFIG=${DATA_DIR}/4part_data/ogbn-products.json

# ---------------------------------------------------------------------------
# Networking: the RDMA NIC for NCCL, the management NIC for the graph servers
# ---------------------------------------------------------------------------
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=INFO
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4
export DGL_DIST_DEBUG=0

if [[ "${STAGE}" == "partition" || "${STAGE}" == "all" ]]; then
    echo "== partitioning ogbn-products into ${NUM_PARTS} parts (METIS) =="
    python3 ${DGL_HOME}/examples/distributed/graphsage/partition_graph.py \
        --dataset ogbn-products \
        --num_parts ${NUM_PARTS} \
        --balance_train \
        --balance_edges \
        --output ${DATA_DIR}/4part_data

    # copy partitions to every machine
    while read -r ip _; do
        rsync -a ${DATA_DIR}/4part_data/ "${ip}:${DATA_DIR}/4part_data/"
    done < "${IP_CONFIG}"
fi

if [[ "${STAGE}" == "train" || "${STAGE}" == "all" ]]; then
    echo "== checking GPUs on every machine =="
    while read -r ip _; do
        ssh "${ip}" "nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader" \
            || { echo "GPU check failed on ${ip}"; exit 1; }
    done < "${IP_CONFIG}"

    echo "== launching ${NUM_PARTS}x${NUM_TRAINERS} trainers =="
    python3 ${DGL_HOME}/tools/launch.py \
        --workspace ${WORKSPACE} \
        --num_trainers ${NUM_TRAINERS} \
        --num_samplers ${NUM_SAMPLERS} \
        --num_servers ${NUM_SERVERS} \
        --part_config ${PART_CONFIG} \
        --ip_config ${IP_CONFIG} \
        --extra_envs NCCL_SOCKET_IFNAME=ib0 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
        "python3 node_classification.py \
            --graph_name ogbn-products \
            --ip_config ip_config.txt \
            --num_epochs 30 \
            --batch_size 1000 \
            --num_gpus ${NUM_TRAINERS} \
            --backend nccl \
            --eval_every 5"
fi

echo "done."
