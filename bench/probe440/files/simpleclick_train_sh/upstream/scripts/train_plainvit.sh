#!/bin/bash
# Train SimpleClick ViT-B / ViT-L / ViT-H on COCO+LVIS.
# Example: bash scripts/train_plainvit.sh base 4
set -e

SIZE=${1:-base}
NGPUS=${2:-4}
PORT=${PORT:-29500}

case "$SIZE" in
    base)  CFG=models/iter_mask/plainvit_base448_cocolvis_itermask.py;  BS=32 ;;
    large) CFG=models/iter_mask/plainvit_large448_cocolvis_itermask.py; BS=16 ;;
    huge)  CFG=models/iter_mask/plainvit_huge448_cocolvis_itermask.py;  BS=8 ;;
    *) echo "unknown model size $SIZE"; exit 1 ;;
esac

# wait until enough GPUs are idle (shared lab server)
while true; do
    FREE=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '$1 < 1000' | wc -l)
    if [ "$FREE" -ge "$NGPUS" ]; then
        break
    fi
    echo "$(date) only $FREE idle GPUs, waiting..."
    sleep 300
done

export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))
export OMP_NUM_THREADS=8

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${PORT} --use_env train.py ${CFG} \
    --batch-size=${BS} \
    --ngpus=${NGPUS} \
    --workers=8 \
    --upsample=x4 \
    --layerwise-decay \
    --amp \
    --exp-name=plainvit_${SIZE}448
