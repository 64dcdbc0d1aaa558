#!/usr/bin/env bash
# Fine-tune an AV-HuBERT Large checkpoint with the separation / enhancement head
# on LRS3 mixtures (target speaker + interfering speaker / babble noise).
#
# usage: bash scripts/finetune_avse.sh /path/to/lrs3/433h_data /path/to/noise /path/to/large_lrs3_iter5.pt exp/avse_large

set -euo pipefail

DATA=${1:?data dir}
NOISE=${2:?noise dir}
PRETRAINED=${3:?pretrained avhubert checkpoint}
EXP=${4:-exp/avse_large}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p ${EXP}

echo "fine-tuning on ${NGPU} GPUs, writing to ${EXP}"

fairseq-hydra-train \
    --config-dir ${ROOT}/conf/avse \
    --config-name base_lrs3_avse.yaml \
    task.data=${DATA} \
    task.label_dir=${DATA} \
    task.noise_wav=${NOISE}/all_noise.txt \
    model.w2v_path=${PRETRAINED} \
    hydra.run.dir=${EXP} \
    common.user_dir=${ROOT} \
    distributed_training.distributed_world_size=${NGPU} \
    distributed_training.nprocs_per_node=${NGPU} \
    optimization.update_freq=[$((8 / NGPU))] \
    2>&1 | tee ${EXP}/train.log
