#!/bin/bash
# EfficientViT ImageNet classification training (single node).
#
#   bash scripts/train_cls_imagenet.sh b1 0,1,2,3,4,5,6,7
#   bash scripts/train_cls_imagenet.sh l2 0,1,2,3
#
# The yaml base_lr is per GPU; the effective lr is scaled by the number of workers.
set -e

MODEL=${1:-b1}
GPUS=${2:-0,1,2,3,4,5,6,7}
NGPU=$(echo "$GPUS" | tr ',' '\n' | wc -l)
EXP=.exp/cls/imagenet/${MODEL}_r288

export CUDA_VISIBLE_DEVICES=$GPUS
export TORCH_CUDNN_V8_API_ENABLED=1

case "$MODEL" in
    b1|b2|b3) AMP=fp16 ;;
    l1|l2|l3) AMP=bf16 ;;
    *) echo "unknown model $MODEL"; exit 1 ;;
esac

torchpack dist-run -np "$NGPU" \
    python train_cls_model.py "configs/cls/imagenet/${MODEL}.yaml" \
    --data_provider.image_size "[128,160,192,224,256,288]" \
    --run_config.eval_image_size "[288]" \
    --amp "$AMP" \
    --path "$EXP"

# evaluation of the final checkpoint (single GPU is enough)
python applications/efficientvit_cls/eval_efficientvit_cls_model.py \
    --model "efficientvit-${MODEL}-r288" \
    --image_size 288 \
    --gpu "${GPUS%%,*}" \
    --weight_url "$EXP/checkpoint/model_best.pt"
