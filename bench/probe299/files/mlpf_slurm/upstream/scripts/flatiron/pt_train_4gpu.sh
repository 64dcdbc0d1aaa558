#!/bin/sh

# Walltime limit
#SBATCH -t 7-00:00:00
#SBATCH -N 1
#SBATCH --exclusive
#SBATCH --tasks-per-node=1
#SBATCH -p gpu
#SBATCH --gpus-per-task=4
#SBATCH --cpus-per-task=64
#SBATCH --constraint=a100-80gb,ib

# Job name
#SBATCH -J pt_train

# Output and error logs
#SBATCH -o logs_slurm/log_%x_%j.out
#SBATCH -e logs_slurm/log_%x_%j.err

# Add jobscript to job output
echo "#################### Job submission script. #############################"
cat $0
echo "################# End of job submission script. #########################"

module --force purge; module load modules/2.2-20230808
module load slurm gcc cmake cuda/12.1.1 cudnn/8.9.2.26-12.x nccl openmpi apptainer

nvidia-smi
source ~/miniconda3/bin/activate pytorch
which python3
python3 --version

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=INFO
export TFDS_DATA_DIR=/mnt/ceph/users/ewulff/tensorflow_datasets

python3 mlpf/pyg_pipeline.py --dataset clic --gpus 4 \
    --data-dir $TFDS_DATA_DIR --config parameters/pytorch/pyg-clic.yaml \
    --train --test --make-plots --conv-type attention \
    --num-epochs 10 --gpu-batch-multiplier 4 --num-workers 1 --prefetch-factor 2 \
    --checkpoint-freq 1 --comet --dtype bfloat16 --attention-type flash
