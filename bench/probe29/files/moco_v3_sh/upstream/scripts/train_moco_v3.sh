#!/bin/bash
# MoCo v3 ViT-Small, 300 epochs, 1 node x 8 GPUs; then linear classification on a single GPU.
DATA=${DATA:-/datasets/imagenet}
EXP=${EXP:-./exp/mocov3_vits}
mkdir -p ${EXP}

python main_moco.py \
  -a vit_small -b 1024 \
  --optimizer=adamw --lr=1.5e-4 --weight-decay=.1 \
  --epochs=300 --warmup-epochs=40 \
  --stop-grad-conv1 --moco-m-cos --moco-t=.2 \
  --dist-url 'tcp://localhost:10001' \
  --dist-backend 'nccl' \
  --multiprocessing-distributed --world-size 1 --rank 0 \
  ${DATA} 2>&1 | tee ${EXP}/pretrain.log

# linear probe: one GPU is enough for the frozen backbone
CUDA_VISIBLE_DEVICES=0 python main_lincls.py \
  -a vit_small --lr=3 \
  --gpu 0 \
  --pretrained ${EXP}/checkpoint_0299.pth.tar \
  ${DATA} 2>&1 | tee ${EXP}/lincls.log

# k-NN on all GPUs of the node
python -m torch.distributed.launch --nproc_per_node=8 eval_knn.py \
  --pretrained_weights ${EXP}/checkpoint_0299.pth.tar \
  --checkpoint_key state_dict --data_path ${DATA}
