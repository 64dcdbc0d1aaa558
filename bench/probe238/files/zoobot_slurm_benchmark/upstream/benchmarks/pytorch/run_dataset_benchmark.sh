#!/bin/bash
#SBATCH --job-name=zoobot-bench            # Job name
#SBATCH --output=%x_%A.log                 # Standard output and error log
#SBATCH --mem=0                            # Job memory request
#SBATCH --cpus-per-task=24
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2                # one task per GPU for lightning DDP
#SBATCH --time=23:00:00                    # Time limit hrs:min:sec
#SBATCH --constraint=A100
#SBATCH --gres=gpu:a100:2
#SBATCH --exclusive                        # Request exclusive use of the node

# Benchmark Zoobot training on one of the galaxy-datasets (gz_decals_5, gz_rings, gz_evo...)
# Called from run_benchmarks.sh, which sets DATASET, ARCHITECTURE, BATCH_SIZE, GPUS, MIXED_PRECISION etc.

pwd; hostname; date

nvidia-smi

module purge
module load anaconda3/2023.03
module load cuda/11.8

source activate zoobot38_torch

ZOOBOT_DIR=/share/nas2/walml/repos/zoobot
PYTHON=/share/nas2/walml/miniconda3/envs/zoobot38_torch/bin/python

export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0
export CUDA_LAUNCH_BLOCKING=0
export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=4
export WANDB_DIR=/share/nas2/walml/wandb_cache
export HF_HOME=/share/nas2/walml/hf_cache

# dataset copied to local scratch first, the shared nfs is too slow for 2 GPUs
SCRATCH_DIR=/state/partition1/walml
mkdir -p $SCRATCH_DIR
DATA_DIR=$SCRATCH_DIR/galaxy-datasets/$DATASET
if [ ! -d "$DATA_DIR" ]; then
    echo "Copying $DATASET to $DATA_DIR"
    rsync -a /share/nas2/walml/galaxy-datasets/$DATASET/ $DATA_DIR/
fi

EXPERIMENT_DIR=/share/nas2/walml/repos/gz-decals-classifiers/results/benchmarks/pytorch/$DATASET
mkdir -p $EXPERIMENT_DIR

echo "Running on $DATASET with $ARCHITECTURE, batch size $BATCH_SIZE, $GPUS GPUs, mixed precision $MIXED_PRECISION"

srun $PYTHON $ZOOBOT_DIR/benchmarks/pytorch/train_model_on_benchmark_dataset.py \
    --save-dir $EXPERIMENT_DIR/${ARCHITECTURE}_${SLURM_JOB_ID} \
    --dataset $DATASET \
    --data-dir $DATA_DIR \
    --architecture $ARCHITECTURE \
    --resize-after-crop $RESIZE_AFTER_CROP \
    --batch-size $BATCH_SIZE \
    --gpus $GPUS \
    --nodes 1 \
    --num-workers 11 \
    $COLOR_STRING \
    $MIXED_PRECISION_STRING \
    $DEBUG_STRING \
    --wandb \
    --seed $SEED

date
