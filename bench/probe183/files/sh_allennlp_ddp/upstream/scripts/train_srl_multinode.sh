#!/usr/bin/env bash
# Multi-node distributed training of the SRL-BERT model with AllenNLP.
#
# Run the same script on every node; NODE_RANK must be 0 on the primary.
#   NODE_RANK=0 PRIMARY_ADDR=10.0.0.1 bash scripts/train_srl_multinode.sh
#   NODE_RANK=1 PRIMARY_ADDR=10.0.0.1 bash scripts/train_srl_multinode.sh
#
# Each node uses all 8 of its GPUs; AllenNLP spawns one worker per entry in
# distributed.cuda_devices.
set -euo pipefail

NODE_RANK=${NODE_RANK:-0}
NUM_NODES=${NUM_NODES:-2}
PRIMARY_ADDR=${PRIMARY_ADDR:-127.0.0.1}
PRIMARY_PORT=${PRIMARY_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CONFIG=${CONFIG:-training_config/structured_prediction/bert_base_srl.jsonnet}
SERIALIZATION_DIR=${SERIALIZATION_DIR:-/checkpoints/srl_bert_$(date +%Y%m%d)}

export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS_PER_NODE - 1)))

# NCCL: use the InfiniBand fabric, fall back to the 100G ethernet NIC for bootstrap
export NCCL_SOCKET_IFNAME=ens1f0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
# the train reader does a lot of work before the first all_reduce
export NCCL_TIMEOUT=1800

export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false
export ALLENNLP_CACHE_ROOT=${ALLENNLP_CACHE_ROOT:-/cache/allennlp}

echo "node ${NODE_RANK}/${NUM_NODES}: GPUs ${CUDA_VISIBLE_DEVICES}, primary ${PRIMARY_ADDR}:${PRIMARY_PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

DEVICES=$(python -c "print(list(range(${GPUS_PER_NODE})))")

OVERRIDES=$(cat <<JSON
{
  "distributed": {
    "cuda_devices": ${DEVICES},
    "num_nodes": ${NUM_NODES},
    "primary_address": "${PRIMARY_ADDR}",
    "primary_port": ${PRIMARY_PORT}
  },
  "trainer": {"use_amp": true},
  "data_loader": {"batch_sampler": {"batch_size": 32}}
}
JSON
)

if [[ "${NODE_RANK}" == "0" ]]; then
  mkdir -p "${SERIALIZATION_DIR}"
fi

allennlp train "${CONFIG}" \
  --serialization-dir "${SERIALIZATION_DIR}" \
  --node-rank "${NODE_RANK}" \
  --include-package allennlp_models \
  --overrides "${OVERRIDES}" \
  --file-friendly-logging

if [[ "${NODE_RANK}" == "0" ]]; then
  echo "done; model archive at ${SERIALIZATION_DIR}/model.tar.gz"
fi
