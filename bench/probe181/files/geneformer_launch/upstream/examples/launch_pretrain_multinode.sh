#!/bin/bash
#SBATCH --job-name=geneformer_pretrain
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=32
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#
# Geneformer pretraining on 3 nodes x 4 V100 32GB with DeepSpeed ZeRO-2.
# Submit with: sbatch examples/launch_pretrain_multinode.sh

module purge
module load cuda/11.7 cudnn/8.5 nccl/2.14
source ~/miniconda3/etc/profile.d/conda.sh
conda activate geneformer

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

GPUS_PER_NODE=4
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MASTER_PORT=29500

# deepspeed hostfile: "<host> slots=<gpus>"
HOSTFILE=logs/hostfile_${SLURM_JOB_ID}
rm -f ${HOSTFILE}
for host in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
    echo "${host} slots=${GPUS_PER_NODE}" >> ${HOSTFILE}
done

# log the GPU inventory of every node before starting
srun --ntasks=${SLURM_NNODES} --ntasks-per-node=1 \
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

deepspeed \
    --hostfile ${HOSTFILE} \
    --num_nodes ${SLURM_NNODES} \
    --num_gpus ${GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    --launcher slurm \
    pretrain_geneformer_w_deepspeed.py \
    --num_nodes ${SLURM_NNODES} \
    --deepspeed ds_config.json
