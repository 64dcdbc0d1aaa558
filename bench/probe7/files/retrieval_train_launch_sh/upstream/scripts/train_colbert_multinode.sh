#!/usr/bin/env bash
# Multi-node ColBERT / dense-retriever training + indexing launcher.
#
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_colbert_multinode.sh configs/msmarco.yaml
#
# One process per GPU; the node's GPU count is read from nvidia-smi unless NGPUS is set.
set -euo pipefail

CONFIG=${1:-configs/msmarco.yaml}
RUN_NAME=${RUN_NAME:-colbert-$(date +%Y%m%d-%H%M%S)}
OUTPUT_DIR=${OUTPUT_DIR:-/checkpoints/${RUN_NAME}}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}

# ---------------------------------------------------------------- devices
if [[ -z "${NGPUS:-}" ]]; then
    NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
fi
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}
echo "[launch] node ${NODE_RANK}/${NNODES}: ${NGPUS} GPUs (${CUDA_VISIBLE_DEVICES})"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

# ---------------------------------------------------------------- communication
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0,mlx5_1,mlx5_2,mlx5_3}
export NCCL_IB_GID_INDEX=3
export NCCL_NET_GDR_LEVEL=2
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}

# ---------------------------------------------------------------- runtime
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512
export CUDA_DEVICE_MAX_CONNECTIONS=1
export CUDA_MODULE_LOADING=LAZY
# uncomment to debug device-side asserts
# export CUDA_LAUNCH_BLOCKING=1

mkdir -p "${OUTPUT_DIR}/logs"
cp "${CONFIG}" "${OUTPUT_DIR}/"

python - <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
assert torch.cuda.is_available(), "no GPU visible"
EOF

# ---------------------------------------------------------------- train
torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${NGPUS}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    -m colbert.train \
        --config "${CONFIG}" \
        --root "${OUTPUT_DIR}" \
        --experiment "${RUN_NAME}" \
        --amp \
        --bsize 64 \
        --accumsteps 1 \
        --maxsteps 200000 \
    2>&1 | tee "${OUTPUT_DIR}/logs/train_node${NODE_RANK}.log"

# ---------------------------------------------------------------- index (rank-0 node only)
if [[ "${NODE_RANK}" == "0" ]]; then
    CHECKPOINT="${OUTPUT_DIR}/${RUN_NAME}/checkpoints/colbert"
    python -m colbert.index \
        --checkpoint "${CHECKPOINT}" \
        --collection data/msmarco/collection.tsv \
        --index_name "${RUN_NAME}.nbits2" \
        --nbits 2 \
        --gpus "${CUDA_VISIBLE_DEVICES}" \
        2>&1 | tee "${OUTPUT_DIR}/logs/index.log"

    # quick recall check with the FAISS IVF candidate generator on GPU 0
    CUDA_VISIBLE_DEVICES=0 python -m retrieval.eval_recall \
        --index "${OUTPUT_DIR}/${RUN_NAME}.nbits2" \
        --queries data/msmarco/queries.dev.small.tsv \
        --qrels data/msmarco/qrels.dev.small.tsv \
        --faiss_gpu \
        2>&1 | tee "${OUTPUT_DIR}/logs/recall.log"
fi

echo "[launch] done: ${OUTPUT_DIR}"
