#!/usr/bin/env bash
# DeepSpeed-MoE CIFAR-10 sweep over expert-parallel size, expert count and top-k.
#
#   NUM_NODES=1 bash run_ds_moe.sh            # all local GPUs
#   GPU_LIST=0,1,2,3 bash run_ds_moe.sh       # a subset
#
# Results (final test accuracy per configuration) are collected in ${OUT_DIR}/summary.tsv.

set -euo pipefail

# Number of nodes
NUM_NODES=${NUM_NODES:-1}
# GPUs per node: everything nvidia-smi can see unless told otherwise
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}
HOSTFILE=${HOSTFILE:-/job/hostfile}
OUT_DIR=${OUT_DIR:-./moe_sweep_$(date +%Y%m%d_%H%M%S)}
EPOCHS=${EPOCHS:-10}

if [ -n "${GPU_LIST:-}" ]; then
    export CUDA_VISIBLE_DEVICES=${GPU_LIST}
    NUM_GPUS=$(echo "${GPU_LIST}" | tr ',' '\n' | wc -l)
fi

export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_LEVEL=NVL
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
export OMP_NUM_THREADS=4

mkdir -p "${OUT_DIR}"

# Environment report (DeepSpeed version, op compatibility) for the record.
ds_report > "${OUT_DIR}/ds_report.txt" 2>&1 || true

# Build the fused Adam op once up front so that eight ranks do not race to JIT-compile it.
python -c "from deepspeed.ops.op_builder import FusedAdamBuilder; FusedAdamBuilder().load()"

if [ -f "${HOSTFILE}" ] && [ "${NUM_NODES}" -gt 1 ]; then
    LAUNCH_HOSTS="--hostfile=${HOSTFILE}"
else
    LAUNCH_HOSTS=""
fi

printf "ep_size\texperts\ttop_k\tnoisy_gate\taccuracy\n" > "${OUT_DIR}/summary.tsv"

for EP_SIZE in 1 2 4; do
    for EXPERTS in 4 8; do
        for TOP_K in 1 2; do
            if [ "${EXPERTS}" -lt "${EP_SIZE}" ]; then
                continue
            fi
            # RSample noisy gating is only defined for top-1.
            if [ "${TOP_K}" -eq 1 ]; then NOISY="RSample"; else NOISY="None"; fi
            RUN="ep${EP_SIZE}_e${EXPERTS}_k${TOP_K}"
            echo "=== ${RUN} on ${NUM_NODES}x${NUM_GPUS} GPUs ==="

            deepspeed ${LAUNCH_HOSTS} --num_nodes=${NUM_NODES} --num_gpus=${NUM_GPUS} \
                cifar10_deepspeed.py \
                --log-interval 100 \
                --deepspeed \
                --epochs ${EPOCHS} \
                --moe \
                --ep-world-size ${EP_SIZE} \
                --num-experts ${EXPERTS} \
                --top-k ${TOP_K} \
                --noisy-gate-policy ${NOISY} \
                --moe-param-group \
                --dtype fp16 \
                --stage 2 2>&1 | tee "${OUT_DIR}/${RUN}.log"

            ACC=$(grep -oE "test images: [0-9]+ %" "${OUT_DIR}/${RUN}.log" | tail -1 | grep -oE "[0-9]+" || echo "NA")
            printf "%s\t%s\t%s\t%s\t%s\n" "${EP_SIZE}" "${EXPERTS}" "${TOP_K}" "${NOISY}" "${ACC}" >> "${OUT_DIR}/summary.tsv"
        done
    done
done

column -t "${OUT_DIR}/summary.tsv"
