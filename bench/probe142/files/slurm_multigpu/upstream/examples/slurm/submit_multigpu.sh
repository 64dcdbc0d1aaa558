#!/bin/bash

#SBATCH --job-name=multigpu
#SBATCH -D .
#SBATCH --output=O-%x.%j
#SBATCH --error=E-%x.%j
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1         # number of MP tasks
#SBATCH --gres=gpu:4                # number of GPUs per node
#SBATCH --cpus-per-task=160         # number of cores per tasks
#SBATCH --time=01:59:00             # maximum execution time (HH:MM:SS)

######################
### Set enviroment ###
######################
source activateEnvironment.sh
export GPUS_PER_NODE=4
export CUDA_VISIBLE_DEVICES=0,1,2,3
# Surface NCCL init problems (hangs at the first all-reduce) in the job log
export NCCL_DEBUG=INFO
export NCCL_ASYNC_ERROR_HANDLING=1
######################

export SCRIPT=/accelerate/examples/complete_nlp_example.py
export SCRIPT_ARGS=" \
    --mixed_precision fp16 \
    --output_dir /accelerate/examples/output \
    --with_tracking \
    "

accelerate launch --multi_gpu --num_processes $GPUS_PER_NODE $SCRIPT $SCRIPT_ARGS
