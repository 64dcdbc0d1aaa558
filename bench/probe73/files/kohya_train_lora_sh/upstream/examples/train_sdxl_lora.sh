#!/usr/bin/env bash
# SDXL LoRA training with sd-scripts on a multi-GPU Linux box.
#
#   bash examples/train_sdxl_lora.sh /data/my_character  my_character_v1
#
# Expects the dataset folder in the usual "<repeats>_<token> <class>" layout and a
# venv created by setup.sh (torch cu121 + xformers).
set -euo pipefail

DATA_DIR=${1:?"usage: $0 <train_data_dir> <output_name>"}
OUTPUT_NAME=${2:?"usage: $0 <train_data_dir> <output_name>"}

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$SCRIPT_DIR")"
cd "$REPO_DIR"

# shellcheck disable=SC1091
source venv/bin/activate

MODEL=${MODEL:-/models/sd_xl_base_1.0.safetensors}
VAE=${VAE:-/models/sdxl_vae_fp16_fix.safetensors}
OUTPUT_DIR=${OUTPUT_DIR:-/outputs/lora}
LOG_DIR=${LOG_DIR:-/outputs/logs}

# ---- hardware -----------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

# reduce fragmentation on 24 GB cards when bucketing produces many shapes
export PYTORCH_CUDA_ALLOC_CONF="garbage_collection_threshold:0.6,max_split_size_mb:128"
# consumer cards (RTX 4090) have no P2P / NVLink; NCCL hangs without this
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1

echo "== GPUs =="
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

python -c "import torch, xformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'xformers', xformers.__version__)"

mkdir -p "$OUTPUT_DIR" "$LOG_DIR"

# ---- launch -------------------------------------------------------------------
if [ "$NUM_GPUS" -gt 1 ]; then
  LAUNCH_ARGS="--multi_gpu --num_processes=${NUM_GPUS}"
else
  LAUNCH_ARGS="--num_processes=1"
fi

accelerate launch ${LAUNCH_ARGS} \
  --num_cpu_threads_per_process=2 \
  --mixed_precision=bf16 \
  sdxl_train_network.py \
  --pretrained_model_name_or_path="$MODEL" \
  --vae="$VAE" \
  --train_data_dir="$DATA_DIR" \
  --output_dir="$OUTPUT_DIR" \
  --output_name="$OUTPUT_NAME" \
  --logging_dir="$LOG_DIR" \
  --resolution="1024,1024" \
  --enable_bucket --min_bucket_reso=512 --max_bucket_reso=2048 --bucket_reso_steps=64 \
  --network_module=networks.lora \
  --network_dim=32 --network_alpha=16 \
  --network_train_unet_only \
  --train_batch_size=4 \
  --max_train_epochs=10 \
  --save_every_n_epochs=2 \
  --learning_rate=1e-4 \
  --lr_scheduler="cosine_with_restarts" --lr_warmup_steps=100 \
  --optimizer_type="AdamW8bit" \
  --optimizer_args "weight_decay=0.01" "betas=0.9,0.99" \
  --mixed_precision="bf16" \
  --save_precision="bf16" \
  --full_bf16 \
  --xformers \
  --gradient_checkpointing \
  --cache_latents --cache_latents_to_disk \
  --cache_text_encoder_outputs \
  --noise_offset=0.0357 \
  --min_snr_gamma=5 \
  --max_data_loader_n_workers=4 --persistent_data_loader_workers \
  --seed=42 \
  --log_with=tensorboard \
  --sample_every_n_epochs=1 \
  --sample_prompts="$DATA_DIR/sample_prompts.txt" \
  --sample_sampler="euler_a"

echo "done: $OUTPUT_DIR/$OUTPUT_NAME.safetensors"
nvidia-smi --query-gpu=index,memory.used --format=csv
