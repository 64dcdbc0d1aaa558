#!/bin/bash
# BERT-large (345M) pre-training with Megatron-LM: 2-way tensor parallel,
# data parallel over the rest of the node. Launch once per node.

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1

GPUS_PER_NODE=8
# Change for multinode config
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6000}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))

DATA_PATH=${DATA_PATH:-data/my-bert_text_sentence}
VOCAB_FILE=${VOCAB_FILE:-data/bert-large-cased-vocab.txt}
CHECKPOINT_PATH=${CHECKPOINT_PATH:-checkpoints/bert_345m}
TENSORBOARD_DIR=${TENSORBOARD_DIR:-runs/bert_345m}

# sanity check: all GPUs visible and idle
nvidia-smi -L | wc -l | xargs -I{} test {} -ge $GPUS_PER_NODE || {
    echo "expected $GPUS_PER_NODE GPUs on $(hostname)"; exit 1; }
nvcc --version | grep release

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

BERT_ARGS="--num-layers 24 \
    --hidden-size 1024 \
    --num-attention-heads 16 \
    --seq-length 512 \
    --max-position-embeddings 512 \
    --micro-batch-size 4 \
    --global-batch-size 256 \
    --lr 0.0001 \
    --train-iters 1000000 \
    --lr-decay-iters 990000 \
    --lr-decay-style linear \
    --min-lr 1.0e-5 \
    --weight-decay 1e-2 \
    --lr-warmup-fraction .01 \
    --clip-grad 1.0 \
    --fp16 \
    --initial-loss-scale 65536"

PARALLEL_ARGS="--tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 1 \
    --DDP-impl local \
    --distributed-backend nccl \
    --use-contiguous-buffers-in-local-ddp"

KERNEL_ARGS="--masked-softmax-fusion \
    --bias-gelu-fusion \
    --bias-dropout-fusion \
    --gradient-accumulation-fusion \
    --checkpoint-activations"

DATA_ARGS="--data-path $DATA_PATH \
    --vocab-file $VOCAB_FILE \
    --data-impl mmap \
    --split 949,50,1"

OUTPUT_ARGS="--log-interval 100 \
    --save-interval 10000 \
    --eval-interval 1000 \
    --eval-iters 10 \
    --tensorboard-dir $TENSORBOARD_DIR"

python -m torch.distributed.launch $DISTRIBUTED_ARGS \
       pretrain_bert.py \
       $BERT_ARGS \
       $PARALLEL_ARGS \
       $KERNEL_ARGS \
       $DATA_ARGS \
       $OUTPUT_ARGS \
       --save $CHECKPOINT_PATH \
       --load $CHECKPOINT_PATH
