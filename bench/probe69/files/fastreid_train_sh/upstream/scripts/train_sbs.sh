#!/usr/bin/env bash
# Train the SBS (stronger baseline) models of the fast-reid model zoo and evaluate them
# with k-reciprocal re-ranking.
#
#   bash scripts/train_sbs.sh market     # Market1501, R50-ibn
#   bash scripts/train_sbs.sh veri       # VeRi-776 vehicle re-id, R50-ibn
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node and run the same command.
set -euo pipefail

DATASET=${1:-market}
NUM_GPUS=${NUM_GPUS:-4}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PORT=${PORT:-$((50000 + RANDOM % 10000))}

case "${DATASET}" in
  market)
    CONFIG=configs/Market1501/sbs_R50-ibn.yml
    OUT=logs/market1501/sbs_R50-ibn
    ;;
  duke)
    CONFIG=configs/DukeMTMC/sbs_R50-ibn.yml
    OUT=logs/dukemtmc/sbs_R50-ibn
    ;;
  msmt)
    CONFIG=configs/MSMT17/sbs_R50-ibn.yml
    OUT=logs/msmt17/sbs_R50-ibn
    ;;
  veri)
    CONFIG=configs/VeRi/sbs_R50-ibn.yml
    OUT=logs/veri/sbs_R50-ibn
    ;;
  *)
    echo "unknown dataset ${DATASET}" >&2
    exit 1
    ;;
esac

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4
export FASTREID_DATASETS=${FASTREID_DATASETS:-/datasets}

# print the cards for the log when the tool is around
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -L
fi

# sanity check: make sure we see the GPUs we think we see
python3 -c "import torch; assert torch.cuda.device_count() >= ${NUM_GPUS}, torch.cuda.device_count()"

mkdir -p "${OUT}"

python3 tools/train_net.py --config-file "${CONFIG}" \
    --num-gpus "${NUM_GPUS}" --num-machines "${NNODES}" --machine-rank "${NODE_RANK}" \
    --dist-url "tcp://${MASTER_ADDR}:${PORT}" \
    MODEL.DEVICE "cuda:0" \
    SOLVER.AMP.ENABLED True \
    OUTPUT_DIR "${OUT}" 2>&1 | tee "${OUT}/train.log"

# only the first node evaluates
if [ "${NODE_RANK}" -eq 0 ]; then
  # plain evaluation
  python3 tools/train_net.py --config-file "${CONFIG}" --eval-only --num-gpus 1 \
      MODEL.WEIGHTS "${OUT}/model_final.pth" MODEL.DEVICE "cuda:0" \
      OUTPUT_DIR "${OUT}/eval"

  # with k-reciprocal re-ranking (jaccard distance computed with faiss)
  python3 tools/train_net.py --config-file "${CONFIG}" --eval-only --num-gpus 1 \
      MODEL.WEIGHTS "${OUT}/model_final.pth" MODEL.DEVICE cuda \
      TEST.RERANK.ENABLED True OUTPUT_DIR "${OUT}/eval_rerank"
fi

echo "finished ${DATASET} at $(date)"
