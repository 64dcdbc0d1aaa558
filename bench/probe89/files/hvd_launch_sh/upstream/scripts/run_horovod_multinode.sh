#!/usr/bin/env bash
# Launch the Horovod ResNet-50 example on a set of GPU nodes with Open MPI.
#
#   HOSTFILE=hosts.txt ./scripts/run_horovod_multinode.sh [extra args for the trainer]
#
# hosts.txt lists one node per line ("node01 slots=8"). All nodes need the same
# conda env, passwordless ssh and the dataset mounted at $DATA_ROOT.
set -euo pipefail

HOSTFILE=${HOSTFILE:-hosts.txt}
DATA_ROOT=${DATA_ROOT:-/lustre/datasets/imagenet}
LOG_DIR=${LOG_DIR:-./logs/$(date +%Y%m%d-%H%M%S)}
IFACE=${IFACE:-ib0}
EPOCHS=${EPOCHS:-90}
BATCH=${BATCH:-32}

mkdir -p "${LOG_DIR}"

if [[ ! -f "${HOSTFILE}" ]]; then
    echo "hostfile ${HOSTFILE} not found" >&2
    exit 1
fi

# Number of GPUs on this node; we assume homogeneous nodes.
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
NUM_NODES=$(grep -cv '^\s*$' "${HOSTFILE}")
NP=$(( NUM_NODES * GPUS_PER_NODE ))

echo "nodes=${NUM_NODES} gpus/node=${GPUS_PER_NODE} total ranks=${NP}"

# Sanity check that Horovod was built with the collectives we expect.
horovodrun --check-build | tee "${LOG_DIR}/check_build.txt"
if ! grep -q "\[X\] NCCL" "${LOG_DIR}/check_build.txt"; then
    echo "Horovod was built without NCCL support, rebuild with HOROVOD_GPU_OPERATIONS=NCCL" >&2
    exit 1
fi

# Host-side communication (MPI control plane, Gloo fallback) goes over the IB interface.
export OMP_NUM_THREADS=4
export HOROVOD_CYCLE_TIME=0.5
export HOROVOD_FUSION_THRESHOLD=67108864
export HOROVOD_HIERARCHICAL_ALLREDUCE=1

# NCCL tuning for the InfiniBand fabric.
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${IFACE}
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_IB_GID_INDEX=3

# Record the GPU topology once per job for later debugging.
nvidia-smi topo -m > "${LOG_DIR}/topology.txt" || true

mpirun -np "${NP}" \
    -hostfile "${HOSTFILE}" \
    -bind-to none -map-by slot \
    -x LD_LIBRARY_PATH -x PATH \
    -x NCCL_DEBUG -x NCCL_SOCKET_IFNAME -x NCCL_IB_HCA -x NCCL_IB_GID_INDEX \
    -x HOROVOD_CYCLE_TIME -x HOROVOD_FUSION_THRESHOLD -x HOROVOD_HIERARCHICAL_ALLREDUCE \
    -x OMP_NUM_THREADS \
    -mca pml ob1 -mca btl ^openib \
    -mca btl_tcp_if_include "${IFACE}" \
    python examples/pytorch/pytorch_imagenet_resnet50.py \
        --train-dir "${DATA_ROOT}/train" \
        --val-dir "${DATA_ROOT}/validation" \
        --log-dir "${LOG_DIR}" \
        --epochs "${EPOCHS}" \
        --batch-size "${BATCH}" \
        --fp16-allreduce \
        "$@" 2>&1 | tee "${LOG_DIR}/train.log"

echo "done; logs in ${LOG_DIR}"
