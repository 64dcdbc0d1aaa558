#!/usr/bin/env bash
# -*- coding:utf-8 -*-
# Shared argument parsing for run_uie_*.bash

export EXP_ID=$(date +%F-%H-%M-$RANDOM)
export CUDA_VISIBLE_DEVICES="0"
export run_time=1
export seed=42
export lr=1e-4
export warmup_ratio=0.06
export label_smoothing=0
export negative=-1
export positive=1
export ordered_prompt=True
export evaluation_strategy=epoch
export eval_steps=500
export epoch=50
export lr_scheduler=linear
export spot_noise=0
export asoc_noise=0
export fp16=""
export constraint_decoding=""
export verbose=false
export map_config=config/offset_map/closest_offset_en.yaml

OPTS=$(getopt -o b:d:m:i:t:s:l:f:n:v --long lr:,lr_scheduler:,label_smoothing:,epoch:,format:,eval_steps:,warmup_ratio:,constraint_decoding,verbose,preprocess,fp16,negative:,random_prompt,max_source_length:,max_target_length:,spot_noise:,asoc_noise:,positive:,map_config:,run_time:,seed:,gpus:, -n 'parse-options' -- "$@")

if [ $? != 0 ]; then
  echo "Failed parsing options." >&2
  exit 1
fi

eval set -- "$OPTS"

while true; do
  case "$1" in
  -b | --batch_size) batch_size="$2"; shift; shift ;;
  -d | --gpus) selected_gpus="$2"; shift; shift ;;
  --gpus) selected_gpus="$2"; shift; shift ;;
  -m | --model) model_name="$2"; shift; shift ;;
  -i | --data) data_name="$2"; shift; shift ;;
  -t | --task) task_name="$2"; shift; shift ;;
  -k | --run_time) run_time="$2"; shift; shift ;;
  --run_time) run_time="$2"; shift; shift ;;
  -s | --seed) seed="$2"; shift; shift ;;
  -l | --lr) lr="$2"; shift; shift ;;
  -f | --format) decoding_format="$2"; shift; shift ;;
  -n | --negative) negative="$2"; shift; shift ;;
  -v | --verbose) verbose=true; shift ;;
  --lr_scheduler) lr_scheduler="$2"; shift; shift ;;
  --label_smoothing) label_smoothing="$2"; shift; shift ;;
  --epoch) epoch="$2"; shift; shift ;;
  --eval_steps) eval_steps="$2"; shift; shift ;;
  --warmup_ratio) warmup_ratio="$2"; shift; shift ;;
  --max_source_length) max_source_length="$2"; shift; shift ;;
  --max_target_length) max_target_length="$2"; shift; shift ;;
  --spot_noise) spot_noise="$2"; shift; shift ;;
  --asoc_noise) asoc_noise="$2"; shift; shift ;;
  --positive) positive="$2"; shift; shift ;;
  --map_config) map_config="$2"; shift; shift ;;
  --constraint_decoding) constraint_decoding="--constraint_decoding"; shift ;;
  --preprocess) preprocess=True; shift ;;
  --fp16) fp16="--fp16"; shift ;;
  --random_prompt) ordered_prompt=False; shift ;;
  --)
    shift
    break
    ;;
  *)
    echo "$1" not recognized.
    exit
    ;;
  esac
done

# No --gpus given: use every card on the box
if [[ -z ${selected_gpus} ]]; then
  selected_gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
fi
export CUDA_VISIBLE_DEVICES=${selected_gpus}

gpu_num=$(echo ${CUDA_VISIBLE_DEVICES} | awk -F ',' '{print NF}')
echo "Use GPUs: ${CUDA_VISIBLE_DEVICES} (${gpu_num} devices)"

if [[ ${gpu_num} == 1 ]]; then
  run_command=python3
else
  master_port=$(eval "shuf -i 10000-15000 -n 1")
  run_command="python3 -m torch.distributed.launch --nproc_per_node ${gpu_num} --master_port ${master_port}"
fi

model_folder=output/${EXP_ID}_${model_name//\//_}_${data_name//\//_}_e${epoch}_${lr_scheduler}_lr${lr}_ls${label_smoothing}_b${batch_size}_wu${warmup_ratio}_n${negative}_p${positive}
data_folder=data/text2spotasoc/${data_name}

export TOKENIZERS_PARALLELISM=false

echo "Model folder: ${model_folder}"
echo "Data folder:  ${data_folder}"
