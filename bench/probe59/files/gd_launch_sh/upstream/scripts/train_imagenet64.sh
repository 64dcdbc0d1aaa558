#!/bin/bash
# Class-conditional ImageNet 64x64 (ADM) + noisy classifier, guided-diffusion style.
#
# Usage: DATA_DIR=/data/imagenet/train bash scripts/train_imagenet64.sh [diffusion|classifier|sample]
#
# One MPI rank per GPU; guided_diffusion/dist_util.py maps rank -> GPU and
# sets up the NCCL process group itself.
set -euo pipefail

STAGE=${1:-diffusion}
DATA_DIR=${DATA_DIR:?set DATA_DIR to the ImageNet train folder}
export OPENAI_LOGDIR=${OPENAI_LOGDIR:-/checkpoints/adm_imagenet64_${STAGE}}

# Cluster networking (InfiniBand).
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=WARN

NUM_GPUS=${NUM_GPUS:-$(nvidia-smi -L | wc -l)}
echo "Launching ${STAGE} on ${NUM_GPUS} GPUs"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

MODEL_FLAGS="--attention_resolutions 32,16,8 --class_cond True --diffusion_steps 1000 --dropout 0.1 \
  --image_size 64 --learn_sigma True --noise_schedule cosine --num_channels 192 --num_head_channels 64 \
  --num_res_blocks 3 --resblock_updown True --use_new_attention_order True --use_fp16 True \
  --use_scale_shift_norm True"
TRAIN_FLAGS="--lr 1e-4 --batch_size 32 --microbatch -1 --ema_rate 0.9999 --log_interval 100 --save_interval 10000"

CLASSIFIER_FLAGS="--image_size 64 --classifier_attention_resolutions 32,16,8 --classifier_depth 4 \
  --classifier_width 128 --classifier_pool attention --classifier_resblock_updown True \
  --classifier_use_scale_shift_norm True --classifier_use_fp16 True"
CLASSIFIER_TRAIN_FLAGS="--iterations 300000 --anneal_lr True --batch_size 64 --lr 6e-4 --save_interval 10000 \
  --weight_decay 0.2"

SAMPLE_FLAGS="--batch_size 256 --num_samples 50000 --timestep_respacing 250"

case "${STAGE}" in
  diffusion)
    mpiexec -n "${NUM_GPUS}" python scripts/image_train.py --data_dir "${DATA_DIR}" \
      ${MODEL_FLAGS} ${TRAIN_FLAGS}
    ;;
  classifier)
    mpiexec -n "${NUM_GPUS}" python scripts/classifier_train.py --data_dir "${DATA_DIR}" \
      ${CLASSIFIER_FLAGS} ${CLASSIFIER_TRAIN_FLAGS}
    ;;
  sample)
    # Quick single-device sanity check on a chosen GPU before the full multi-GPU sampling run.
    SAMPLE_GPU=${SAMPLE_GPU:-0}
    CUDA_VISIBLE_DEVICES=${SAMPLE_GPU} python scripts/classifier_sample.py ${MODEL_FLAGS} \
      --classifier_scale 1.0 --classifier_path "${CKPT_DIR}/64x64_classifier.pt" \
      --model_path "${CKPT_DIR}/64x64_diffusion.pt" --batch_size 16 --num_samples 16 --timestep_respacing 250
    mpiexec -n "${NUM_GPUS}" python scripts/classifier_sample.py ${MODEL_FLAGS} \
      --classifier_scale 1.0 --classifier_path "${CKPT_DIR}/64x64_classifier.pt" \
      --model_path "${CKPT_DIR}/64x64_diffusion.pt" ${SAMPLE_FLAGS}
    ;;
  *)
    echo "unknown stage ${STAGE}" >&2
    exit 1
    ;;
esac

# Evaluate against the reference batch (TensorFlow evaluator from the repo; runs on GPU 0).
if [ "${STAGE}" = "sample" ]; then
  python evaluations/evaluator.py evaluations/VIRTUAL_imagenet64_labeled.npz \
    "${OPENAI_LOGDIR}/samples_50000x64x64x3.npz"
fi
