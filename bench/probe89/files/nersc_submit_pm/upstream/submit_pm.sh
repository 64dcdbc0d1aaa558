#!/bin/bash
#SBATCH -C gpu
#SBATCH -A m4331
#SBATCH -q regular
#SBATCH --nodes 4
#SBATCH --ntasks-per-node 4
#SBATCH --gpus-per-node 4
#SBATCH --cpus-per-task 32
#SBATCH --time 01:30:00
#SBATCH --image=nersc/pytorch:ngc-23.07-v0
#SBATCH --module=gpu,nccl-2.18
#SBATCH -J sfno-era5
#SBATCH -o %x-%j.out

# Distributed training of the SFNO/AFNO weather model on Perlmutter.
#   sbatch --nodes 8 submit_pm.sh --config=sfno_73ch --amp_mode=bf16
config_file=./config/sfnonet.yaml
config=${1:-sfno_73ch}
shift || true
run_num=${RUN_NUM:-0}
LOGDIR=${SCRATCH}/sfno/logs
mkdir -p ${LOGDIR}
args="--yaml_config=${config_file} --config=${config} --run_num=${run_num} $@"

# Data are staged on the scratch file system
export DATADIR=${SCRATCH}/era5_73ch
export HDF5_USE_FILE_LOCKING=FALSE

# Libfabric / Slingshot settings for NCCL over the HPE network
export FI_MR_CACHE_MONITOR=userfaultfd
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_CROSS_NIC=1
export NCCL_SOCKET_IFNAME=hsn
export MPICH_GPU_SUPPORT_ENABLED=0

# Profiling mode (nsys) when ENABLE_PROFILING=1
ENABLE_PROFILING=${ENABLE_PROFILING:-0}
PROFILE_OUTPUT=${PROFILE_OUTPUT:-${LOGDIR}/profile_${SLURM_JOB_ID}}
if [ "${ENABLE_PROFILING}" -eq 1 ]; then
    echo "Enabling profiling..."
    NSYS_ARGS="--trace=cuda,cublas,nvtx --cuda-graph-trace=node --kill none -c cudaProfilerApi -f true"
    NSYS_OUTPUT=${PROFILE_OUTPUT}
    export PROFILE_CMD="nsys profile $NSYS_ARGS -o $NSYS_OUTPUT"
fi

# rendezvous on the first node of the allocation
export MASTER_ADDR=$(hostname)
export MASTER_PORT=29507
export WIREUP_INFO=slurm
export OMP_NUM_THREADS=8

echo "nodes: ${SLURM_JOB_NUM_NODES}  tasks: ${SLURM_NTASKS}  master: ${MASTER_ADDR}"

set -x
srun -u --mpi=pmi2 --gpu-bind=none \
    shifter --env PYTHONUSERBASE=$HOME/.local/perlmutter/nersc-pytorch-23.07 \
    bash -c "
    source export_DDP_vars.sh
    ${PROFILE_CMD} python train.py ${args} --data_dir=${DATADIR}
    "
