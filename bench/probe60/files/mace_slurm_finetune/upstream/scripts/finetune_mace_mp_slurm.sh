#!/bin/bash
#SBATCH --job-name=mace-mp-ft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --mem=0
#SBATCH --time=24:00:00
#SBATCH --output=logs/%x-%j.out
#
# Multi-node fine-tuning of MACE-MP-0 (medium) on a DFT dataset, then export for LAMMPS.
# One task per GPU; mace_run_train reads the SLURM_* variables itself (--launcher=slurm).

set -euo pipefail

module purge
module load gcc/12.2 cuda/12.4 cudnn/9.1 nccl/2.21
source "${HOME}/miniforge3/etc/profile.d/conda.sh"
conda activate mace-cu124

export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}
export MASTER_ADDR=$(scontrol show hostnames "${SLURM_JOB_NODELIST}" | head -n 1)
export MASTER_PORT=29500

# NCCL over InfiniBand
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

WORKDIR=${SLURM_SUBMIT_DIR}
DATA=${WORKDIR}/data
RUN_NAME=mace-mp-ft-${SLURM_JOB_ID}

mkdir -p "${WORKDIR}/logs" "${WORKDIR}/checkpoints" "${WORKDIR}/results"

echo "Nodes: ${SLURM_JOB_NODELIST}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

srun --kill-on-bad-exit=1 python -m mace.cli.run_train \
    --name="${RUN_NAME}" \
    --foundation_model="medium" \
    --multiheads_finetuning=False \
    --train_file="${DATA}/train.xyz" \
    --valid_fraction=0.05 \
    --test_file="${DATA}/test.xyz" \
    --energy_key="REF_energy" \
    --forces_key="REF_forces" \
    --stress_key="REF_stress" \
    --E0s="average" \
    --loss="universal" \
    --energy_weight=1.0 \
    --forces_weight=10.0 \
    --stress_weight=10.0 \
    --lr=0.005 \
    --scaling="rms_forces_scaling" \
    --batch_size=8 \
    --valid_batch_size=16 \
    --max_num_epochs=200 \
    --ema \
    --ema_decay=0.995 \
    --amsgrad \
    --default_dtype="float64" \
    --device=cuda \
    --enable_cueq=True \
    --distributed \
    --launcher=slurm \
    --num_workers=8 \
    --pin_memory=True \
    --seed=7 \
    --work_dir="${WORKDIR}" \
    --checkpoints_dir="${WORKDIR}/checkpoints" \
    --results_dir="${WORKDIR}/results" \
    --save_cpu

# Export the fine-tuned model for LAMMPS (ML-IAP unified interface, Kokkos)
if [[ "${SLURM_PROCID:-0}" == "0" ]]; then
    python -m mace.cli.create_lammps_model "${WORKDIR}/checkpoints/${RUN_NAME}.model" --format=mliap --dtype=float32
    echo "Wrote ${RUN_NAME}.model-mliap_lammps.pt"
fi

# quick NVT smoke test on one GPU
srun --ntasks=1 --gpus=1 lmp -k on g 1 -sf kk -pk kokkos newton on neigh half \
    -var model "${WORKDIR}/checkpoints/${RUN_NAME}.model-mliap_lammps.pt" -in "${WORKDIR}/in.nvt.lammps"
