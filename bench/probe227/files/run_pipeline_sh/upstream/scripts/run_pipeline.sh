#!/usr/bin/env bash
# End-to-end pipeline: features -> level-1 models -> stacker -> submission.
#
#   bash scripts/run_pipeline.sh            # everything, GPU 0
#   GPU=1 SKIP_FEATURES=1 bash scripts/run_pipeline.sh
#
# Needs the RAPIDS conda env (environment.yml) or the docker image (docker/Dockerfile).

set -eo pipefail

GPU=${GPU:-0}
FEATURES=${FEATURES:-v3}
FOLDS=${FOLDS:-5}
SEED=${SEED:-2022}
LOG_DIR=${LOG_DIR:-logs/$(date +%Y%m%d_%H%M%S)}
mkdir -p "${LOG_DIR}"

export CUDA_VISIBLE_DEVICES=${GPU}
export PYTHONPATH=$(pwd):${PYTHONPATH}
# cuDF: spill to host instead of OOM on the 16GB cards
export CUDF_SPILL=on
export CUPY_CACHE_DIR=/tmp/cupy_cache
# PyTorch: fewer fragmentation OOMs with large tabular batches
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512

echo "==== $(date) pipeline on GPU ${GPU} (features ${FEATURES}) ===="
nvidia-smi -i "${GPU}" --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python -c "import torch, cudf; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudf', cudf.__version__)"

run() {
    local name=$1; shift
    echo ">>> ${name}: $*"
    /usr/bin/time -v "$@" > "${LOG_DIR}/${name}.log" 2>&1
    tail -n 3 "${LOG_DIR}/${name}.log"
}

if [[ -z "${SKIP_FEATURES}" ]]; then
    run knn_features python -m src.features.knn_features --gpu 0 --epochs 12
fi

# level 1 ---------------------------------------------------------------------
run xgb      python amex-default-prediction/xgboost_starter.py
run lgb      python -m src.models.train_gbdt --model lgb --features "${FEATURES}" --folds "${FOLDS}" --seed "${SEED}" --with-knn
run cat      python -m src.models.train_gbdt --model cat --features "${FEATURES}" --folds "${FOLDS}" --seed "${SEED}" --gpu
run tabnet   python -m src.models.train_tabnet --features "${FEATURES}" --params configs/tabnet_params.json --pretrain
run gru      python amex-default-prediction/gru_torch.py --fold-count "${FOLDS}"

# multi-GPU DAE-MLP if more than one GPU was requested (GPU=0,1,2,3)
NGPU=$(echo "${GPU}" | tr ',' '\n' | wc -l)
if [[ "${NGPU}" -gt 1 ]]; then
    run dae_mlp torchrun --standalone --nproc_per_node="${NGPU}" -m src.train_ddp --features "${FEATURES}" --amp
else
    run dae_mlp python -m src.train_ddp --features "${FEATURES}" --backend gloo --epochs 20
fi

# level 2 ---------------------------------------------------------------------
run stack python -m src.models.stack_mlp --config configs/stack_mlp.yaml
run predict python inference/predict_ensemble.py --config configs/stack_mlp.yaml --out submission.csv

echo "==== done, logs in ${LOG_DIR} ===="
