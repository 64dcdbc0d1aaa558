#!/bin/bash
#SBATCH --job-name=fc-transducer-large
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --mem=0
#SBATCH --time=04:00:00
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out

# Multi-node FastConformer-Transducer training on 4 x DGX A100 (32 GPUs).
# Lightning reads SLURM_* variables itself, so we just srun one task per GPU.

set -euo pipefail

NEMO_ROOT=${NEMO_ROOT:-/workspace/nemo}
DATA_ROOT=${DATA_ROOT:-/data/asr}
EXP_DIR=${EXP_DIR:-/results/fastconformer_transducer_large}

export OMP_NUM_THREADS=1
export TOKENIZERS_PARALLELISM=false
export NCCL_DEBUG=INFO
export NCCL_IB_HCA=mlx5
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export CUDA_DEVICE_MAX_CONNECTIONS=1
# expandable segments reduce fragmentation with variable-length audio batches
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

mkdir -p logs "$EXP_DIR"

srun --kill-on-bad-exit=1 \
  python "$NEMO_ROOT/examples/asr/asr_transducer/speech_to_text_rnnt_bpe.py" \
    --config-path="../conf/fastconformer" \
    --config-name="fast-conformer_transducer_bpe" \
    model.train_ds.manifest_filepath="$DATA_ROOT/train_manifest.json" \
    model.validation_ds.manifest_filepath="$DATA_ROOT/dev_manifest.json" \
    model.tokenizer.dir="$DATA_ROOT/tokenizer_spe_bpe_v1024" \
    model.train_ds.batch_size=32 \
    trainer.devices=$SLURM_NTASKS_PER_NODE \
    trainer.num_nodes=$SLURM_JOB_NUM_NODES \
    trainer.accelerator=gpu \
    trainer.strategy=ddp \
    trainer.precision=bf16 \
    trainer.max_steps=200000 \
    exp_manager.exp_dir="$EXP_DIR" \
    exp_manager.resume_if_exists=true \
    exp_manager.resume_ignore_no_checkpoint=true
