#!/bin/bash
# CF-Font training, three stages:
#   1) pretrain DG-Font backbone             (main.py, no CF)
#   2) compute content-fusion weights         (cal_cf_weight.py)
#   3) finetune with CF + projected char loss (main.py --cf --pcl)
#
# Usage: bash scripts/train_cf.sh <stage> [gpus]
#   GPUs are given the usual way (comma separated ids); stage 1/3 use DDP on all of them.

STAGE=$1
GPUS=${2:-"0,1,2,3,4,5,6,7"}
NGPU=$(echo "$GPUS" | awk -F',' '{print NF}')

DATA_DIR=data/imgs_ttf_400
BASIS=data/basis_10.txt
PRETRAIN_NAME=CF_pretrain
CF_NAME=CF_finetune

export CUDA_VISIBLE_DEVICES=$GPUS
export NCCL_P2P_DISABLE=1          # some 3090 boxes hang in P2P without this
export NCCL_IB_DISABLE=1

echo "stage=$STAGE  gpus=$GPUS  ($NGPU)"

case $STAGE in
  1)
    python main.py --gpu $GPUS --data_path $DATA_DIR --output_k 400 --batch_size 32 \
      --iters 1000 --epochs 200 --model_name $PRETRAIN_NAME --ddp --port 8891 \
      --w_off 0.5 --w_vec 0.01
    ;;
  2)
    # single GPU is enough; the basis embeddings (10 fonts x 400 chars) fit easily
    python cal_cf_weight.py --model_path logs/${PRETRAIN_NAME}/model_200.ckpt \
      --basis_list $BASIS --data_path $DATA_DIR --save_path data/cf_weights_t001 \
      --t 0.01 --gpu 0
    ;;
  3)
    python main.py --gpu $GPUS --data_path $DATA_DIR --output_k 400 --batch_size 32 \
      --iters 1000 --epochs 210 --model_name $CF_NAME --ddp --port 8892 \
      --load_model $PRETRAIN_NAME --cf --cf_weight_path data/cf_weights_t001 \
      --basis_list $BASIS --pcl --w_pcl 0.1 --dist_backend nccl
    ;;
  *)
    echo "stage must be 1, 2 or 3"; exit 1
    ;;
esac
