#!/bin/bash
# DeepSpeed-Ulysses: GPT-6.7B, 128K context, sequence parallel degree 8,
# ZeRO-3 with optimizer offload to host memory, full activation checkpointing in CPU.
dir=`pwd`
###############################################################################
### Main configs
seq_len=131072
global_batch_size=8
lr=1.2e-4
min_lr=1.0e-6
init_std=0.009

model_size=6.7
num_layers=32
hidden_size=4096
num_attn_heads=32

## Sequence parallel degree (DeepSpeed-Ulysses): heads must be divisible by it
sp_size=8
## ZeRO stage; 3 + offload lets the 128K activations fit on 80GB cards
zero_stage=3
offload_optimizer=true

train_tokens_in_billion=300
train_tokens=$((${train_tokens_in_billion} * 1000000000))
train_samples=$(( 300 * 1000000000 * 2 / ${seq_len} ))
exit_duration=300000000000000

###############################################################################
### Hardware / launcher
num_gpus_pernode=8
num_node=$(( ${NUM_NODES:-1} ))
num_gpus=$((${num_gpus_pernode} * ${num_node}))

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_NET_GDR_LEVEL=2
export NCCL_SOCKET_IFNAME=bond0
export DS_ACCELERATOR=cuda

###############################################################################
### Output and data
data_path="${dir}/../data/pile_text_document"
vocab_path="${dir}/../data/gpt2-vocab.json"
merge_path="${dir}/../data/gpt2-merges.txt"
jobname="gpt_${model_size}B_tok${train_tokens_in_billion}B_sp${sp_size}_z${zero_stage}_seq${seq_len}"
output_home="${dir}/output"
log_path="${output_home}/log/"
checkpoint_path="${output_home}/checkpoint/${jobname}"
mkdir -p ${log_path} ${checkpoint_path}

config_json="ds_config_gbs${global_batch_size}_z${zero_stage}_sp${sp_size}.json"
cat <<EOT > $config_json
{
  "train_batch_size": ${global_batch_size},
  "train_micro_batch_size_per_gpu": 1,
  "steps_per_print": 10,
  "zero_optimization": {
    "stage": ${zero_stage},
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "stage3_max_live_parameters": 3e9,
    "stage3_prefetch_bucket_size": 5e8
  },
  "gradient_clipping": 1.0,
  "bf16": {"enabled": true},
  "wall_clock_breakdown": false
}
EOT

megatron_options=" \
    --override-opt_param-scheduler \
    --adam-beta1 0.9 \
    --adam-beta2 0.95 \
    --tensor-model-parallel-size 1 \
    --ds-sequence-parallel-size ${sp_size} \
    --init-method-std ${init_std} \
    --lr-decay-tokens ${train_tokens} \
    --lr ${lr} \
    --min-lr ${min_lr} \
    --lr-decay-style cosine \
    --micro-batch-size 1 \
    --global-batch-size ${global_batch_size} \
    --num-layers ${num_layers} \
    --hidden-size ${hidden_size} \
    --num-attention-heads ${num_attn_heads} \
    --seq-length ${seq_len} \
    --max-position-embeddings ${seq_len} \
    --train-tokens ${train_tokens} \
    --train-samples ${train_samples} \
    --exit-duration-in-mins ${exit_duration} \
    --data-path ${data_path} \
    --vocab-file ${vocab_path} \
    --merge-file ${merge_path} \
    --save ${checkpoint_path} \
    --bf16 \
    --use-flash-attn-v2 \
    --distributed-backend nccl \
    --no-async-tensor-model-parallel-allreduce \
    --checkpoint-activations \
    --deepspeed-activation-checkpointing \
    --checkpoint-in-cpu \
    --partition-activations \
    --tensorboard-dir ${output_home}/tensorboard/${jobname}"

deepspeed_options=" \
    --deepspeed \
    --deepspeed_config ${config_json} \
    --zero-stage ${zero_stage} \
    --pipeline-model-parallel-size 1 \
    --no-pipeline-parallel"
if [ "${offload_optimizer}" = "true" ]; then
    deepspeed_options="${deepspeed_options} --cpu-optimizer"
fi

deepspeed --num_nodes ${num_node} --num_gpus ${num_gpus_pernode} ${dir}/../../pretrain_gpt.py \
    ${megatron_options} ${deepspeed_options} &>> ${log_path}/${jobname}_${HOSTNAME}.log
