#!/usr/bin/env bash
# Launch one SGLang server spread over several 8-GPU nodes (tensor parallel across nodes).
#
#   node 0:  NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_multinode.sh /models/DeepSeek-V3
#   node 1:  NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/launch_multinode.sh /models/DeepSeek-V3
#
# Only node 0 serves HTTP; the other nodes join the NCCL world and run their shards.
set -euo pipefail

MODEL_PATH=${1:-/models/Meta-Llama-3.1-405B-Instruct-FP8}
NODE_RANK=${NODE_RANK:-0}
NNODES=${NNODES:-2}
MASTER_ADDR=${MASTER_ADDR:-10.0.0.1}
DIST_PORT=${DIST_PORT:-5000}
HTTP_PORT=${HTTP_PORT:-30000}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
TP_SIZE=$((NNODES * GPUS_PER_NODE))
LOG_DIR=${LOG_DIR:-./logs}
mkdir -p "${LOG_DIR}"

# ---------------------------------------------------------------- devices ---
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [ "${NUM_GPUS}" -lt "${GPUS_PER_NODE}" ]; then
  echo "expected ${GPUS_PER_NODE} GPUs on $(hostname), found ${NUM_GPUS}" >&2
  exit 1
fi
nvidia-smi topo -m > "${LOG_DIR}/topo_node${NODE_RANK}.txt" || true

# ---------------------------------------------------------------- network ---
# InfiniBand HCAs and the bond used for the bootstrap / gloo side channel.
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0,mlx5_1,mlx5_2,mlx5_3}
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-bond0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# ----------------------------------------------------------------- memory ---
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export SGLANG_SET_CPU_AFFINITY=1

# ------------------------------------------------------------ sanity check ---
python3 - <<'PY'
import torch

assert torch.cuda.is_available(), "CUDA is not available"
print("visible devices:", torch.cuda.device_count(), torch.cuda.get_device_name(0))
PY

# One-shot all-reduce across the nodes before the (slow) model load, so that a
# broken fabric fails in seconds rather than after 20 minutes of weight loading.
if [ "${SKIP_NCCL_CHECK:-0}" != "1" ]; then
  torchrun --nnodes "${NNODES}" --node-rank "${NODE_RANK}" \
    --nproc-per-node "${GPUS_PER_NODE}" \
    --master-addr "${MASTER_ADDR}" --master-port $((DIST_PORT + 1)) \
    scripts/nccl_smoke_test.py --backend nccl
fi

EXTRA_ARGS=()
if [ "${NODE_RANK}" != "0" ]; then
  # worker nodes do not need a tokenizer / http server
  EXTRA_ARGS+=(--skip-tokenizer-init)
fi

python3 -m sglang.launch_server \
  --model-path "${MODEL_PATH}" \
  --tp "${TP_SIZE}" \
  --nnodes "${NNODES}" \
  --node-rank "${NODE_RANK}" \
  --dist-init-addr "${MASTER_ADDR}:${DIST_PORT}" \
  --host 0.0.0.0 \
  --port "${HTTP_PORT}" \
  --trust-remote-code \
  --mem-fraction-static 0.85 \
  --cuda-graph-max-bs 160 \
  --attention-backend flashinfer \
  --enable-nccl-nvls \
  --enable-torch-compile \
  --torch-compile-max-bs 8 \
  "${EXTRA_ARGS[@]}" \
  2>&1 | tee "${LOG_DIR}/server_node${NODE_RANK}.log"
