#!/bin/bash
#SBATCH --job-name=sbi-npe-sweep
#SBATCH --partition=gpu-2080ti
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=16
#SBATCH --mem=64G
#SBATCH --time=0-12:00
#SBATCH --array=0-23
#SBATCH --output=logs/%x-%A_%a.out
#SBATCH --error=logs/%x-%A_%a.err
#
# Sweep of NPE density estimators x simulation budgets on the sbibm tasks.
# Each array task trains one (task, estimator, budget, seed) combination on one GPU and writes
# results/<task>/<estimator>/<budget>/seed<k>.json.  Simulations run on the 16 CPUs.
#
#   sbatch scripts/run_sbi_sweep.sh            # whole sweep
#   SWEEP_INDEX=5 bash scripts/run_sbi_sweep.sh  # one combination, locally

set -euo pipefail

module purge
module load cuda/12.1 cudnn/8.9
source "${HOME}/miniconda3/etc/profile.d/conda.sh"
conda activate sbi-gpu

TASKS=(two_moons slcp gaussian_mixture lotka_volterra)
ESTIMATORS=(maf nsf zuko_nsf)
BUDGETS=(10000 100000)

IDX=${SLURM_ARRAY_TASK_ID:-${SWEEP_INDEX:-0}}
N_EST=${#ESTIMATORS[@]}
N_BUD=${#BUDGETS[@]}
TASK=${TASKS[$(( IDX / (N_EST * N_BUD) ))]}
EST=${ESTIMATORS[$(( (IDX / N_BUD) % N_EST ))]}
BUDGET=${BUDGETS[$(( IDX % N_BUD ))]}
SEED=${SEED:-1}

# outside SLURM, pin to the first card; under SLURM the scheduler already sets this
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export OMP_NUM_THREADS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export CUBLAS_WORKSPACE_CONFIG=:4096:8   # deterministic cuBLAS for the seed study

OUT=results/${TASK}/${EST}/${BUDGET}
mkdir -p "${OUT}" logs

echo "[$(date)] host=$(hostname) task=${TASK} estimator=${EST} budget=${BUDGET} seed=${SEED}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

python -m sbibm_runner.run \
    task=${TASK} \
    algorithm=npe \
    algorithm.density_estimator=${EST} \
    algorithm.num_simulations=${BUDGET} \
    algorithm.device=cuda \
    algorithm.simulation_workers=${SLURM_CPUS_PER_TASK:-8} \
    seed=${SEED} \
    hydra.run.dir=${OUT}/hydra \
    +output=${OUT}/seed${SEED}.json

# log peak memory from the nvidia-smi accounting for the job summary
nvidia-smi --query-accounted-apps=pid,max_memory_usage --format=csv,noheader || true
echo "[$(date)] done"
