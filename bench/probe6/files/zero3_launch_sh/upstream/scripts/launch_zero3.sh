#!/usr/bin/env bash
# Multi-node ZeRO-3 pre-training launcher (DeepSpeed runner over a hostfile).
#
#   bash scripts/launch_zero3.sh <model_size> [extra args...]
#
# Expects: a shared filesystem, passwordless ssh between nodes, /etc/hostfile with "host slots=8".
set -euo pipefail

MODEL_SIZE=${1:-7b}
shift || true
EXTRA_ARGS="$@"

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT_DIR}"

# ----------------------------------------------------------------------------
# Environment
# ----------------------------------------------------------------------------
source /opt/conda/etc/profile.d/conda.sh
conda activate llm-train

export CUDA_HOME=/usr/local/cuda-12.1
export PATH=${CUDA_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}

# which GPUs of each node to use
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

# NCCL tuning for 4x200G InfiniBand nodes
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=bond0
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export NCCL_TIMEOUT=1800
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

# ----------------------------------------------------------------------------
# Model presets
# ----------------------------------------------------------------------------
case "${MODEL_SIZE}" in
  1b)
    HIDDEN=2048; LAYERS=24; HEADS=16; MICRO_BS=8; GA=4 ;;
  7b)
    HIDDEN=4096; LAYERS=32; HEADS=32; MICRO_BS=4; GA=8 ;;
  13b)
    HIDDEN=5120; LAYERS=40; HEADS=40; MICRO_BS=2; GA=16 ;;
  *)
    echo "unknown model size ${MODEL_SIZE}" >&2
    exit 1 ;;
esac

SEQ_LEN=4096
LR=3e-4
TRAIN_TOKENS=200000000000
DATA_PATH=/mnt/data/pretrain/merged_text_document
TOKENIZER=/mnt/models/tokenizer
OUTPUT_DIR=/mnt/ckpt/${MODEL_SIZE}-zero3-$(date +%Y%m%d)
DS_CONFIG=${ROOT_DIR}/configs/ds_zero3.json
HOSTFILE=${HOSTFILE:-/etc/hostfile}
MASTER_ADDR=$(head -n1 "${HOSTFILE}" | awk '{print $1}')
MASTER_PORT=${MASTER_PORT:-29500}
NNODES=$(grep -c slots "${HOSTFILE}")
WORLD_SIZE=$((NNODES * GPUS_PER_NODE))

mkdir -p "${OUTPUT_DIR}/logs"
echo "nodes=${NNODES} gpus/node=${GPUS_PER_NODE} world=${WORLD_SIZE} master=${MASTER_ADDR}:${MASTER_PORT}"

# ----------------------------------------------------------------------------
# Pre-flight: check every node sees its GPUs and the fused kernels build
# ----------------------------------------------------------------------------
pdsh -R ssh -w ^"${HOSTFILE}" "nvidia-smi -L | head -n ${GPUS_PER_NODE}" || {
  echo "GPU check failed on some node" >&2; exit 1; }
python -c "import torch; assert torch.cuda.is_available(); print(torch.version.cuda, torch.backends.cudnn.version())"
python -c "import flash_attn, apex; print('flash_attn', flash_attn.__version__)"
DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 ds_report | tail -n 20

# ----------------------------------------------------------------------------
# Launch
# ----------------------------------------------------------------------------
deepspeed --hostfile "${HOSTFILE}" \
  --num_nodes "${NNODES}" --num_gpus "${GPUS_PER_NODE}" \
  --master_addr "${MASTER_ADDR}" --master_port "${MASTER_PORT}" \
  pretrain.py \
  --deepspeed --deepspeed_config "${DS_CONFIG}" \
  --hidden-size ${HIDDEN} --num-layers ${LAYERS} --num-attention-heads ${HEADS} \
  --seq-length ${SEQ_LEN} --micro-batch-size ${MICRO_BS} --gradient-accumulation-steps ${GA} \
  --lr ${LR} --train-tokens ${TRAIN_TOKENS} \
  --data-path ${DATA_PATH} --tokenizer-path ${TOKENIZER} \
  --bf16 --use-flash-attn --fused-rmsnorm \
  --dist-backend nccl \
  --save ${OUTPUT_DIR} --save-interval 1000 \
  --log-interval 10 ${EXTRA_ARGS} 2>&1 | tee "${OUTPUT_DIR}/logs/train_$(hostname).log"

status=${PIPESTATUS[0]}
if [ "${status}" -ne 0 ]; then
  echo "training failed with status ${status}; dumping GPU state" >&2
  nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv >&2
  exit "${status}"
fi

# ----------------------------------------------------------------------------
# Convert the last ZeRO-3 checkpoint into a consolidated fp32 state dict
# ----------------------------------------------------------------------------
LATEST=$(cat "${OUTPUT_DIR}/latest")
python "${OUTPUT_DIR}/zero_to_fp32.py" "${OUTPUT_DIR}" "${OUTPUT_DIR}/consolidated_${LATEST}.bin"
echo "done: ${OUTPUT_DIR}/consolidated_${LATEST}.bin"

# keep the last 3 checkpoints only
ls -dt "${OUTPUT_DIR}"/global_step* | tail -n +4 | xargs -r rm -rf
# report the per-node peak memory from the logs
grep -h "max_memory_allocated" "${OUTPUT_DIR}"/logs/*.log | sort -k2 -n | tail -n 1 || true
# done
exit 0
