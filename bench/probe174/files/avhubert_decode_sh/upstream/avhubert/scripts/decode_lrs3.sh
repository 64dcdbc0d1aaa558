#!/usr/bin/env bash
# Decode LRS3 test with a fine-tuned AV-HuBERT model, in clean and babble-noise conditions.
#
#   bash scripts/decode_lrs3.sh /ckpt/large_vox_433h.pt /data/lrs3/433h_data exp/decode 0
#
# The last argument is the GPU id to decode on (default 0).

set -e

CKPT=$1
DATA=$2
OUT=$3
GPU=${4:-0}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH=${ROOT}/../fairseq:${PYTHONPATH}

BEAM=${BEAM:-50}
MAX_LEN_B=${MAX_LEN_B:-10}
LENPEN=${LENPEN:-1.0}

# lip-reading only (video), audio-visual, audio-only
for MOD in video audio,video audio; do
  MOD_TAG=${MOD//,/_}
  for SNR in clean 0 -5; do
    if [ "${SNR}" == "clean" ]; then
      NOISE_ARGS="override.noise_prob=0.0"
    else
      NOISE_ARGS="override.noise_wav=${DATA}/noise/babble/test override.noise_prob=1.0 override.noise_snr=${SNR}"
    fi
    RES=${OUT}/${MOD_TAG}/snr_${SNR}
    mkdir -p "${RES}"
    echo "[decode] modalities=${MOD} snr=${SNR} -> ${RES}"
    CUDA_VISIBLE_DEVICES=${GPU} python -B ${ROOT}/infer_s2s.py \
      --config-dir ${ROOT}/conf/ --config-name s2s_decode.yaml \
      dataset.gen_subset=test \
      common_eval.path=${CKPT} \
      common_eval.results_path=${RES} \
      override.modalities=[${MOD}] \
      override.data=${DATA} \
      override.label_dir=${DATA} \
      generation.beam=${BEAM} \
      generation.max_len_b=${MAX_LEN_B} \
      generation.lenpen=${LENPEN} \
      common.user_dir=${ROOT} \
      ${NOISE_ARGS}
    grep -h "WER" ${RES}/wer.* | tail -n 1
  done
done

# summary table
echo "modality,snr,wer" > ${OUT}/summary.csv
for f in ${OUT}/*/snr_*/wer.*; do
  mod=$(basename $(dirname $(dirname $f)))
  snr=$(basename $(dirname $f) | sed 's/snr_//')
  wer=$(head -n 1 $f | awk '{print $2}')
  echo "${mod},${snr},${wer}" >> ${OUT}/summary.csv
done
column -s, -t < ${OUT}/summary.csv
