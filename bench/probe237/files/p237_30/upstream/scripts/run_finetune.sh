#!/bin/bash
# Train the adapter zoo used by the serving benchmarks (one LoRA per task and rank).
#
#   bash scripts/run_finetune.sh                 # all tasks, ranks 8/16/64, all local GPUs
#   GPUS=0,1 TASKS="gsm8k" bash scripts/run_finetune.sh
set -e

BASE=${BASE:-meta-llama/Llama-2-7b-hf}
OUT_ROOT=${OUT_ROOT:-/models/lora}
TASKS=${TASKS:-"gsm8k sqlctx viggo"}
RANKS=${RANKS:-"8 16 64"}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
PRECISION=${PRECISION:-fp16}
MASTER_PORT=${MASTER_PORT:-29501}

export CUDA_VISIBLE_DEVICES=${GPUS}
NPROC=$(echo "${GPUS}" | tr ',' '\n' | wc -l)

export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export TORCH_NCCL_BLOCKING_WAIT=0
export CUDA_DEVICE_MAX_CONNECTIONS=1

# fail fast if the driver is missing / GPUs are busy
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader

mkdir -p "${OUT_ROOT}" logs
for task in ${TASKS}; do
  for r in ${RANKS}; do
    out="${OUT_ROOT}/llama2-7b-${task}-r${r}"
    if [[ -f "${out}/adapter_model.safetensors" ]]; then
      echo "skip ${out} (exists)"
      continue
    fi
    alpha=$((r * 2))
    echo "=== ${task} rank=${r} on ${NPROC} GPU(s) ==="
    torchrun --standalone --nproc_per_node "${NPROC}" --master_port "${MASTER_PORT}" \
      scripts/finetune_lora.py \
        --base "${BASE}" \
        --data "${task}" \
        --out "${out}" \
        --rank "${r}" --alpha "${alpha}" \
        --precision "${PRECISION}" \
        --batch-size 8 --grad-accum 4 \
        --grad-ckpt \
        2>&1 | tee "logs/finetune_${task}_r${r}.log"
  done
done

python - <<'PY'
import glob, json, os
root = os.environ.get("OUT_ROOT", "/models/lora")
for d in sorted(glob.glob(os.path.join(root, "*"))):
    cfg = os.path.join(d, "adapter_config.json")
    if os.path.exists(cfg):
        c = json.load(open(cfg))
        print(f"{os.path.basename(d):40s} r={c['r']:<3} alpha={c['lora_alpha']:<4} targets={','.join(c['target_modules'])}")
PY
