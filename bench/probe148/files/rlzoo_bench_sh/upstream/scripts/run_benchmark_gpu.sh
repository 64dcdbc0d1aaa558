#!/bin/bash
# Run the zoo benchmark for the off-policy algorithms on the GPU nodes.
# Usage: ./scripts/run_benchmark_gpu.sh <gpu-id> <algo> [extra train.py args]
#   e.g. ./scripts/run_benchmark_gpu.sh 1 sac --n-timesteps 1000000

GPU_ID=${1:-0}
ALGO=${2:-sac}
shift 2

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export CUBLAS_WORKSPACE_CONFIG=:4096:8
export OMP_NUM_THREADS=1

LOG_DIR=logs/benchmark/${ALGO}
mkdir -p "${LOG_DIR}"

# record which card we ran on; keeps the benchmark table honest
nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader -i 0 > "${LOG_DIR}/gpu_info.txt" || true

ENVS="HalfCheetah-v4 Ant-v4 Hopper-v4 Walker2d-v4 Humanoid-v4 Swimmer-v4"
SEEDS="0 1 2"

for env in ${ENVS}; do
    for seed in ${SEEDS}; do
        echo "=== ${ALGO} ${env} seed=${seed} (GPU ${GPU_ID}) ==="
        python train.py --algo "${ALGO}" --env "${env}" --seed "${seed}" \
            --device cuda \
            --eval-episodes 10 --eval-freq 10000 \
            -f "${LOG_DIR}" --vec-env subproc "$@" \
            2>&1 | tee "${LOG_DIR}/${env}_${seed}.log"
    done
done

# cpu-only baselines for the small classic-control tasks (faster than the gpu for tiny MLPs)
for env in CartPole-v1 Pendulum-v1 MountainCarContinuous-v0; do
    CUDA_VISIBLE_DEVICES="" python train.py --algo "${ALGO}" --env "${env}" --device cpu -f "${LOG_DIR}" "$@"
done

python scripts/all_plots.py -a "${ALGO}" -e ${ENVS} -f "${LOG_DIR}" -o "${LOG_DIR}/results"
