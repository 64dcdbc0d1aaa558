#!/usr/bin/env bash
# Train a Vicuna-7B LoRA/full fine-tune with FastChat and serve it behind the Gradio web UI.
#
#   scripts/run_vicuna.sh train        # 1 node, all local GPUs, FSDP full fine-tune
#   scripts/run_vicuna.sh serve        # controller + one model worker per GPU + gradio
#   scripts/run_vicuna.sh serve-vllm   # controller + vLLM worker (tensor parallel) + openai api
set -euo pipefail

MODE=${1:-serve}
MODEL_PATH=${MODEL_PATH:-lmsys/vicuna-7b-v1.5}
DATA_PATH=${DATA_PATH:-data/dummy_conversation.json}
OUTPUT_DIR=${OUTPUT_DIR:-output_vicuna}
CONTROLLER_PORT=${CONTROLLER_PORT:-21001}
WEB_PORT=${WEB_PORT:-7860}
LOG_DIR=${LOG_DIR:-logs}
mkdir -p "$LOG_DIR"

# Number of local GPUs (override with NUM_GPUS=...)
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}

echo "== GPUs =="
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}

train() {
  torchrun --nproc_per_node="$NUM_GPUS" --master_port=20001 fastchat/train/train_mem.py \
    --model_name_or_path "$MODEL_PATH" \
    --data_path "$DATA_PATH" \
    --bf16 True \
    --output_dir "$OUTPUT_DIR" \
    --num_train_epochs 3 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 16 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 1200 \
    --save_total_limit 10 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --lazy_preprocess True 2>&1 | tee "$LOG_DIR/train.log"
}

start_controller() {
  python3 -m fastchat.serve.controller --host 0.0.0.0 --port "$CONTROLLER_PORT" \
    > "$LOG_DIR/controller.log" 2>&1 &
  sleep 5
}

serve() {
  start_controller

  # one worker per GPU, each pinned to its own device
  for ((i = 0; i < NUM_GPUS; i++)); do
    PORT=$((31000 + i))
    CUDA_VISIBLE_DEVICES=$i python3 -m fastchat.serve.model_worker \
      --model-path "$MODEL_PATH" \
      --controller-address "http://localhost:$CONTROLLER_PORT" \
      --port "$PORT" --worker-address "http://localhost:$PORT" \
      --device cuda --num-gpus 1 \
      > "$LOG_DIR/worker_$i.log" 2>&1 &
  done

  # a bigger model split across the last two GPUs
  if [[ -n "${BIG_MODEL:-}" ]]; then
    CUDA_VISIBLE_DEVICES=6,7 python3 -m fastchat.serve.model_worker \
      --model-path "$BIG_MODEL" --num-gpus 2 --max-gpu-memory 38GiB \
      --controller-address "http://localhost:$CONTROLLER_PORT" \
      --port 31100 --worker-address "http://localhost:31100" \
      > "$LOG_DIR/worker_big.log" 2>&1 &
  fi

  sleep 30
  python3 -m fastchat.serve.gradio_web_server --port "$WEB_PORT" \
    --controller-url "http://localhost:$CONTROLLER_PORT" 2>&1 | tee "$LOG_DIR/web.log"
}

serve_vllm() {
  start_controller
  python3 -m fastchat.serve.vllm_worker \
    --model-path "$MODEL_PATH" \
    --controller "http://localhost:$CONTROLLER_PORT" \
    --tensor-parallel-size "$NUM_GPUS" \
    --gpu-memory-utilization 0.90 \
    --dtype float16 \
    > "$LOG_DIR/vllm_worker.log" 2>&1 &
  sleep 60
  python3 -m fastchat.serve.openai_api_server --host 0.0.0.0 --port 8000 \
    --controller-address "http://localhost:$CONTROLLER_PORT"
}

case "$MODE" in
  train) train ;;
  serve) serve ;;
  serve-vllm) serve_vllm ;;
  *) echo "unknown mode: $MODE" >&2; exit 1 ;;
esac
