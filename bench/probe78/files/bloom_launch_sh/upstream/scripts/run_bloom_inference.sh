#!/bin/bash
# Launch BLOOM-176B inference on one 8x A100-80GB node.
#
#   bash scripts/run_bloom_inference.sh ds-inference      # DeepSpeed-Inference, tensor parallel over 8 GPUs
#   bash scripts/run_bloom_inference.sh ds-zero           # DeepSpeed ZeRO-3 with CPU offload
#   bash scripts/run_bloom_inference.sh accelerate        # naive pipeline with device_map="auto"
#
# Results (throughput per token, peak memory) go to logs/<timestamp>/.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TRANSFORMERS_CACHE=${TRANSFORMERS_CACHE:-/data/hf_cache}
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1}
export TOKENIZERS_PARALLELISM=false

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
MODEL=${MODEL:-bigscience/bloom}
MODE=${1:-ds-inference}
BATCH_SIZE=${BATCH_SIZE:-1}
LOG_DIR=logs/$(date +%Y%m%d-%H%M%S)-${MODE}
mkdir -p "$LOG_DIR"

echo "mode=$MODE model=$MODEL gpus=$NUM_GPUS bs=$BATCH_SIZE" | tee "$LOG_DIR/run.txt"
nvidia-smi topo -m > "$LOG_DIR/topology.txt"
python -c "import torch, transformers, deepspeed; print(torch.__version__, transformers.__version__, deepspeed.__version__)" \
    | tee -a "$LOG_DIR/run.txt"

case "$MODE" in
  ds-inference)
    deepspeed --num_gpus "$NUM_GPUS" bloom-inference-scripts/bloom-ds-inference.py \
        --name "$MODEL" --batch_size "$BATCH_SIZE" --benchmark 2>&1 | tee "$LOG_DIR/ds-inference.log"
    ;;
  ds-inference-int8)
    deepspeed --num_gpus "$NUM_GPUS" bloom-inference-scripts/bloom-ds-inference.py \
        --name microsoft/bloom-deepspeed-inference-int8 --dtype int8 \
        --batch_size "$BATCH_SIZE" --benchmark 2>&1 | tee "$LOG_DIR/ds-inference-int8.log"
    ;;
  ds-zero)
    deepspeed --num_gpus "$NUM_GPUS" bloom-inference-scripts/bloom-ds-zero-inference.py \
        --name "$MODEL" --batch_size "$BATCH_SIZE" --cpu_offload --benchmark 2>&1 | tee "$LOG_DIR/ds-zero.log"
    ;;
  accelerate)
    python bloom-inference-scripts/bloom-accelerate-inference.py \
        --name "$MODEL" --batch_size "$BATCH_SIZE" --benchmark 2>&1 | tee "$LOG_DIR/accelerate.log"
    ;;
  *)
    echo "unknown mode: $MODE (expected ds-inference, ds-inference-int8, ds-zero or accelerate)"
    exit 1
    ;;
esac

# Memory left on each device after the run (helps spot leaked processes between runs)
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv | tee "$LOG_DIR/memory_after.csv"
echo "logs written to $LOG_DIR"
# quick summary of the benchmark line(s)
grep -h "Throughput per token" "$LOG_DIR"/*.log || true
