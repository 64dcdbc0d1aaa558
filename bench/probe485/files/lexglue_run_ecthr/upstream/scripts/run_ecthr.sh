GPU_NUMBER=0
MODEL_NAME='nlpaueb/legal-bert-base-uncased'
LOWER_CASE='True'
BATCH_SIZE=2
ACCUMULATION_STEPS=4
TASK='ecthr_a'

# Run the same configuration with 5 seeds; logs go to logs/${TASK}/${MODEL_NAME}/seed_${SEED}
for SEED in 1 2 3 4 5
do
  CUDA_VISIBLE_DEVICES=${GPU_NUMBER} python experiments/ecthr.py \
    --model_name_or_path ${MODEL_NAME} \
    --do_lower_case ${LOWER_CASE} \
    --task ${TASK} \
    --output_dir logs/${TASK}/${MODEL_NAME}/seed_${SEED} \
    --do_train \
    --do_eval \
    --do_pred \
    --overwrite_output_dir \
    --load_best_model_at_end \
    --metric_for_best_model micro-f1 \
    --greater_is_better True \
    --evaluation_strategy epoch \
    --save_strategy epoch \
    --save_total_limit 5 \
    --num_train_epochs 20 \
    --learning_rate 3e-5 \
    --per_device_train_batch_size ${BATCH_SIZE} \
    --per_device_eval_batch_size ${BATCH_SIZE} \
    --seed ${SEED} \
    --fp16 \
    --fp16_full_eval \
    --gradient_accumulation_steps ${ACCUMULATION_STEPS} \
    --eval_accumulation_steps ${ACCUMULATION_STEPS}
done
