#!/bin/bash -l
#SBATCH --time=06:00:00
#SBATCH -C gpu
#SBATCH --account=m4134_g
#SBATCH -q regular
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH -J afno
#SBATCH --image=nersc/pytorch:ngc-22.02-v0
#SBATCH -o %x-%j.out
#
# FourCastNet training on Perlmutter: one task per A100, 4 per node, DDP wired up from the
# SLURM environment inside the shifter container (see export_DDP_vars.sh).

config_file=./config/AFNO.yaml
config='afno_backbone'
run_num='0'

module load cudatoolkit/11.7
module load nccl/2.15.5

export HDF5_USE_FILE_LOCKING=FALSE
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_SOCKET_IFNAME=hsn
export NCCL_DEBUG=WARN
export CUDA_VISIBLE_DEVICES=0,1,2,3

export MASTER_ADDR=$(hostname)
export MASTER_PORT=29500

# sanity-check the allocation before spending the queue time
srun -N ${SLURM_NNODES} --ntasks-per-node=1 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

set -x
srun -u --mpi=pmi2 shifter \
    bash -c "
    source export_DDP_vars.sh
    python train.py --enable_amp --yaml_config=$config_file --config=$config --run_num=$run_num
    "

# ---------------------------------------------------------------------------------------------
# export_DDP_vars.sh (sourced above, shown here for reference):
#
#   export RANK=$SLURM_PROCID
#   export WORLD_RANK=$SLURM_PROCID
#   export LOCAL_RANK=$SLURM_LOCALID
#   export WORLD_SIZE=$SLURM_NTASKS
#   export MASTER_PORT=29500 # default from torch launcher
#
# Single-node interactive runs use torchrun instead:
#
#   torchrun --standalone --nproc_per_node=4 train.py --enable_amp --yaml_config=$config_file --config=$config
# ---------------------------------------------------------------------------------------------
