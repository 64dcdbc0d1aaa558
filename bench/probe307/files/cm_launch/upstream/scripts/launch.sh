#!/usr/bin/env bash
# Launch commands for consistency distillation / training on one 8xA100 node.
# Every experiment is started with MPI; cm/dist_util.py maps rank -> GPU (rank % 8).
set -euo pipefail

export OPENAI_LOGDIR=${OPENAI_LOGDIR:-/tmp/cm_logs/$(date +%Y%m%d-%H%M%S)}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=0
export OMP_NUM_THREADS=8

NUM_GPUS=${NUM_GPUS:-8}
DATA_ROOT=${DATA_ROOT:-/data}

nvidia-smi --query-gpu=index,name,memory.total --format=csv

case "${1:-cd_imagenet64_lpips}" in
  edm_imagenet64)
    mpiexec -n ${NUM_GPUS} python scripts/edm_train.py --attention_resolutions 32,16,8 --class_cond True --use_scale_shift_norm True \
      --dropout 0.1 --ema_rate 0.999,0.9999,0.9999432189950708 --global_batch_size 4096 --image_size 64 --lr 0.0001 \
      --num_channels 192 --num_head_channels 64 --num_res_blocks 3 --resblock_updown True --schedule_sampler lognormal \
      --use_fp16 True --weight_decay 0.0 --weight_schedule karras --data_dir ${DATA_ROOT}/imagenet64
    ;;
  cd_imagenet64_lpips)
    mpiexec -n ${NUM_GPUS} python scripts/cm_train.py --training_mode consistency_distillation --target_ema_mode fixed \
      --start_ema 0.95 --scale_mode fixed --start_scales 40 --total_training_steps 600000 --loss_norm lpips \
      --lr_anneal_steps 0 --teacher_model_path ${DATA_ROOT}/edm_imagenet64_ema.pt --attention_resolutions 32,16,8 \
      --class_cond True --use_scale_shift_norm True --dropout 0.0 --teacher_dropout 0.1 --ema_rate 0.999,0.9999,0.9999432189950708 \
      --global_batch_size 2048 --image_size 64 --lr 0.000008 --num_channels 192 --num_head_channels 64 --num_res_blocks 3 \
      --resblock_updown True --schedule_sampler uniform --use_fp16 True --weight_decay 0.0 --weight_schedule uniform \
      --data_dir ${DATA_ROOT}/imagenet64
    ;;
  ct_imagenet64)
    mpiexec -n ${NUM_GPUS} python scripts/cm_train.py --training_mode consistency_training --target_ema_mode adaptive \
      --start_ema 0.95 --scale_mode progressive --start_scales 2 --end_scales 200 --total_training_steps 800000 \
      --loss_norm lpips --lr_anneal_steps 0 --attention_resolutions 32,16,8 --class_cond True --use_scale_shift_norm True \
      --dropout 0.0 --teacher_dropout 0.1 --ema_rate 0.999,0.9999,0.9999432189950708 --global_batch_size 2048 \
      --image_size 64 --lr 0.0001 --num_channels 192 --num_head_channels 64 --num_res_blocks 3 --resblock_updown True \
      --schedule_sampler uniform --use_fp16 True --weight_decay 0.0 --weight_schedule uniform --data_dir ${DATA_ROOT}/imagenet64
    ;;
  sample_cd_onestep)
    mpiexec -n ${NUM_GPUS} python scripts/image_sample.py --batch_size 256 --training_mode consistency_distillation \
      --sampler onestep --model_path ${DATA_ROOT}/cd_imagenet64_lpips.pt --attention_resolutions 32,16,8 --class_cond True \
      --use_scale_shift_norm True --dropout 0.0 --image_size 64 --num_channels 192 --num_head_channels 64 --num_res_blocks 3 \
      --num_samples 50000 --resblock_updown True --use_fp16 True --weight_schedule uniform
    ;;
  sample_cd_multistep)
    mpiexec -n ${NUM_GPUS} python scripts/image_sample.py --batch_size 256 --training_mode consistency_distillation \
      --sampler multistep --ts 0,22,39 --steps 40 --model_path ${DATA_ROOT}/cd_imagenet64_lpips.pt \
      --attention_resolutions 32,16,8 --class_cond True --use_scale_shift_norm True --dropout 0.0 --image_size 64 \
      --num_channels 192 --num_head_channels 64 --num_res_blocks 3 --num_samples 50000 --resblock_updown True \
      --use_fp16 True --weight_schedule uniform
    ;;
  *)
    echo "unknown experiment: $1" >&2
    exit 1
    ;;
esac
