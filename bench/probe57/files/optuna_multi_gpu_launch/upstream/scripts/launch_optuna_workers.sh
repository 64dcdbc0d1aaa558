#!/usr/bin/env bash
# Launch one Optuna worker per GPU against a shared RDB study, then wait for all of them.
#
#   scripts/launch_optuna_workers.sh mlp 25            # 25 trials per worker
#   STORAGE=sqlite:///study.db scripts/launch_optuna_workers.sh xgb 100
#
# Cards with less than MIN_FREE_MB of free memory (someone else's job) are skipped.
set -euo pipefail

MODEL=${1:-mlp}
TRIALS_PER_WORKER=${2:-25}
STUDY=${STUDY:-"${MODEL}-search-$(date +%Y%m%d)"}
STORAGE=${STORAGE:-"postgresql://optuna:optuna@db:5432/optuna"}
DATA=${DATA:-data/fe}
MIN_FREE_MB=${MIN_FREE_MB:-20000}
LOG_DIR=${LOG_DIR:-logs/optuna/${STUDY}}

export CUDA_DEVICE_ORDER=PCI_BUS_ID
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export PYTHONUNBUFFERED=1

mkdir -p "${LOG_DIR}"

echo "== study ${STUDY} on ${STORAGE}"
python - <<PY
import optuna
optuna.create_study(study_name="${STUDY}", storage="${STORAGE}", direction="maximize", load_if_exists=True)
PY

N_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "== ${N_GPUS} GPUs visible"

pids=()
for ((i = 0; i < N_GPUS; i++)); do
  free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i "${i}")
  if [ "${free}" -lt "${MIN_FREE_MB}" ]; then
    echo "   skip GPU ${i}: only ${free} MiB free"
    continue
  fi
  echo "   worker on GPU ${i} (${free} MiB free) -> ${LOG_DIR}/worker_${i}.log"
  CUDA_VISIBLE_DEVICES=${i} nohup python tuning/optuna_study.py \
      --model "${MODEL}" \
      --data "${DATA}" \
      --trials "${TRIALS_PER_WORKER}" \
      --storage "${STORAGE}" \
      --study-name "${STUDY}" \
      --worker-gpu "${i}" \
      > "${LOG_DIR}/worker_${i}.log" 2>&1 &
  pids+=($!)
  sleep 2   # stagger the RDB connections
done

if [ "${#pids[@]}" -eq 0 ]; then
  echo "no usable GPU, nothing launched" >&2
  exit 1
fi

trap 'echo "stopping workers"; kill "${pids[@]}" 2>/dev/null || true' INT TERM

status=0
for pid in "${pids[@]}"; do
  if ! wait "${pid}"; then
    echo "worker ${pid} failed" >&2
    status=1
  fi
done

echo "== best trial"
python - <<PY
import optuna
s = optuna.load_study(study_name="${STUDY}", storage="${STORAGE}")
print(s.best_value, s.best_params)
PY

nvidia-smi --query-compute-apps=pid,used_memory --format=csv
exit ${status}
