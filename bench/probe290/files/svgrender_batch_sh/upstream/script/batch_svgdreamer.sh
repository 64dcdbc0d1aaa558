#!/bin/bash
# Batch text-to-SVG generation with SVGDreamer.
#   - default: one prompt per GPU, jobs run in parallel (VPSD needs ~22GB per job at 6 particles)
#   - MODE=accelerate: a single prompt with the particles split over all GPUs
#
# usage: bash script/batch_svgdreamer.sh prompts.txt [style] [seed]
set -e

PROMPT_FILE=${1:-"prompts/iconography.txt"}
STYLE=${2:-"iconography"}
SEED=${3:-1}
MODE=${MODE:-"parallel"}
RESULT_DIR=${RESULT_DIR:-"./workdir/svgdreamer_batch"}

export TOKENIZERS_PARALLELISM=false
export HF_HUB_OFFLINE=1
# the 4x3090 box has no NVLink, P2P hangs in all_reduce without this
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo "found ${NUM_GPUS} GPU(s), mode=${MODE}"

mkdir -p "${RESULT_DIR}/logs"

if [ "${MODE}" == "accelerate" ]; then
  PROMPT=$(head -n 1 "${PROMPT_FILE}")
  accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" --mixed_precision fp16 \
    svg_render.py x=svgdreamer "prompt='${PROMPT}'" \
    x.style="${STYLE}" \
    x.vpsd.n_particle=$((2 * NUM_GPUS)) \
    x.vpsd.vsd_n_particle=$((NUM_GPUS)) \
    result_path="${RESULT_DIR}" \
    seed="${SEED}" \
    mv=False \
    2>&1 | tee "${RESULT_DIR}/logs/accelerate.log"
  exit 0
fi

i=0
while IFS= read -r PROMPT || [ -n "${PROMPT}" ]; do
  if [ -z "${PROMPT}" ]; then
    continue
  fi
  gpu=$((i % NUM_GPUS))
  NAME=$(echo "${PROMPT}" | tr -cd '[:alnum:] ' | tr ' ' '_' | cut -c1-48)
  echo "[gpu ${gpu}] ${PROMPT}"
  CUDA_VISIBLE_DEVICES=${gpu} python svg_render.py x=svgdreamer "prompt='${PROMPT}'" \
    x.style="${STYLE}" \
    x.num_paths=256 \
    result_path="${RESULT_DIR}/${NAME}" \
    seed="${SEED}" \
    mv=False \
    > "${RESULT_DIR}/logs/${NAME}.log" 2>&1 &
  i=$((i + 1))
  # wait for the current wave to finish before we oversubscribe the cards
  if [ $((i % NUM_GPUS)) -eq 0 ]; then
    wait
  fi
done < "${PROMPT_FILE}"
wait

echo "done, results in ${RESULT_DIR}"
