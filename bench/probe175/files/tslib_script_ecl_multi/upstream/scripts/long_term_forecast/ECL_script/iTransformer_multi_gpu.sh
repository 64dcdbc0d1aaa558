#!/bin/bash
# ECL (321 variates) is too large for one 24GB card at d_model 512; split the batch over 4 GPUs.
# GPUs 0-3 on this box are reserved for the inference service, so we take 4-7
# (inside the process they are renumbered 0-3, hence --devices 0,1,2,3).
export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=8

model_name=iTransformer

for pred_len in 96 192 336 720
do
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_96_$pred_len \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 48 \
  --pred_len $pred_len \
  --e_layers 3 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321 \
  --des 'Exp' \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 16 \
  --learning_rate 0.0005 \
  --num_workers 8 \
  --use_multi_gpu \
  --devices 0,1,2,3 \
  --itr 1 2>&1 | tee logs/ECL_${model_name}_${pred_len}.log
done

nvidia-smi --query-gpu=index,memory.used --format=csv
