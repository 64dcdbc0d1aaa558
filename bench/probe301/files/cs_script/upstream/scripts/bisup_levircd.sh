#!/usr/bin/env bash
export CUDA_VISIBLE_DEVICES=0,1,2,3
NUM_GPUS=4
export PYTHONPATH=$PYTHONPATH:`pwd`
# the lab nodes have no InfiniBand; NCCL otherwise hangs probing for it
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

config_path='levircd.r50_farseg_changestar_bisup'
model_dir='./log/bisup-LEVIRCD/r50'

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port 9996 ./train_sup_change.py \
  --config_path=${config_path} \
  --model_dir=${model_dir} \
  --trainer apex_ddp \
  learning_rate.params.max_iters 40000 \
  train.num_iters 40000 \
  data.train.params.batch_size 16

# evaluation on the LEVIR-CD test split (single GPU)
CUDA_VISIBLE_DEVICES=0 python ./eval_sup_change.py \
  --config_path=${config_path} \
  --model_dir=${model_dir} \
  --ckpt_path=${model_dir}/model-40000.pth
