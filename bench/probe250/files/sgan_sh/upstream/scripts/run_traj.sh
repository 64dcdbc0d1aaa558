#!/bin/bash
# Train Social-GAN generators on all five ETH/UCY splits.
# Usage: bash scripts/run_traj.sh <gpu_id> [pred_len]
#
# Each split runs as its own process pinned to the given GPU; the
# pooling / noise settings are the ones reported as "SGAN-20VP-20" in the paper.

set -e

GPU=${1:-0}
PRED_LEN=${2:-8}
OUT_DIR=./checkpoints/pred_len_${PRED_LEN}
mkdir -p ${OUT_DIR}

export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=4

for DSET in eth hotel univ zara1 zara2; do
  echo "=== training ${DSET} (pred_len=${PRED_LEN}) on gpu ${GPU} ==="
  python scripts/train.py \
    --dataset_name ${DSET} \
    --delim tab \
    --d_type 'local' \
    --pred_len ${PRED_LEN} \
    --encoder_h_dim_g 32 \
    --encoder_h_dim_d 64 \
    --decoder_h_dim_g 32 \
    --embedding_dim 16 \
    --bottleneck_dim 8 \
    --mlp_dim 64 \
    --num_layers 1 \
    --noise_dim 8 \
    --noise_type gaussian \
    --noise_mix_type global \
    --pool_every_timestep 0 \
    --l2_loss_weight 1 \
    --batch_norm 0 \
    --dropout 0 \
    --batch_size 32 \
    --g_learning_rate 1e-3 \
    --g_steps 1 \
    --d_learning_rate 1e-3 \
    --d_steps 2 \
    --checkpoint_every 10 \
    --print_every 50 \
    --num_iterations 20000 \
    --num_epochs 500 \
    --pooling_type 'pool_net' \
    --clipping_threshold_g 1.5 \
    --best_k 10 \
    --gpu_num ${GPU} \
    --use_gpu 1 \
    --output_dir ${OUT_DIR} \
    --checkpoint_name ${DSET}_${PRED_LEN} \
    --restore_from_checkpoint 0 2>&1 | tee ${OUT_DIR}/${DSET}.log
done

# quick sanity check of the freshly trained models (uses the same GPU)
python scripts/evaluate_model.py --model_path ${OUT_DIR} --num_samples 20 --gpu_num ${GPU}
nvidia-smi --query-gpu=name,memory.used --format=csv
