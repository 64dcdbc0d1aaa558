#!/usr/bin/env bash
# Imagenette/Imagewoof leaderboard runs on one multi-GPU box.
#
#   GPUS=0,1,2,3 SIZE=128 EPOCHS=5 ./scripts/run_imagenette_dist.sh
#   WOOF=1 SIZE=192 EPOCHS=20 ./scripts/run_imagenette_dist.sh --mixup 0.2
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZE=${SIZE:-128}
EPOCHS=${EPOCHS:-5}
WOOF=${WOOF:-0}
BS=${BS:-64}
LR=${LR:-8e-3}
RUNS=${RUNS:-5}
LOG_DIR=${LOG_DIR:-$REPO_DIR/logs}
mkdir -p "$LOG_DIR"

# which GPUs to use; fastai.launch spawns one process per visible device
export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

NGPU=$(nvidia-smi -L | wc -l)
NPROC=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
echo "== $NPROC of $NGPU GPUs: $CUDA_VISIBLE_DEVICES | size=$SIZE epochs=$EPOCHS woof=$WOOF bs=$BS lr=$LR"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

TAG="$( [ "$WOOF" = 1 ] && echo woof || echo nette )_${SIZE}_${EPOCHS}ep"
cd "$REPO_DIR"
python -m fastai.launch nbs/examples/train_imagenette.py \
    --woof "$WOOF" --size "$SIZE" --epochs "$EPOCHS" --bs "$BS" --lr "$LR" \
    --runs "$RUNS" --fp16 --opt ranger --sa --arch xresnet50 "$@" \
    2>&1 | tee "$LOG_DIR/${TAG}_$(date +%Y%m%d_%H%M%S).log"

grep -h "accuracy" "$LOG_DIR"/${TAG}_*.log | tail -n "$RUNS" || true
