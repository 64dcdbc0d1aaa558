#!/bin/bash
# Train the Molecular Transformer on USPTO (MIT / STEREO, separated or mixed).
#
# usage: bash scripts/train_uspto.sh [dataset] [n_gpus]
#   dataset  one of MIT_mixed MIT_separated STEREO_mixed STEREO_separated
#   n_gpus   number of GPUs to train on (default 4)
#
# The hyper-parameters are the ones reported in the paper; with 4 x V100 one
# run takes roughly 2 days for 500k steps.
set -e

dataset=${1:-STEREO_mixed}
n_gpus=${2:-4}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=4

ranks=$(seq -s ' ' 0 $((n_gpus - 1)))

data_dir=data/${dataset}
ckpt_dir=experiments/checkpoints/${dataset}
log_dir=experiments/logs
mkdir -p "${ckpt_dir}" "${log_dir}"

if [ ! -f "${data_dir}/${dataset}.train.pt" ] && [ ! -f "${data_dir}/${dataset}.train.0.pt" ]; then
    echo "preprocessing ${dataset} ..."
    python preprocess.py -train_src ${data_dir}/src-train.txt \
                         -train_tgt ${data_dir}/tgt-train.txt \
                         -valid_src ${data_dir}/src-val.txt \
                         -valid_tgt ${data_dir}/tgt-val.txt \
                         -save_data ${data_dir}/${dataset} \
                         -src_seq_length 1000 -tgt_seq_length 1000 \
                         -src_vocab_size 1000 -tgt_vocab_size 1000 -share_vocab
fi

echo "training on ${n_gpus} GPU(s): ranks ${ranks}"
python train.py -data ${data_dir}/${dataset} \
                -save_model ${ckpt_dir}/${dataset}_model \
                -seed 42 -gpu_ranks ${ranks} -save_checkpoint_steps 10000 -keep_checkpoint 20 \
                -train_steps 500000 -param_init 0 -param_init_glorot -max_generator_batches 32 \
                -batch_size 4096 -batch_type tokens -normalization tokens -max_grad_norm 0 -accum_count 4 \
                -optim adam -adam_beta1 0.9 -adam_beta2 0.998 -decay_method noam -warmup_steps 8000 \
                -learning_rate 2 -label_smoothing 0.0 -report_every 1000 \
                -layers 4 -rnn_size 256 -word_vec_size 256 -encoder_type transformer -decoder_type transformer \
                -dropout 0.1 -position_encoding -share_embeddings \
                -global_attention general -global_attention_function softmax -self_attn_type scaled-dot \
                -heads 8 -transformer_ff 2048 \
                -world_size ${n_gpus} -gpu_backend nccl -master_port 10001 \
                -log_file ${log_dir}/train_${dataset}.log

# average the last 20 checkpoints (what the paper reports)
python tools/average_models.py -models $(ls -t ${ckpt_dir}/${dataset}_model_step_*.pt | head -n 20) \
                               -output experiments/models/${dataset}_model_average.pt
