#!/bin/bash
#SBATCH --job-name=ddppo
#SBATCH --output=logs.ddppo.out
#SBATCH --error=logs.ddppo.err
#SBATCH --gres gpu:8
#SBATCH --nodes 2
#SBATCH --cpus-per-task 10
#SBATCH --ntasks-per-node 8
#SBATCH --mem=60GB
#SBATCH --time=72:00:00
#SBATCH --signal=USR1@600
#SBATCH --partition=learnfair

export GLOG_minloglevel=2
export MAGNUM_LOG=quiet

# NCCL over InfiniBand between the nodes; uncomment NCCL_DEBUG to
# debug hangs in the first all_reduce
export NCCL_IB_DISABLE=0
# export NCCL_DEBUG=INFO

module purge
module load cuda/10.1
module load cudnn/v7.6.5.32-cuda.10.1
module load NCCL/2.5.6-1-cuda.10.1

source ~/.bashrc
conda activate habitat

MASTER_ADDR=$(srun --ntasks=1 hostname 2>&1 | tail -n1)
export MASTER_ADDR

set -x
srun python -u -m habitat_baselines.run \
    --exp-config habitat_baselines/config/pointnav/ddppo_pointnav.yaml \
    --run-type train
