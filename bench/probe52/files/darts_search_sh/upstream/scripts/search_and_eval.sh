#!/usr/bin/env bash
# Architecture search on CIFAR-10 followed by full training of the derived cell.
#
#   bash scripts/search_and_eval.sh [first|second] [seed]
#
# first  = first-order DARTS   (~1.5 GPU days on a 1080Ti)
# second = second-order DARTS  (~4 GPU days on a 1080Ti)
#
# The script picks the least loaded GPU on the machine unless GPU is set.
set -euo pipefail

ORDER=${1:-second}
SEED=${2:-2}
DATA=${DATA:-../data}
EXP_ROOT=${EXP_ROOT:-./exps}

cd "$(dirname "$0")/../cnn"

# ---------------------------------------------------------------------------
# environment sanity checks
# ---------------------------------------------------------------------------
python - <<'EOF'
import sys, torch
print("torch", torch.__version__, "cuda", torch.version.cuda)
if not torch.cuda.is_available():
    sys.exit("DARTS search needs a CUDA device")
EOF

if [ -z "${GPU:-}" ]; then
  # pick the GPU with the most free memory
  GPU=$(nvidia-smi --query-gpu=index,memory.free --format=csv,noheader,nounits \
        | sort -t, -k2 -nr | head -n1 | cut -d, -f1)
fi
export CUDA_VISIBLE_DEVICES=${GPU}
echo "using GPU ${GPU}"

# the search itself only sees one device, always index 0 after masking
SEARCH_FLAGS="--gpu 0 --seed ${SEED} --data ${DATA} --batch_size 64"
if [ "${ORDER}" = "second" ]; then
  SEARCH_FLAGS="${SEARCH_FLAGS} --unrolled"
fi

mkdir -p "${EXP_ROOT}"
SEARCH_LOG="${EXP_ROOT}/search-${ORDER}-seed${SEED}.log"

# ---------------------------------------------------------------------------
# 1. search
# ---------------------------------------------------------------------------
python train_search.py ${SEARCH_FLAGS} --save "${ORDER}-s${SEED}" 2>&1 | tee "${SEARCH_LOG}"

GENOTYPE=$(grep "genotype = " "${SEARCH_LOG}" | tail -n1 | sed 's/.*genotype = //')
NAME="DARTS_${ORDER}_${SEED}"
echo "${NAME} = ${GENOTYPE}" >> genotypes.py
echo "derived ${NAME}"

# ---------------------------------------------------------------------------
# 2. train the derived network from scratch (600 epochs, auxiliary + cutout)
# ---------------------------------------------------------------------------
python train.py --gpu 0 --auxiliary --cutout --arch "${NAME}" --seed "${SEED}" \
  --data "${DATA}" --save "eval-${NAME}" 2>&1 | tee "${EXP_ROOT}/eval-${NAME}.log"

# ---------------------------------------------------------------------------
# 3. test the final weights
# ---------------------------------------------------------------------------
WEIGHTS=$(ls -d eval-eval-${NAME}-*/ | tail -n1)weights.pt
python test.py --gpu 0 --auxiliary --arch "${NAME}" --model_path "${WEIGHTS}" \
  --data "${DATA}" 2>&1 | tee "${EXP_ROOT}/test-${NAME}.log"

# keep a snapshot of GPU state for the logbook
nvidia-smi > "${EXP_ROOT}/gpu-state-${NAME}.txt"
echo "done: $(grep 'test_acc' "${EXP_ROOT}/test-${NAME}.log" | tail -n1)"
