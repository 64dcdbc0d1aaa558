#!/bin/bash
# Llama-2-7B context extension on a single 8x A100-80GB node.
# Stage 1: 32K with plain data parallel, stage 2: 64K with zigzag ring attention,
# stage 3: 512K / 1M with zigzag ring attention + DeepSpeed ZeRO-3 CPU offload.

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export WANDB_PROJECT=EasyContext
export TOKENIZERS_PARALLELISM=false

accelerate launch \
--config_file  accelerate_configs/single_node.yaml \
train.py \
--batch-size 1 \
--gradient-accumulate-every 4  \
--output-dir  ./output/7B_32K_bs_1M_rope_1M_step_1000_lr_2e-5 \
--seed 2022 \
--wandb EasyContext \
--max-train-steps 1000  \
--learning-rate 2e-5  \
--dataset yaofu/slimpajama-per-source-length-upsample \
--model meta-llama/Llama-2-7b-hf  \
--seq-length 32768 \
--rope-theta 1000000 \
--parallel_mode data_parallel

accelerate launch \
--config_file  accelerate_configs/single_node.yaml \
train.py \
--batch-size 1 \
--gradient-accumulate-every 2  \
--output-dir  ./output/7B_64K_bs_1M_rope_5M_step_1000_lr_2e-5 \
--seed 2022 \
--wandb EasyContext \
--max-train-steps 1000  \
--learning-rate 2e-5  \
--dataset PY007/slimpajama_llama_tokenized_upsample_4096_chunk_256K \
--model output/7B_32K_bs_1M_rope_1M_step_1000_lr_2e-5  \
--seq-length 65536 \
--rope-theta 5000000 \
--parallel_mode zigzag_ring_attn

# 512K needs ZeRO-3 with optimizer + parameter offload; peak ~74GB/GPU
accelerate launch \
--config_file  accelerate_configs/single_node.yaml \
train.py \
--batch-size 1 \
--gradient-accumulate-every 4  \
--output-dir  ./output/7B_0.5M_bs_1M_rope_250M_step_90_lr_2e-5 \
--seed 2026 \
--wandb EasyContext \
--max-train-steps 90  \
--learning-rate 2e-5  \
--dataset PY007/slimpajama_llama_tokenized_upsample_4096_chunk_1M \
--model output/7B_64K_bs_1M_rope_5M_step_1000_lr_2e-5  \
--seq-length 512000 \
--rope-theta 250000000 \
--parallel_mode zigzag_ring_attn

python eval_needle.py --help > /dev/null 2>&1 || echo "install requirements first: pip install -r requirements.txt"
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
