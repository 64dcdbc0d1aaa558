#!/bin/bash
#SBATCH --partition=g40
#SBATCH --job-name=clap-htsat-roberta
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-gpu=6
#SBATCH --exclusive
#SBATCH --output=logs/%x_%j.out
#SBATCH --requeue

# LAION-CLAP pre-training: HTS-AT audio tower + RoBERTa text tower on the
# LAION-Audio-630K + AudioSet webdataset shards, 4 nodes x 8 A100.

module load openmpi cuda/11.8
source /fsx/clap/venv/bin/activate

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=12802
export WORLD_SIZE=$((SLURM_NNODES * SLURM_NTASKS_PER_NODE))

# NCCL tuning for the EFA / InfiniBand fabric
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ens
export NCCL_IB_DISABLE=0
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_PROTO=simple
export CUDA_LAUNCH_BLOCKING=0
export OMP_NUM_THREADS=6
export PYTHONFAULTHANDLER=1

cd /fsx/clap/src/laion_clap
export PYTHONPATH="$PYTHONPATH:$PWD"

DATASETS="Clotho audiocaps BBCSoundEffects free_to_use_sounds paramount_motion sonniss_game_effects wesoundeffects audioset"

srun --cpu_bind=v --accel-bind=gn python -m training.main \
    --save-frequency 5 \
    --save-top-performance 3 \
    --save-most-recent \
    --dataset-type="webdataset" \
    --precision="amp" \
    --batch-size=96 \
    --lr=1e-4 \
    --wd=0.0 \
    --epochs=45 \
    --workers=6 \
    --use-bn-sync \
    --amodel HTSAT-tiny \
    --tmodel roberta \
    --warmup 3200 \
    --datasetnames $DATASETS \
    --datasetinfos train unbalanced_train \
    --report-to "wandb" \
    --wandb-notes "htsat-roberta-630k-as" \
    --top-k-checkpoint-select-dataset="Clotho-test" \
    --top-k-checkpoint-select-metric="mAP@10" \
    --openai-model-cache-dir /fsx/clap/.cache \
    --logs /fsx/clap/logs \
    --seed 3407 \
    --gather-with-grad \
    --optimizer "adam" \
    --data-filling "repeatpad" \
    --data-truncating "rand_trunc" \
    --dist-backend="nccl" \
    --dist-url="env://" \
    --pretrained-audio /fsx/clap/pretrained/HTSAT-fullset-imagenet-map=0.467.ckpt

# quick sanity check of the GPUs that were used
srun --ntasks-per-node=1 nvidia-smi --query-gpu=index,name,memory.used --format=csv
