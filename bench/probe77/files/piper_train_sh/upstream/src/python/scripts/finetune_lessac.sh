#!/usr/bin/env bash
# Fine-tune a Piper voice from the en_US lessac (medium) checkpoint on a single-speaker LJSpeech-style dataset.
#
#   scripts/finetune_lessac.sh /data/my-voice /data/my-voice-train lessac-medium.ckpt
#
# Requires: the piper_train package installed (pip install -e src/python) and the monotonic_align
# Cython extension built (scripts/build_monotonic_align.sh).
set -eo pipefail

this_dir="$( cd "$( dirname "$0" )" && pwd )"
src_dir="$(realpath "${this_dir}/..")"

input_dir="$1"
train_dir="$2"
base_ckpt="$3"

if [ -z "${input_dir}" ] || [ -z "${train_dir}" ] || [ -z "${base_ckpt}" ]; then
    echo "Usage: finetune_lessac.sh <input_dir> <train_dir> <base_ckpt>" >&2
    exit 1
fi

# -----------------------------------------------------------------------------
# GPU selection
# -----------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
gpu_id="${CUDA_VISIBLE_DEVICES%%,*}"

# Pick a batch size that fits: ~24 GB cards take 32, smaller cards 16 (medium quality, 22.05 kHz)
free_mb="$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i "${gpu_id}" | head -n1)"
if [ "${free_mb}" -gt 20000 ]; then
    batch_size=32
else
    batch_size=16
fi
echo "GPU ${gpu_id}: ${free_mb} MiB free -> batch size ${batch_size}"

# -----------------------------------------------------------------------------
# 1. preprocess (phonemize with espeak-ng, compute normalized audio + spectrograms)
# -----------------------------------------------------------------------------
cd "${src_dir}"
python3 -m piper_train.preprocess \
    --language en-us \
    --input-dir "${input_dir}" \
    --output-dir "${train_dir}" \
    --dataset-format ljspeech \
    --single-speaker \
    --sample-rate 22050 \
    --max-workers "$(nproc)"

# -----------------------------------------------------------------------------
# 2. train (PyTorch Lightning 1.x flags are passed straight to Trainer.from_argparse_args)
# -----------------------------------------------------------------------------
python3 -m piper_train \
    --dataset-dir "${train_dir}" \
    --accelerator 'gpu' \
    --devices 1 \
    --batch-size "${batch_size}" \
    --validation-split 0.0 \
    --num-test-examples 0 \
    --max_epochs 6000 \
    --resume_from_checkpoint "${base_ckpt}" \
    --checkpoint-epochs 1 \
    --precision 32 \
    --quality medium

# -----------------------------------------------------------------------------
# 3. export the newest checkpoint to ONNX for the piper C++ runtime
# -----------------------------------------------------------------------------
last_ckpt="$(ls -t "${train_dir}"/lightning_logs/version_*/checkpoints/*.ckpt | head -n1)"
echo "Exporting ${last_ckpt}"
python3 -m piper_train.export_onnx \
    "${last_ckpt}" \
    "${train_dir}/model.onnx"
cp "${train_dir}/config.json" "${train_dir}/model.onnx.json"

# quick smoke test with onnxruntime on the same GPU
echo 'Hello from my new voice.' | \
    python3 -m piper_train.infer_onnx \
        --model "${train_dir}/model.onnx" \
        --config "${train_dir}/model.onnx.json" \
        --output-dir "${train_dir}/samples" \
        --cuda
