set -e

# train schema item classifier
python -u schema_item_classifier.py \
    --batch_size 32 \
    --gradient_descent_step 1 \
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

# train text2sql-t5-3b model (needs a single 80GB A100)
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
