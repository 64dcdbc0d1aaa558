#!/usr/bin/env bash
# GRPO on GSM8K + MATH with Qwen2.5-7B-Instruct, FSDP actor + vLLM rollout, 2 nodes x 8 GPUs.
#
# Usage (on the head node):
#   bash examples/grpo_trainer/run_qwen2_5_7b_grpo_multinode.sh head
# and on every worker node:
#   HEAD_IP=<head ip> bash examples/grpo_trainer/run_qwen2_5_7b_grpo_multinode.sh worker
set -euo pipefail
set -x

ROLE=${1:-head}
HEAD_IP=${HEAD_IP:-$(hostname -I | awk '{print $1}')}
RAY_PORT=${RAY_PORT:-6379}
DASHBOARD_PORT=${DASHBOARD_PORT:-8265}

NNODES=${NNODES:-2}
# number of GPUs on this machine
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export VLLM_ATTENTION_BACKEND=XFORMERS
export VLLM_USE_V1=0
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=eth0
export GLOO_SOCKET_IFNAME=eth0
export TORCH_NCCL_AVOID_RECORD_STREAMS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export HYDRA_FULL_ERROR=1

MODEL_PATH=${MODEL_PATH:-$HOME/models/Qwen2.5-7B-Instruct}
DATA_DIR=${DATA_DIR:-$HOME/data}
gsm8k_train_path=$DATA_DIR/gsm8k/train.parquet
gsm8k_test_path=$DATA_DIR/gsm8k/test.parquet
math_train_path=$DATA_DIR/math/train.parquet
math_test_path=$DATA_DIR/math/test.parquet

train_files="['$gsm8k_train_path', '$math_train_path']"
test_files="['$gsm8k_test_path', '$math_test_path']"

start_ray() {
    if [ "$ROLE" == "head" ]; then
        ray start --head --node-ip-address="$HEAD_IP" --port=$RAY_PORT \
            --dashboard-host=0.0.0.0 --dashboard-port=$DASHBOARD_PORT \
            --num-gpus "$GPUS_PER_NODE" --disable-usage-stats
    else
        ray start --address="$HEAD_IP:$RAY_PORT" --num-gpus "$GPUS_PER_NODE" --block
    fi
}

wait_for_nodes() {
    # wait until every node has registered its GPUs with the head
    local expected=$((NNODES * GPUS_PER_NODE))
    for _ in $(seq 1 60); do
        local have
        have=$(python3 -c "import ray; ray.init(address='auto', logging_level='ERROR'); print(int(ray.cluster_resources().get('GPU', 0)))")
        if [ "$have" -ge "$expected" ]; then
            return 0
        fi
        echo "waiting for GPUs: $have / $expected"
        sleep 10
    done
    echo "timed out waiting for the ray cluster" >&2
    exit 1
}

start_ray
if [ "$ROLE" != "head" ]; then
    exit 0
fi
wait_for_nodes

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$train_files" \
    data.val_files="$test_files" \
    data.train_batch_size=1024 \
    data.max_prompt_length=1024 \
    data.max_response_length=2048 \
    data.filter_overlong_prompts=True \
    data.truncation='error' \
    actor_rollout_ref.model.path=$MODEL_PATH \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.model.use_liger=True \
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \
    actor_rollout_ref.actor.use_dynamic_bsz=True \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.actor.kl_loss_type=low_var_kl \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.actor.use_torch_compile=True \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.actor.fsdp_config.param_offload=False \
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=False \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.enforce_eager=False \
    actor_rollout_ref.rollout.free_cache_engine=True \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=32 \
    actor_rollout_ref.ref.fsdp_config.param_offload=True \
    algorithm.use_kl_in_reward=False \
    trainer.critic_warmup=0 \
    trainer.logger=['console','wandb'] \
    trainer.project_name='verl_grpo_example_gsm8k_math' \
    trainer.experiment_name='qwen2_5_7b_function_rm' \
    trainer.n_gpus_per_node=$GPUS_PER_NODE \
    trainer.nnodes=$NNODES \
    trainer.save_freq=20 \
    trainer.test_freq=5 \
    trainer.total_epochs=15 "${@:2}" 2>&1 | tee verl_grpo_qwen2_5_7b.log
