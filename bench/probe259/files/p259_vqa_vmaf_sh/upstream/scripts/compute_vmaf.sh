#!/usr/bin/env bash
# Full-reference baselines (VMAF / PSNR / SSIM) for the transcoded test set, to be compared with
# the DOVER / FAST-VQA no-reference predictions in the paper table.
#
#   ./scripts/compute_vmaf.sh <ref_dir> <dist_dir> <out_dir> [gpu_id]
#
# Needs an ffmpeg built with --enable-libvmaf --enable-cuda-nvcc --enable-libnpp (libvmaf_cuda, scale_cuda).
set -euo pipefail

REF_DIR=$1
DIST_DIR=$2
OUT_DIR=$3
GPU_ID=${4:-0}
MODEL=${VMAF_MODEL:-version=vmaf_v0.6.1}
THREADS=${THREADS:-8}

mkdir -p "${OUT_DIR}"
export CUDA_VISIBLE_DEVICES=${GPU_ID}

ffmpeg -hide_banner -filters | grep -q libvmaf_cuda || {
    echo "ffmpeg was built without libvmaf_cuda" >&2
    exit 1
}

for dist in "${DIST_DIR}"/*.mp4; do
    name=$(basename "${dist}" .mp4)
    # distorted files are named <ref>_<codec>_<crf>.mp4
    ref_name=${name%%_*}
    ref="${REF_DIR}/${ref_name}.mp4"
    if [ ! -f "${ref}" ]; then
        echo "missing reference for ${name}, skipped" >&2
        continue
    fi
    echo "[$(date +%T)] ${name}"

    # decode both streams with NVDEC, scale the distorted one to the reference size on the GPU
    ffmpeg -hide_banner -loglevel error -y \
        -hwaccel cuda -hwaccel_output_format cuda -i "${dist}" \
        -hwaccel cuda -hwaccel_output_format cuda -i "${ref}" \
        -filter_complex "[0:v]scale_cuda=1920:1080:format=yuv420p[dis];[1:v]scale_cuda=format=yuv420p[ref];[dis][ref]libvmaf_cuda=model=${MODEL}:log_fmt=json:log_path=${OUT_DIR}/${name}_vmaf.json" \
        -f null -

    # PSNR / SSIM on the CPU (cheap compared with decoding)
    ffmpeg -hide_banner -loglevel error -y -threads "${THREADS}" \
        -i "${dist}" -i "${ref}" \
        -lavfi "[0:v]scale=1920:1080:flags=bicubic[dis];[dis][1:v]psnr=stats_file=${OUT_DIR}/${name}_psnr.log" \
        -f null -
done

python - "${OUT_DIR}" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, '*_vmaf.json'))):
    with open(f) as fh:
        data = json.load(fh)
    rows.append((os.path.basename(f)[:-10], data['pooled_metrics']['vmaf']['mean']))
with open(os.path.join(out, 'vmaf_summary.csv'), 'w') as fh:
    fh.write('name,vmaf\n')
    for name, v in rows:
        fh.write(f'{name},{v:.4f}\n')
print(f'{len(rows)} videos written to {out}/vmaf_summary.csv')
PY
