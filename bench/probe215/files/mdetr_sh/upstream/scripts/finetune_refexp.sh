#!/usr/bin/env bash
# Fine-tune the pre-trained MDETR checkpoints on RefCOCO / RefCOCO+ / RefCOCOg.
# Usage: bash scripts/finetune_refexp.sh refcoco r101 [extra main.py args]
# Paper numbers were obtained on 2 nodes x 8 V100-32GB; a single 8-GPU node works with --batch_size 4.
set -e

DATASET=${1:-refcoco}
BACKBONE=${2:-r101}
shift 2 || true

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4
NGPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)

case ${BACKBONE} in
  r101)
    PRETRAINED=https://zenodo.org/record/4721981/files/pretrained_resnet101_checkpoint.pth
    BACKBONE_ARGS=""
    ;;
  enb3)
    PRETRAINED=https://zenodo.org/record/4721981/files/pretrained_EB3_checkpoint.pth
    BACKBONE_ARGS="--backbone timm_tf_efficientnet_b3_ns"
    ;;
  *)
    echo "unknown backbone ${BACKBONE}"; exit 1
    ;;
esac

OUT=checkpoints/${DATASET}_${BACKBONE}
mkdir -p ${OUT}

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --use_env main.py \
    --dataset_config configs/${DATASET}.json \
    --batch_size 4 \
    --load ${PRETRAINED} \
    ${BACKBONE_ARGS} \
    --ema --text_encoder_lr 1e-5 --lr 5e-5 \
    --output-dir ${OUT} "$@" 2>&1 | tee ${OUT}/train.log

# evaluation on the test splits with the EMA weights
for SPLIT in testA testB; do
  if [ "${DATASET}" = "refcocog" ]; then SPLIT=test; fi
  python -m torch.distributed.launch --nproc_per_node=${NGPUS} --use_env main.py \
      --dataset_config configs/${DATASET}.json \
      --batch_size 4 ${BACKBONE_ARGS} \
      --resume ${OUT}/BEST_checkpoint.pth \
      --ema --eval --test --test_type ${SPLIT}
  if [ "${DATASET}" = "refcocog" ]; then break; fi
done
