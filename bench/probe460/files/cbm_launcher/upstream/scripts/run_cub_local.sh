#!/usr/bin/env bash
# Local replacement for the CodaLab worksheet: trains the independent / sequential /
# joint concept bottleneck models for three seeds in parallel, one seed per GPU.
#
#   bash scripts/run_cub_local.sh [DATA_DIR]
#
set -euo pipefail

DATA_DIR=${1:-CUB_processed/class_attr_data_10}
N_ATTR=112
LOG_ROOT=outputs
mkdir -p "${LOG_ROOT}"

# record which cards the runs were placed on
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${LOG_ROOT}/gpus.csv"

COMMON="-e 1000 -optimizer sgd -pretrained -use_aux -use_attr -weighted_loss multiple \
 -data_dir ${DATA_DIR} -n_attributes ${N_ATTR} -normalize_loss -b 64 -weight_decay 0.00004"

for SEED in 1 2 3; do
  GPU=$((SEED - 1))
  (
    export CUDA_VISIBLE_DEVICES=${GPU}
    # X -> C (concept model, shared by independent and sequential)
    python3 experiments.py cub Concept_XtoC --seed ${SEED} -ckpt 1 \
      -log_dir ${LOG_ROOT}/ConceptModel__Seed${SEED} ${COMMON} \
      -lr 0.01 -scheduler_step 1000 -bottleneck

    # C -> Y trained on ground-truth concepts (independent)
    python3 experiments.py cub Independent_CtoY --seed ${SEED} -log_dir ${LOG_ROOT}/IndependentModel_WithVal__Seed${SEED} \
      -e 500 -optimizer sgd -use_attr -data_dir ${DATA_DIR} -no_img -b 64 -weight_decay 0.00005 -lr 0.001 -scheduler_step 1000

    # Joint model, lambda = 0.01
    python3 experiments.py cub Joint --seed ${SEED} -ckpt 1 \
      -log_dir ${LOG_ROOT}/Joint0.01Model__Seed${SEED} ${COMMON} \
      -attr_loss_weight 0.01 -lr 0.001 -scheduler_step 1000 -end2end
  ) > "${LOG_ROOT}/seed${SEED}.log" 2>&1 &
done

wait
echo "all seeds finished; evaluate with CUB/inference.py -model_dirs ${LOG_ROOT}/*/best_model_*.pth"
