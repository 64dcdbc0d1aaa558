#!/usr/bin/env bash
# Fine-tune OpenVLA on one LIBERO suite with LoRA, then evaluate the merged checkpoint in simulation.
#
#   bash scripts/finetune_and_eval_libero.sh libero_spatial_no_noops
#
# Expects: the RLDS-converted LIBERO datasets under $DATA_ROOT, a W&B login, and one node with 8 GPUs.
set -euo pipefail

SUITE=${1:-libero_spatial_no_noops}
DATA_ROOT=${DATA_ROOT:-/data/modified_libero_rlds}
RUN_ROOT=${RUN_ROOT:-/data/openvla_runs}
ADAPTER_TMP=${ADAPTER_TMP:-/data/openvla_adapters}
VLA_PATH=${VLA_PATH:-openvla/openvla-7b}
BATCH_SIZE=${BATCH_SIZE:-8}
GRAD_ACCUM=${GRAD_ACCUM:-2}
MAX_STEPS=${MAX_STEPS:-50000}
EVAL_GPU=${EVAL_GPU:-0}

# ---------------------------------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export TOKENIZERS_PARALLELISM=false
export NCCL_DEBUG=WARN
export WANDB_PROJECT=openvla-libero
# TF only feeds the RLDS pipeline; keep it off the GPUs so it does not grab memory
export TF_FORCE_GPU_ALLOW_GROWTH=true

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo "[finetune] ${SUITE} on ${NUM_GPUS} GPUs (batch ${BATCH_SIZE} x accum ${GRAD_ACCUM})"

# flash-attn must be installed after torch, without build isolation
if ! python -c "import flash_attn" 2>/dev/null; then
  pip install packaging ninja
  pip install "flash-attn==2.5.5" --no-build-isolation
fi

# ---------------------------------------------------------------------------------------------------
# fine-tune
# ---------------------------------------------------------------------------------------------------
torchrun --standalone --nnodes 1 --nproc-per-node "${NUM_GPUS}" vla-scripts/finetune.py \
  --vla_path "${VLA_PATH}" \
  --data_root_dir "${DATA_ROOT}" \
  --dataset_name "${SUITE}" \
  --run_root_dir "${RUN_ROOT}" \
  --adapter_tmp_dir "${ADAPTER_TMP}" \
  --lora_rank 32 \
  --batch_size "${BATCH_SIZE}" \
  --grad_accumulation_steps "${GRAD_ACCUM}" \
  --learning_rate 5e-4 \
  --image_aug True \
  --max_steps "${MAX_STEPS}" \
  --save_steps 5000 \
  --wandb_project "${WANDB_PROJECT}" \
  --wandb_entity "${WANDB_ENTITY:-openvla}"

CKPT_DIR=$(ls -td "${RUN_ROOT}"/*"${SUITE}"* | head -n 1)
echo "[finetune] done, latest checkpoint: ${CKPT_DIR}"

# ---------------------------------------------------------------------------------------------------
# evaluate in LIBERO (MuJoCo, rendered off-screen)
# ---------------------------------------------------------------------------------------------------
export MUJOCO_GL=egl
export MUJOCO_EGL_DEVICE_ID=${EVAL_GPU}
export PYOPENGL_PLATFORM=egl

TASK_SUITE=${SUITE%_no_noops}
CUDA_VISIBLE_DEVICES=${EVAL_GPU} python experiments/robot/libero/run_libero_eval.py \
  --model_family openvla \
  --pretrained_checkpoint "${CKPT_DIR}" \
  --task_suite_name "${TASK_SUITE}" \
  --center_crop True \
  --num_trials_per_task 50 \
  --use_wandb True \
  --wandb_project "${WANDB_PROJECT}"

echo "[eval] results written under ./experiments/logs"
