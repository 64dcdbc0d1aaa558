#!/bin/bash
# Pipeline-parallel FlexGen over several nodes, one process per GPU, launched with mpirun.
#
#   HOSTNAMES=node1:2,node2:2 N_NODES=2 bash bench_dist_multi_node.sh
#
# Every node must be able to ssh to the others without a password; the head node is this one.
# Weights are dummies (_DUMMY_), so no checkpoint has to be present on the workers.

N_GPUS=$(nvidia-smi --list-gpus | wc -l)
N_NODES=${N_NODES:-2}
N_CORES_PER_GPU=12
HOSTNAMES=${HOSTNAMES:?set HOSTNAMES=host1:slots,host2:slots}
MODEL=${MODEL:-facebook/opt-30b}
GPU_BATCH_SIZE=${GPU_BATCH_SIZE:-24}
NUM_GPU_BATCHES=${NUM_GPU_BATCHES:-2}

PYTHON_EXEC=$CONDA_PREFIX/bin/python
PYTHON_SCRIPT=flexgen.dist_flex_opt

# kill stale workers from a previous run on this node
pgrep -fl python | awk '!/dist_flex_opt\.py/{print $1}' | xargs -r kill

set -x

ALL_IPADDR=($(hostname -I))
# use the first ip address by default
MY_IPADDR=${ALL_IPADDR[0]}
NETWORK_INTERFACE=$(ip -o -4 addr show | awk -v ip="$MY_IPADDR" '$4 ~ ip {print $2}')

export NCCL_SOCKET_IFNAME=$NETWORK_INTERFACE
export GLOO_SOCKET_IFNAME=$NETWORK_INTERFACE
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=$N_CORES_PER_GPU

LOG=dist_flexgen_${MODEL//\//-}_n${N_NODES}x${N_GPUS}_bs${GPU_BATCH_SIZE}x${NUM_GPU_BATCHES}.log

mpirun \
  --mca btl_tcp_if_exclude lo,docker0 \
  --mca oob_tcp_if_include $NETWORK_INTERFACE \
  --map-by ppr:$N_GPUS:node:pe=$N_CORES_PER_GPU --oversubscribe -H $HOSTNAMES \
  --bind-to core -x OMP_NUM_THREADS -x NCCL_SOCKET_IFNAME -x GLOO_SOCKET_IFNAME -x CUDA_VISIBLE_DEVICES \
  $PYTHON_EXEC -m $PYTHON_SCRIPT \
    --head-ip $MY_IPADDR \
    --port 7777 \
    --use-mpi \
    --model $MODEL \
    --gpu-batch-size $GPU_BATCH_SIZE \
    --num-gpu-batches $NUM_GPU_BATCHES \
    --percent 20 80 0 100 0 100 \
    --comm-device gpu \
    --path _DUMMY_ \
    --cut-gen-len 5 \
    --pin-weight 0 \
    --async-comm 2>&1 | tee $LOG

set +x
echo "finished at $(date), log: $LOG"
# keep the per-run policy next to the log for later comparison
echo "percent=20 80 0 100 0 100 gbs=$GPU_BATCH_SIZE ngbs=$NUM_GPU_BATCHES" >> $LOG
grep -E "throughput|peak_mem" $LOG || echo "no throughput line found in $LOG"
