#!/usr/bin/env bash
# Multi-node SFT launch with DeepSpeed (2 nodes x 8 GPUs).
#   bash scripts/run_sft_ds_multinode.sh /path/to/Yi-34B data/sft.jsonl output/yi34b-sft
set -euxo pipefail

MODEL_PATH=${1:-01-ai/Yi-6B}
DATA_PATH=${2:-data/sft.jsonl}
OUTPUT_DIR=${3:-output/sft}
MASTER_ADDR=${MASTER_ADDR:-10.0.0.11}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=8

mkdir -p "${OUTPUT_DIR}" logs

# ----- hostfile (one line per node, slots = accelerators per node) -----
cat > hostfile <<HOSTS
10.0.0.11 slots=${GPUS_PER_NODE}
10.0.0.12 slots=${GPUS_PER_NODE}
HOSTS

# ----- environment -----
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export WANDB_MODE=offline

# DeepSpeed's pdsh launcher only forwards variables listed in .deepspeed_env
cat > .deepspeed_env <<ENVS
NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
NCCL_SOCKET_IFNAME=bond0
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
ENVS

# sanity check: every node must see its GPUs before we spend 10 minutes loading shards
for host in $(awk '{print $1}' hostfile); do
  ssh "${host}" "nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader" | tee -a logs/gpu_check.log
done

deepspeed --hostfile hostfile \
  --master_addr "${MASTER_ADDR}" --master_port "${MASTER_PORT}" \
  finetune/sft_zero3.py \
  --model_name_or_path "${MODEL_PATH}" \
  --data_path "${DATA_PATH}" \
  --output_dir "${OUTPUT_DIR}" \
  --max_seq_len 4096 \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 8 \
  --learning_rate 1e-5 \
  --num_train_epochs 2 \
  --gradient_checkpointing \
  --ds_config configs/ds_z3_config.json \
  2>&1 | tee "logs/sft_$(date +%Y%m%d_%H%M%S).log"
