#!/bin/bash
#SBATCH --job-name=aer-qv-gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:a100:4
#SBATCH --cpus-per-task=16
#SBATCH --time=04:00:00
#SBATCH --output=logs/qv_%j.out
#
# Quantum-volume sweep for qiskit-aer-gpu: single GPU, cuStateVec, and
# 4-GPU MPI chunking.  Results go to results/qv_<mode>_<jobid>.json.

module purge
module load cuda/12.2 openmpi/4.1.5-cuda
source ~/miniforge3/etc/profile.d/conda.sh
conda activate qml-gpu

mkdir -p logs results
JOB=${SLURM_JOB_ID:-local}

echo "node: $(hostname)"
nvidia-smi -L
python - <<'PY'
from qiskit_aer import AerSimulator
print("aer devices:", AerSimulator().available_devices())
PY

# ---- 1 GPU, Aer kernels --------------------------------------------------
export CUDA_VISIBLE_DEVICES=0
python test/benchmark/aer_gpu_qv_bench.py --qubits 16 30 --step 2 \
    --out results/qv_aer_${JOB}.json

# ---- 1 GPU, cuStateVec ---------------------------------------------------
python test/benchmark/aer_gpu_qv_bench.py --qubits 16 30 --step 2 --custatevec \
    --out results/qv_custatevec_${JOB}.json

# ---- 4 GPUs, MPI + chunking ---------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-16}
# CUDA-aware Open MPI: let UCX move chunks GPU<->GPU directly
export UCX_TLS=cuda_copy,cuda_ipc,rc,sm,self
export OMPI_MCA_pml=ucx
mpirun -np 4 --map-by ppr:4:node --bind-to none \
    python test/benchmark/aer_gpu_qv_bench.py --qubits 30 34 --step 1 \
        --blocking 28 --mpi --out results/qv_mpi_${JOB}.json

echo "finished at $(date)"
