#!/usr/bin/env bash
# Launch a multi-GPU fine-tune with 🤗 Accelerate on a single 8×A100 node.
#
#   bash scripts/train_multi_gpu.sh clm      # run_clm_no_trainer
#   bash scripts/train_multi_gpu.sh lora     # diffusers text-to-image LoRA
#   bash scripts/train_multi_gpu.sh kto      # TRL KTO with ZeRO-3
set -euo pipefail

TASK=${1:-clm}
NUM_GPUS=${NUM_GPUS:-8}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export HF_HUB_ENABLE_HF_TRANSFER=1
export WANDB_PROJECT=${WANDB_PROJECT:-hf-examples}

# NCCL tuning for PCIe boxes without NVLink; harmless on SXM nodes
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

OUT_ROOT=${OUT_ROOT:-/data/runs}
STAMP=$(date +%Y%m%d-%H%M%S)
LOG_DIR="${OUT_ROOT}/logs"
mkdir -p "${LOG_DIR}"

echo "=== $(hostname) $(date) ==="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"

COMMON=(--num_processes "${NUM_GPUS}" --num_machines 1 --mixed_precision bf16 --dynamo_backend no)

case "${TASK}" in
  clm)
    accelerate launch --multi_gpu "${COMMON[@]}" \
      examples/pytorch/language-modeling/run_clm_no_trainer.py \
        --model_name_or_path Qwen/Qwen2.5-0.5B \
        --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
        --per_device_train_batch_size 8 --gradient_accumulation_steps 2 \
        --block_size 2048 --learning_rate 2e-5 --num_train_epochs 1 \
        --attn_implementation flash_attention_2 \
        --output_dir "${OUT_ROOT}/clm-${STAMP}" --with_tracking --report_to wandb \
        2>&1 | tee "${LOG_DIR}/clm-${STAMP}.log"
    ;;
  lora)
    accelerate launch --multi_gpu "${COMMON[@]}" \
      examples/text_to_image/train_text_to_image_lora.py \
        --pretrained_model_name_or_path stable-diffusion-v1-5/stable-diffusion-v1-5 \
        --dataset_name lambdalabs/naruto-blip-captions \
        --resolution 512 --random_flip --train_batch_size 4 \
        --max_train_steps 15000 --learning_rate 1e-4 --lr_scheduler cosine \
        --mixed_precision fp16 --enable_xformers_memory_efficient_attention --use_8bit_adam \
        --allow_tf32 --checkpointing_steps 500 --seed 1337 \
        --validation_prompt "A naruto with blue eyes." \
        --output_dir "${OUT_ROOT}/lora-${STAMP}" \
        2>&1 | tee "${LOG_DIR}/lora-${STAMP}.log"
    ;;
  kto)
    accelerate launch --config_file configs/accelerate_zero3.yaml \
      examples/scripts/kto.py \
        --model_name_or_path trl-lib/qwen1.5-1.8b-sft \
        --per_device_train_batch_size 16 --num_train_epochs 1 \
        --learning_rate 5e-7 --gradient_checkpointing --bf16 \
        --output_dir "${OUT_ROOT}/kto-${STAMP}" \
        2>&1 | tee "${LOG_DIR}/kto-${STAMP}.log"
    ;;
  *)
    echo "unknown task ${TASK}" >&2
    exit 1
    ;;
esac

echo "=== done: $(date) ==="
nvidia-smi
