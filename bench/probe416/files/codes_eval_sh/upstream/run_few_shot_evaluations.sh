set -e

# few-shot evaluation of CodeS on Spider dev and BIRD dev (one GPU per run)
# usage: bash run_few_shot_evaluations.sh <gpu_id>
GPU=${1:-0}
export CUDA_VISIBLE_DEVICES=$GPU

for size in 1b 3b 7b 15b
do
    # Spider dev, 1/3/5-shot
    for shot in 1 3 5
    do
        python -u text2sql_few_shot.py \
            --llm_path seeklhy/codes-$size \
            --sic_path ./sic_ckpts/sic_spider \
            --table_num 6 --column_num 10 \
            --dataset_path ./data/sft_spider_dev_text2sql.json \
            --demonstration_set_path ./data/sft_spider_train_text2sql.json \
            --num_of_demonstrations $shot \
            --max_tokens 4096 --max_new_tokens 256
    done

    # BIRD dev with external knowledge, 1/3/5-shot
    for shot in 1 3 5
    do
        python -u text2sql_few_shot.py \
            --llm_path seeklhy/codes-$size \
            --sic_path ./sic_ckpts/sic_bird_with_evidence \
            --table_num 6 --column_num 10 \
            --dataset_path ./data/sft_bird_with_evidence_dev_text2sql.json \
            --demonstration_set_path ./data/sft_bird_with_evidence_train_text2sql.json \
            --num_of_demonstrations $shot \
            --max_tokens 8192 --max_new_tokens 256
    done
done
