#!/bin/bash
# BigGAN at 128x128 on ImageNet, batch 256 x 8 gradient accumulations
# (effective batch 2048), on one 8-GPU node.
#
# Usage:  bash scripts/launch_BigGAN_bs256x8.sh [EXPERIMENT_NAME]
#
# Steps:
#   1. pack ImageNet into an HDF5 file (once)
#   2. compute the Inception moments of the training set (once)
#   3. train; the script restarts training from the latest weights on failure
set -e

EXP_NAME=${1:-"BigGAN_I128_hdf5_seed0_Gch96_Dch96_bs256_nDa8_nGa8_Glr1.0e-04_Dlr4.0e-04"}
DATA_ROOT=${DATA_ROOT:-/data/imagenet}
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
# cudnn autotuning is enabled inside train.py; keep cuBLAS deterministic-ish
export CUBLAS_WORKSPACE_CONFIG=:4096:8

echo "Launching ${EXP_NAME} on ${NUM_GPUS} GPUs"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

# 1. HDF5 (skipped if it already exists)
if [ ! -f "${DATA_ROOT}/ILSVRC128.hdf5" ]; then
  python make_hdf5.py --dataset I128 --batch_size 256 --data_root "${DATA_ROOT}"
fi

# 2. Inception moments (skipped if they already exist)
if [ ! -f "I128_inception_moments.npz" ]; then
  python calculate_inception_moments.py --dataset I128_hdf5 --data_root "${DATA_ROOT}" \
    --parallel --batch_size 500
fi

# 3. Train
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES} python train.py \
  --dataset I128_hdf5 --parallel --shuffle --num_workers 8 --batch_size 256 --load_in_mem \
  --num_G_accumulations 8 --num_D_accumulations 8 \
  --num_D_steps 1 --G_lr 1e-4 --D_lr 4e-4 --D_B2 0.999 --G_B2 0.999 \
  --G_attn 64 --D_attn 64 \
  --G_nl inplace_relu --D_nl inplace_relu \
  --SN_eps 1e-6 --BN_eps 1e-5 --adam_eps 1e-6 \
  --G_ortho 0.0 \
  --G_shared \
  --G_init ortho --D_init ortho \
  --hier --dim_z 120 --shared_dim 128 \
  --G_eval_mode \
  --G_ch 96 --D_ch 96 \
  --ema --use_ema --ema_start 20000 \
  --test_every 2000 --save_every 1000 --num_best_copies 5 --num_save_copies 2 --seed 0 \
  --use_multiepoch_sampler \
  --experiment_name "${EXP_NAME}" \
  --data_root "${DATA_ROOT}" \
  2>&1 | tee "logs/${EXP_NAME}.log"

# 4. Sample sheets + final IS/FID with the EMA generator
CUDA_VISIBLE_DEVICES=0 python sample.py \
  --dataset I128_hdf5 --parallel --shuffle --num_workers 8 --batch_size 256 \
  --G_ch 96 --D_ch 96 --hier --dim_z 120 --shared_dim 128 --G_shared \
  --ema --use_ema --G_eval_mode --load_weights '' \
  --sample_sheets --sample_interps --sample_npz --official_IS --official_FID \
  --experiment_name "${EXP_NAME}" --data_root "${DATA_ROOT}"

# Free any stale CUDA contexts left behind by crashed workers
nvidia-smi --query-compute-apps=pid --format=csv,noheader | xargs -r kill -9 || true
