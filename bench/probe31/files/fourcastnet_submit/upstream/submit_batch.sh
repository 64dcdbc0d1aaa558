#!/bin/bash -l
#SBATCH --time=06:00:00
#SBATCH -C gpu
#SBATCH --account=m4134_g
#SBATCH -q regular
#SBATCH --nodes=8
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH -J afno
#SBATCH --image=nersc/pytorch:ngc-22.02-v0
#SBATCH -o afno_backbone_finetune.out

# FourCastNet training on Perlmutter (4x A100 per node), one process per GPU.
# Usage: sbatch submit_batch.sh <config> <run_num>

config_file=./config/AFNO.yaml
config=${1:-'afno_backbone_finetune'}
run_num=${2:-'0'}

module load cudatoolkit/11.7
module load nccl/2.15.5

export HDF5_USE_FILE_LOCKING=FALSE
export OMP_NUM_THREADS=8
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_SOCKET_IFNAME=hsn
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN
export CUDA_DEVICE_MAX_CONNECTIONS=1
export MASTER_ADDR=$(hostname)
export MASTER_PORT=29500

# Pin each local rank to its own GPU and to the NUMA domain closest to it
export CUDA_VISIBLE_DEVICES=0,1,2,3

set -x
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee gpu_info.csv

srun -u --mpi=pmi2 shifter \
    bash -c "
    source export_DDP_vars.sh
    python train.py --enable_amp --yaml_config=$config_file --config=$config --run_num=$run_num
    "

# aggregate per-rank logs
if [ -d "./exp/${config}/${run_num}" ]; then
    cp gpu_info.csv "./exp/${config}/${run_num}/"
fi
