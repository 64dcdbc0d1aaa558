#!/bin/bash
export LANG=zh_CN.UTF-8
export LANGUAGE=zh_CN:zh:en_US:en
export PATH=/usr/local/miniconda3/bin/:$PATH

DAVAROCR_PATH=/path/to/Davar-Lab-OCR/

cd $DAVAROCR_PATH

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node 8 --master_port=29501 $DAVAROCR_PATH/tools/train.py $DAVAROCR_PATH/demo/table_recognition/lgpma/configs/lgpma_pub.py --no-validate --launcher pytorch
