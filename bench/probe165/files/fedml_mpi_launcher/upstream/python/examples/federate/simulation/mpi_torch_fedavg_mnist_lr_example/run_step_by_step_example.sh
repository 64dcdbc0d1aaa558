#!/usr/bin/env bash
# Usage: sh run_step_by_step_example.sh 4
#   $1 = number of workers (clients); one extra MPI process is started for the server.
#
# GPU placement is decided by config/gpu_mapping.yaml (key given in fedml_config.yaml),
# so CUDA_VISIBLE_DEVICES below only restricts which cards the processes may use.
set -e

WORKER_NUM=${1:-4}
CONFIG_FILE=${2:-config/fedml_config.yaml}
HOSTFILE=${HOSTFILE:-mpi_host_file}

PROCESS_NUM=`expr $WORKER_NUM + 1`
echo "processes: $PROCESS_NUM (1 server + $WORKER_NUM clients)"

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

# show the cards before starting so that stale processes are easy to spot
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

hostname > $HOSTFILE
if [ -n "$EXTRA_HOSTS" ]; then
  for h in $EXTRA_HOSTS; do echo $h >> $HOSTFILE; done
fi

mpirun -np $PROCESS_NUM \
  -hostfile $HOSTFILE \
  -x CUDA_VISIBLE_DEVICES -x NCCL_DEBUG -x OMP_NUM_THREADS \
  python torch_step_by_step_example.py --cf $CONFIG_FILE

echo "finished. logs are under ./log"
