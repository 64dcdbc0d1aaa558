#!/usr/bin/env bash
# Full OFA-MobileNetV3 progressive shrinking schedule on 4 nodes x 8 V100 (32 horovod workers).
# Each stage resumes from the checkpoint written by the previous one (see train_ofa_net.py).
#
# usage: bash scripts/run_progressive_shrinking.sh [hostfile]
set -euo pipefail

HOSTFILE=${1:-hosts.txt}
NP=${NP:-32}
EXP_ROOT=${EXP_ROOT:-exp}
LOG_DIR=${EXP_ROOT}/logs
mkdir -p "${LOG_DIR}"

# ---- interconnect ---------------------------------------------------------
# 100G RoCE between nodes; keep NCCL off the docker bridge.
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=WARN
# horovod tensor fusion: 64 MB buffer, 5 ms cycle
export HOROVOD_FUSION_THRESHOLD=67108864
export HOROVOD_CYCLE_TIME=5
# all eight GPUs of every node are used
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4

run_stage() {
    local name=$1; shift
    echo "[$(date +%F_%T)] stage ${name}: $*"
    horovodrun -np "${NP}" -hostfile "${HOSTFILE}" --mpi-args="-x NCCL_SOCKET_IFNAME -x NCCL_IB_DISABLE -x LD_LIBRARY_PATH" \
        python train_ofa_net.py --exp_root "${EXP_ROOT}" "$@" 2>&1 | tee "${LOG_DIR}/${name}.log"
}

# 1) elastic kernel size
run_stage kernel --task kernel
# 2) elastic depth
run_stage depth_p1 --task depth --phase 1
run_stage depth_p2 --task depth --phase 2
# 3) elastic expand ratio
run_stage expand_p1 --task expand --phase 1
run_stage expand_p2 --task expand --phase 2

echo "done. final supernet: ${EXP_ROOT}/kernel_depth2kernel_depth_width/phase2/checkpoint/model_best.pth.tar"
nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader || true
