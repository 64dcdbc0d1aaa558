#!/usr/bin/env bash
# Fine-tune the pretrained Lag-Llama checkpoint on each downstream dataset,
# with 3 seeds per dataset, and evaluate on the held-out test split.
#
# Usage: bash scripts/finetune.sh [GPU_ID]
#
# Requires: a single CUDA GPU with >= 16 GB, the pretrained checkpoint
# (huggingface-cli download time-series-foundation-models/Lag-Llama lag-llama.ckpt)
set -euo pipefail

GPU=${1:-0}
CONFIGPATH="configs/lag_llama.json"
PRETRAINING_CKPT="lag-llama.ckpt"
EXP_NAME_PREFIX="finetune_lag_llama"
RESULTS_DIR="experiments/results"
DATASETS_DIR="datasets"

# Sanity check: the GPU must be present and idle
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv -i "${GPU}"

export CUDA_VISIBLE_DEVICES=${GPU}
export WANDB_MODE=${WANDB_MODE:-offline}
export TOKENIZERS_PARALLELISM=false
# faster matmuls on Ampere; harmless elsewhere
export NVIDIA_TF32_OVERRIDE=1

DATASETS=(
  "weather"
  "pedestrian_counts"
  "exchange_rate"
  "ett_h2"
  "ett_m2"
  "australian_electricity_demand"
  "requests_minute"
  "beijing_pm25"
  "AirQualityUCI"
  "beijing_multisite"
  "traffic"
  "uber_tlc_hourly"
)

SEEDS=(42 43 44)

for dataset in "${DATASETS[@]}"; do
  for seed in "${SEEDS[@]}"; do
    EXP_NAME="${EXP_NAME_PREFIX}_${dataset}"
    echo "=== ${EXP_NAME} seed=${seed} on GPU ${GPU} ==="
    # after CUDA_VISIBLE_DEVICES remapping the selected card is always index 0
    python run.py \
      -e "${EXP_NAME}" -d "${DATASETS_DIR}" --seed "${seed}" \
      -r "${RESULTS_DIR}" \
      --batch_size 64 -m 1000 -n 128 \
      --wandb_entity "enter-wandb-entity" --wandb_project "enter-wandb-project" \
      --wandb_tags "finetuning" "${dataset}" \
      --single_dataset "${dataset}" --test_datasets "${dataset}" \
      --num_workers 2 --args_from_dict_path "${CONFIGPATH}" --search_batch_size \
      --lr 0.00001 --use_dataset_prediction_length --num_validation_windows 1 \
      --single_dataset_last_k_percentage 100 \
      --ckpt_path "${PRETRAINING_CKPT}" \
      --gpu 0
  done
done

# ---------------------------------------------------------------------------
# Optional: multi-GPU pretraining on the full corpus (set PRETRAIN=1)
# ---------------------------------------------------------------------------
if [[ "${PRETRAIN:-0}" == "1" ]]; then
  NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
  unset CUDA_VISIBLE_DEVICES
  export NCCL_ASYNC_ERROR_HANDLING=1
  export NCCL_P2P_DISABLE=0
  torchrun --standalone --nproc_per_node="${NUM_GPUS}" run.py \
    -e "pretraining_lag_llama" -d "${DATASETS_DIR}" --seed 42 \
    -r "${RESULTS_DIR}" \
    --batch_size 512 -m 1000 -n 128 \
    --wandb_project "lag-llama-pretrain" \
    --all_datasets "australian_electricity_demand" "electricity_hourly" "london_smart_meters_without_missing" \
      "solar_10_minutes" "wind_farms_without_missing" "pedestrian_counts" "uber_tlc_hourly" "traffic" \
      "kdd_cup_2018_without_missing" "saugeenday" "sunspot_without_missing" "exchange_rate" \
    --test_datasets "weather" "pedestrian_counts" "exchange_rate" "ett_h2" "ett_m2" \
    --num_workers 2 --args_from_dict_path "${CONFIGPATH}" --lr 0.0001
fi
