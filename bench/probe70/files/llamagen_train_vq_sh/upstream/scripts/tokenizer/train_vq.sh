#!/bin/bash
# Launch VQ tokenizer training (LlamaGen-style) on one or more 8-GPU nodes.
#
#   single node : bash scripts/tokenizer/train_vq.sh --cloud-save-path /ckpt --data-path /data/imagenet/train
#   multi node  : nnodes=4 node_rank=$RANK master_addr=$MASTER bash scripts/tokenizer/train_vq.sh ...
set -x

nnodes=${nnodes:-1}
node_rank=${node_rank:-0}
master_addr=${master_addr:-127.0.0.1}
master_port=${master_port:-12345}

# ------------------------------------------------------------------------------ devices
export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}
nproc_per_node=${NPROC_PER_NODE:-$(nvidia-smi -L | wc -l)}

python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0))"

# ------------------------------------------------------------------------------ comms
# InfiniBand fabric on the training cluster
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=bond0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_TIMEOUT=1800

# ------------------------------------------------------------------------------ memory / perf
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export CUDA_DEVICE_MAX_CONNECTIONS=1
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

# ------------------------------------------------------------------------------ logging
LOG_DIR=${LOG_DIR:-logs/tokenizer}
mkdir -p "${LOG_DIR}"
LOG_FILE="${LOG_DIR}/train_vq_node${node_rank}_$(date +%Y%m%d_%H%M%S).log"
echo "nnodes=${nnodes} node_rank=${node_rank} nproc_per_node=${nproc_per_node} master=${master_addr}:${master_port}" | tee "${LOG_FILE}"

# ------------------------------------------------------------------------------ launch
torchrun \
    --nnodes=${nnodes} --nproc_per_node=${nproc_per_node} --node_rank=${node_rank} \
    --master_addr=${master_addr} --master_port=${master_port} \
    tokenizer/tokenizer_image/vq_train.py \
    --vq-model VQ-16 \
    --image-size 256 \
    --global-batch-size 128 \
    --mixed-precision bf16 \
    --ema \
    "$@" 2>&1 | tee -a "${LOG_FILE}"

status=${PIPESTATUS[0]}
if [ "${status}" -ne 0 ]; then
    echo "training failed with status ${status}" | tee -a "${LOG_FILE}"
    nvidia-smi | tee -a "${LOG_FILE}"
fi

# quick reconstruction check on the last checkpoint (rank 0 only)
if [ "${node_rank}" -eq 0 ]; then
    last_ckpt=$(ls -t results_tokenizer_image/*/checkpoints/*.pt 2>/dev/null | head -n 1)
    [ -n "${last_ckpt}" ] && python tokenizer/tokenizer_image/reconstruction_vq_ddp.py --vq-ckpt "${last_ckpt}" --sample-dir samples_recon
fi
exit ${status}
