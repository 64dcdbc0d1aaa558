#!/usr/bin/env bash
# Fine-tune a seq2seq model with finetune.py, then score the best checkpoint with one process per GPU.
# the proper usage is documented in the README, you need to specify data_dir, output_dir and model_name_or_path
# run ./finetune.sh --help to see all the possible options
export PYTHONPATH="../":"${PYTHONPATH}"
export CUDA_VISIBLE_DEVICES=0,1
export TOKENIZERS_PARALLELISM=false

python finetune.py \
    --learning_rate=3e-5 \
    --fp16 \
    --n_gpu 2 \
    --do_train \
    --do_predict \
    --n_val 1000 \
    --val_check_interval 0.1 \
    "$@"

# distributed eval of the exported best checkpoint (uses NCCL under the hood)
python -m torch.distributed.launch --nproc_per_node=2 run_distributed_eval.py \
    --model_name "$OUTPUT_DIR/best_tfmr" \
    --data_dir "$DATA_DIR" \
    --save_dir "$OUTPUT_DIR/dist_eval" \
    --fp16 --bs 32
