#!/usr/bin/env bash
# Train all five folds of one nnU-Net v2 configuration, one fold per GPU, then find the best
# configuration and run inference on the test set.
#
# usage: bash scripts/train_all_folds.sh <DATASET_ID> [CONFIG] [PLANS] [TRAINER]
# e.g.   bash scripts/train_all_folds.sh 137 3d_fullres nnUNetResEncUNetMPlans
#
# Folds are distributed round-robin over the visible GPUs. With 4 GPUs fold 4 waits for fold 0 to finish.
# Do NOT use -device to pick a GPU, nnU-Net wants CUDA_VISIBLE_DEVICES for that (see nnUNetv2_train -h).
set -euo pipefail

DATASET_ID=${1:?"dataset id required"}
CONFIG=${2:-3d_fullres}
PLANS=${3:-nnUNetResEncUNetMPlans}
TRAINER=${4:-nnUNetTrainer}

export nnUNet_raw=${nnUNet_raw:-/data/nnUNet_raw}
export nnUNet_preprocessed=${nnUNet_preprocessed:-/data/nnUNet_preprocessed}
export nnUNet_results=${nnUNet_results:-/data/nnUNet_results}

# data augmentation workers per training process (default is derived from the number of CPUs)
export nnUNet_n_proc_DA=${nnUNet_n_proc_DA:-12}
# torch.compile gives ~10-15% on Ampere+, keep it on
export nnUNet_compile=T
# keep OMP from oversubscribing the DA workers
export OMP_NUM_THREADS=1

LOG_DIR=logs/${DATASET_ID}_${CONFIG}
mkdir -p "${LOG_DIR}"

echo "=== GPUs on $(hostname) ==="
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv
NUM_GPUS=$(nvidia-smi -L | wc -l)
echo "found ${NUM_GPUS} GPUs"

if [ ! -f "${nnUNet_preprocessed}/Dataset${DATASET_ID}"*/"${PLANS}.json" ]; then
    echo "plans ${PLANS} not found, running planning + preprocessing first"
    nnUNetv2_plan_and_preprocess -d "${DATASET_ID}" -pl nnUNetPlannerResEncM -c "${CONFIG}" --verify_dataset_integrity
fi

pids=()
for FOLD in 0 1 2 3 4; do
    GPU=$((FOLD % NUM_GPUS))
    if [ "${FOLD}" -ge "${NUM_GPUS}" ]; then
        # wait for the job that used this GPU before
        wait "${pids[$((FOLD - NUM_GPUS))]}"
    fi
    echo "fold ${FOLD} -> GPU ${GPU}"
    CUDA_VISIBLE_DEVICES=${GPU} nnUNetv2_train "${DATASET_ID}" "${CONFIG}" "${FOLD}" -tr "${TRAINER}" -p "${PLANS}" --npz \
        > "${LOG_DIR}/fold_${FOLD}.log" 2>&1 &
    pids+=($!)
    # stagger the starts so that the unpacking of the dataset does not collide
    sleep 60
done

for pid in "${pids[@]}"; do
    wait "${pid}"
done
echo "all folds done"

nnUNetv2_find_best_configuration "${DATASET_ID}" -c "${CONFIG}" -p "${PLANS}" -tr "${TRAINER}"

if [ -d "${nnUNet_raw}/Dataset${DATASET_ID}"*/imagesTs ]; then
    IMAGES_TS=$(ls -d "${nnUNet_raw}/Dataset${DATASET_ID}"*/imagesTs)
    OUT=${nnUNet_results}/predictions_${DATASET_ID}_${CONFIG}
    CUDA_VISIBLE_DEVICES=0 nnUNetv2_predict -i "${IMAGES_TS}" -o "${OUT}" -d "${DATASET_ID}" -c "${CONFIG}" -p "${PLANS}" \
        -tr "${TRAINER}" -f 0 1 2 3 4 -device cuda --save_probabilities
fi
