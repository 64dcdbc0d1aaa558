#!/bin/bash
#SBATCH --job-name=epymarl-sweep
#SBATCH --partition=gpu
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=2-00:00:00
#SBATCH --array=0-59
#SBATCH --output=slurm_logs/%x_%A_%a.out
#SBATCH --error=slurm_logs/%x_%A_%a.err

# Sweep over algorithms x environments x seeds, one run per array task.
#   sbatch scripts/slurm_sweep.sh
set -euo pipefail

module purge
module load anaconda3/2022.10
module load cuda/11.8

source activate epymarl

nvidia-smi
echo "Job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} on $(hostname), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}"

ALGOS=(qmix vdn iql mappo ippo)
ENVS=("lbforaging:Foraging-8x8-2p-3f-v3" "rware:rware-tiny-2ag-v2" "pz-mpe-simple-spread-v3" "pz-mpe-simple-tag-v3")
SEEDS=(0 1 2)

N_ALGOS=${#ALGOS[@]}
N_ENVS=${#ENVS[@]}

TASK=${SLURM_ARRAY_TASK_ID}
ALGO=${ALGOS[$(( TASK % N_ALGOS ))]}
ENV_KEY=${ENVS[$(( (TASK / N_ALGOS) % N_ENVS ))]}
SEED=${SEEDS[$(( TASK / (N_ALGOS * N_ENVS) ))]}

case "${ENV_KEY}" in
  pz-mpe-*) TIME_LIMIT=25 ;;
  rware:*) TIME_LIMIT=500 ;;
  *) TIME_LIMIT=50 ;;
esac

echo "algo=${ALGO} env=${ENV_KEY} seed=${SEED} time_limit=${TIME_LIMIT}"

mkdir -p slurm_logs results

srun python3 src/main.py \
    --config="${ALGO}" \
    --env-config=gymma \
    with env_args.time_limit="${TIME_LIMIT}" \
    env_args.key="${ENV_KEY}" \
    seed="${SEED}" \
    use_cuda=True \
    save_model=True \
    use_tensorboard=True
