#!/bin/bash
# Fine-tune an SSL encoder for SER on one node.
#   bash scripts/run_ser.sh hubert_large msp 4
# Tested on 4x A100-80G (CUDA 12.1, driver 535).

MODEL=${1:-hubert_large}
CORPUS=${2:-msp}
NGPU=${3:-4}

case ${MODEL} in
  wav2vec2_base) CKPT=facebook/wav2vec2-base ;;
  wav2vec2_large) CKPT=facebook/wav2vec2-large-lv60 ;;
  hubert_large) CKPT=facebook/hubert-large-ll60k ;;
  wavlm_large) CKPT=microsoft/wavlm-large ;;
  *) echo "unknown model ${MODEL}"; exit 1 ;;
esac

OUT=exp/${MODEL}_${CORPUS}
mkdir -p ${OUT}

export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=ser-${CORPUS}

# effective batch = NGPU * 8 * 4 = 128 utterances
torchrun --standalone --nnodes 1 --nproc_per_node ${NGPU} src/run_emotion_recognition.py \
  --model_name_or_path ${CKPT} \
  --train_file data/${CORPUS}/train.csv \
  --validation_file data/${CORPUS}/dev.csv \
  --test_file data/${CORPUS}/test.csv \
  --output_dir ${OUT} \
  --overwrite_output_dir \
  --do_train --do_eval --do_predict \
  --pooling_mode attentive \
  --use_weighted_layer_sum True \
  --attn_implementation flash_attention_2 \
  --learning_rate 3e-5 \
  --warmup_ratio 0.1 \
  --num_train_epochs 20 \
  --per_device_train_batch_size 8 \
  --per_device_eval_batch_size 8 \
  --gradient_accumulation_steps 4 \
  --gradient_checkpointing True \
  --fp16 \
  --tf32 True \
  --dataloader_num_workers 8 \
  --ddp_backend nccl \
  --evaluation_strategy epoch \
  --save_strategy epoch \
  --save_total_limit 2 \
  --load_best_model_at_end True \
  --metric_for_best_model uar \
  --logging_steps 20 \
  --report_to wandb \
  --seed 42 2>&1 | tee ${OUT}/train.log

python src/predict.py --model ${OUT} --input data/${CORPUS}/test.csv --out ${OUT}/test_pred.csv --half
