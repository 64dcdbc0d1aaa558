#!/usr/bin/env bash
# Launch QuantumNAS SuperCircuit training / search / finetune on one node.
#
#   bash scripts/run_quantumnas.sh mnist four0123 8        # 8 GPUs
#   GPUS=0,1 bash scripts/run_quantumnas.sh fashion four0123 2
#
# Stages run back to back; each stage's run dir is reused by the next one.
set -euo pipefail

DATASET=${1:-mnist}
TASK=${2:-four0123}
NPROC=${3:-8}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
SPACE=${SPACE:-u3cu3_s0}
CONF_ROOT=examples/quantumnas/configs/${DATASET}/${TASK}
RUN_ROOT=runs/${DATASET}.${TASK}.${SPACE}
LOG_DIR=${RUN_ROOT}/logs

mkdir -p "${LOG_DIR}"

# --- environment -----------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4
export PYTHONPATH=$(pwd):${PYTHONPATH:-}
# NCCL: single node, PCIe boxes hang without P2P disabled on some drivers
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export TORCH_DISTRIBUTED_DEBUG=${TORCH_DISTRIBUTED_DEBUG:-OFF}

echo "== host $(hostname) | $(date) =="
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"

run_stage () {
    local stage=$1; shift
    local cfg=$1; shift
    echo "== stage ${stage}: ${cfg} =="
    torchpack dist-run -np "${NPROC}" \
        python examples/quantumnas/train.py "${cfg}" \
            --run-dir "${RUN_ROOT}/${stage}" \
            "$@" 2>&1 | tee "${LOG_DIR}/${stage}.log"
}

# 1) SuperCircuit training (weight-shared, random sub-circuit per step)
run_stage super "${CONF_ROOT}/${SPACE}/super.yml" \
    --run.device gpu --run.workers_per_gpu 4

# 2) evolutionary search (single process; the estimator runs on one GPU)
echo "== stage search =="
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python examples/quantumnas/search.py \
    "${CONF_ROOT}/${SPACE}/search.yml" \
    --ckpt.name "${RUN_ROOT}/super/checkpoints/min-loss-valid.pt" \
    --run-dir "${RUN_ROOT}/search" 2>&1 | tee "${LOG_DIR}/search.log"

# 3) train the searched sub-circuit from scratch
run_stage train "${CONF_ROOT}/${SPACE}/train.yml" \
    --ckpt.name "${RUN_ROOT}/search/checkpoints/best_solution.pt" --ckpt.load_ckpt True

# 4) optional: iterative pruning (torchrun variant, no torchpack MPI needed)
if [[ "${PRUNE:-0}" == "1" ]]; then
    echo "== stage prune =="
    torchrun --standalone --nproc_per_node="${NPROC}" \
        examples/quantumnas/prune.py "${CONF_ROOT}/${SPACE}/prune.yml" \
        --run-dir "${RUN_ROOT}/prune" \
        --dist.backend nccl 2>&1 | tee "${LOG_DIR}/prune.log"
fi

echo "done: ${RUN_ROOT}"
