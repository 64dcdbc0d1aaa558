# !/bin/bash
set -x

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

nnodes=${nnodes:-1}
nproc_per_node=${nproc_per_node:-8}
node_rank=${node_rank:-0}
master_addr=${master_addr:-127.0.0.1}
master_port=${master_port:-12345}

torchrun \
--nnodes=$nnodes --nproc_per_node=$nproc_per_node --node_rank=$node_rank \
--master_addr=$master_addr --master_port=$master_port \
autoregressive/train/train_t2i_fsdp.py \
--data-path /path/to/laion_coco50M \
--t5-path /path/to/laion_coco50M_flan_t5_xl \
--dataset t2i_code \
--image-size 256 \
--gpt-model GPT-XL \
--data-parallel fsdp \
--mixed-precision bf16 \
"$@"
