set -e

# CodeS-1B SFT on BIRD (with external knowledge), 8 x A800-80G
export NCCL_DEBUG=WARN
export TOKENIZERS_PARALLELISM=false

LLM_PATH=seeklhy/codes-1b
DATA=./data/sft_bird_with_evidence_train_text2sql.json
CKPT_DIR=./ckpts/codes-1b-bird-with-evidence

accelerate launch --main_process_port 10000 --config_file ./accelerate_config_bf16.yaml train_causal_lm.py \
    --per_device_train_batch_size 4 \
    --block_size 4096 \
    --seed 42 \
    --pretrained_model_name_or_path $LLM_PATH \
    --epochs 4 \
    --lr 5e-6 \
    --warmup_ratio 0.05 \
    --checkpointing_steps 100000 \
    --tensorboard_log_dir ./train_logs/codes-1b-bird-with-evidence \
    --mode sft \
    --output_ckpt_dir $CKPT_DIR \
    --text2sql_data_dir $DATA \
    --table_num 6 \
    --column_num 10
