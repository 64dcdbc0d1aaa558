#!/bin/bash
# PatchTST on ETTh1, four prediction horizons.
# Usage: bash ./scripts/long_term_forecast/ETT_script/PatchTST_ETTh1.sh
# Set GPU_IDS to run on another card, e.g. GPU_IDS=1 bash ...

export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0}

model_name=PatchTST
root=./dataset/ETT-small/
log_dir=./logs/LongForecasting/${model_name}
mkdir -p ${log_dir}

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ${root} \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_96 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 48 \
  --pred_len 96 \
  --e_layers 1 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des 'Exp' \
  --n_heads 2 \
  --use_gpu True \
  --gpu 0 \
  --itr 1 2>&1 | tee ${log_dir}/ETTh1_96_96.log

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ${root} \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_192 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 48 \
  --pred_len 192 \
  --e_layers 1 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des 'Exp' \
  --n_heads 8 \
  --use_amp \
  --itr 1 2>&1 | tee ${log_dir}/ETTh1_96_192.log

# the two long horizons are trained data-parallel on four cards
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ${root} \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_336 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 48 \
  --pred_len 336 \
  --e_layers 1 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des 'Exp' \
  --n_heads 8 \
  --use_multi_gpu --devices 0,1,2,3 \
  --itr 1 2>&1 | tee ${log_dir}/ETTh1_96_336.log

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ${root} \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_720 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 48 \
  --pred_len 720 \
  --e_layers 1 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des 'Exp' \
  --n_heads 16 \
  --batch_size 16 \
  --itr 1 2>&1 | tee ${log_dir}/ETTh1_96_720.log
