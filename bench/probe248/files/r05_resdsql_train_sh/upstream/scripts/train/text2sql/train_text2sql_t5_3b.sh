set -e

# sanity check: t5-3b with batch size 6 needs a card with >= 40GB memory (A100 40G/80G)
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

export TOKENIZERS_PARALLELISM=false
# uncomment to get synchronous kernel launches when debugging device-side asserts
# export CUDA_LAUNCH_BLOCKING=1

# train schema item classifier
python -u schema_item_classifier.py \
    --batch_size 16 \
    --gradient_descent_step 2 \
    --device "0" \
    --learning_rate 1e-5 \
    --gamma 2.0 \
    --alpha 0.75 \
    --epochs 128 \
    --patience 16 \
    --seed 42 \
    --save_path "./models/text2sql_schema_item_classifier" \
    --tensorboard_save_path "./tensorboard_log/text2sql_schema_item_classifier" \
    --train_filepath "./data/preprocessed_data/preprocessed_train_spider.json" \
    --dev_filepath "./data/preprocessed_data/preprocessed_dev.json" \
    --model_name_or_path "roberta-large" \
    --use_contents \
    --add_fk_info \
    --mode "train"

# generate text2sql training dataset with noise_rate 0.2
python text2sql_data_generator.py \
    --input_dataset_path "./data/preprocessed_data/preprocessed_train_spider.json" \
    --output_dataset_path "./data/preprocessed_data/resdsql_train_spider.json" \
    --topk_table_num 4 \
    --topk_column_num 5 \
    --mode "train" \
    --noise_rate 0.2 \
    --use_contents \
    --add_fk_info \
    --output_skeleton \
    --target_type "sql"

# train text2sql-t5-3b model
python -u text2sql.py \
    --batch_size 6 \
    --gradient_descent_step 16 \
    --device "0" \
    --learning_rate 5e-5 \
    --epochs 128 \
    --seed 42 \
    --save_path "./models/text2sql-t5-3b" \
    --tensorboard_save_path "./tensorboard_log/text2sql-t5-3b" \
    --model_name_or_path "t5-3b" \
    --use_adafactor \
    --mode train \
    --train_filepath "./data/preprocessed_data/resdsql_train_spider.json"

# select the best text2sql-t5-3b ckpt
python -u evaluate_text2sql_ckpts.py \
    --batch_size 32 \
    --device "0" \
    --seed 42 \
    --save_path "./models/text2sql-t5-3b" \
    --eval_results_path "./eval_results/text2sql-t5-3b" \
    --mode eval \
    --dev_filepath "./data/preprocessed_data/resdsql_dev.json" \
    --original_dev_filepath "./data/spider/dev.json" \
    --db_path "./database" \
    --num_beams 8 \
    --num_return_sequences 8 \
    --target_type "sql"
