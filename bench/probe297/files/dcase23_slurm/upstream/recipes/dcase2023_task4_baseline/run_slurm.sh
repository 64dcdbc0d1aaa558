#!/bin/bash
#SBATCH --job-name=dcase23_t4
#SBATCH --partition=gpu
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=48G
#SBATCH --time=48:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err

# Train (and test) the DCASE 2023 Task 4 baseline on one GPU of the cluster.
# Usage: sbatch run_slurm.sh [conf_file] [log_dir]

set -e

CONF=${1:-./confs/default.yaml}
LOG_DIR=${2:-./exp/2023_baseline_${SLURM_JOB_ID}}

module purge
module load cuda/11.7
module load anaconda3/2022.10

source activate dcase2023

mkdir -p logs
mkdir -p "${LOG_DIR}"

echo "Running on $(hostname)"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

# the recipe expects the 16k data next to the 44k data
export PYTHONPATH=$PYTHONPATH:$(pwd)
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}

python train_sed.py \
    --conf_file "${CONF}" \
    --log_dir "${LOG_DIR}" \
    --gpus 1

# evaluation on the public eval set with the best checkpoint
BEST=$(ls -t ${LOG_DIR}/version_*/epoch=*.ckpt | head -n 1)
python train_sed.py \
    --conf_file "${CONF}" \
    --log_dir "${LOG_DIR}" \
    --gpus 1 \
    --eval_from_checkpoint "${BEST}"
