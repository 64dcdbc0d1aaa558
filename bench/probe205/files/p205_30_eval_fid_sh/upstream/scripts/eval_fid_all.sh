#!/usr/bin/env bash
# Evaluate every sample folder under $SAMPLES_ROOT against the reference set with
# pytorch-fid, clean-fid and torch-fidelity (ISC/FID/KID). One folder per GPU,
# up to $NUM_GPUS folders in flight at a time.
#
#   SAMPLES_ROOT=/data/samples/ffhq256 REF=/data/ffhq256_50k bash scripts/eval_fid_all.sh
set -euo pipefail

SAMPLES_ROOT=${SAMPLES_ROOT:-/data/samples}
REF=${REF:-/data/reference/ffhq256_50k}
REF_STATS=${REF_STATS:-/data/reference/ffhq256_50k_pytorch_fid.npz}
OUT=${OUT:-results/fid_$(date +%Y%m%d_%H%M)}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}
BATCH=${BATCH:-100}
WORKERS=${WORKERS:-8}

mkdir -p "$OUT"
echo "== $(date) evaluating $(ls -d "$SAMPLES_ROOT"/*/ | wc -l) folders on $NUM_GPUS GPUs" | tee "$OUT/log.txt"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee -a "$OUT/log.txt"

# reference statistics are computed once
if [ ! -f "$REF_STATS" ]; then
    CUDA_VISIBLE_DEVICES=0 python -m pytorch_fid --save-stats "$REF" "$REF_STATS" \
        --device cuda:0 --batch-size "$BATCH" --num-workers "$WORKERS"
fi

eval_one() {
    local dir=$1 gpu=$2
    local name
    name=$(basename "$dir")
    {
        echo "## $name (gpu $gpu)"
        CUDA_VISIBLE_DEVICES=$gpu python -m pytorch_fid "$dir" "$REF_STATS" \
            --device cuda --batch-size "$BATCH" --num-workers "$WORKERS" | sed "s/^/[pytorch-fid] /"
        CUDA_VISIBLE_DEVICES=$gpu python -c "
from cleanfid import fid
import torch
print('[clean-fid]', fid.compute_fid('$dir', '$REF', mode='clean', num_workers=$WORKERS, batch_size=$BATCH, device=torch.device('cuda'), use_dataparallel=False))
"
        fidelity --gpu "$gpu" --isc --fid --kid --input1 "$dir" --input2 "$REF" \
            --batch-size "$BATCH" --json > "$OUT/${name}_fidelity.json"
    } > "$OUT/${name}.log" 2>&1
    echo "done $name"
}

i=0
for dir in "$SAMPLES_ROOT"/*/; do
    gpu=$(( i % NUM_GPUS ))
    eval_one "$dir" "$gpu" &
    i=$(( i + 1 ))
    if (( i % NUM_GPUS == 0 )); then
        wait
    fi
done
wait

# collect
python - "$OUT" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
rows = []
for log in sorted(glob.glob(os.path.join(out, "*.log"))):
    name = os.path.basename(log)[:-4]
    txt = open(log).read()
    pf = re.search(r"\[pytorch-fid\] FID:\s+([\d.]+)", txt)
    cf = re.search(r"\[clean-fid\]\s+([\d.]+)", txt)
    fj = os.path.join(out, f"{name}_fidelity.json")
    fd = json.load(open(fj)) if os.path.exists(fj) else {}
    rows.append((name, pf and pf.group(1), cf and cf.group(1),
                 fd.get("inception_score_mean"), fd.get("kernel_inception_distance_mean")))
with open(os.path.join(out, "summary.csv"), "w") as f:
    f.write("folder,pytorch_fid,clean_fid,isc,kid\n")
    for r in rows:
        f.write(",".join(str(x) for x in r) + "\n")
print(open(os.path.join(out, "summary.csv")).read())
PY
echo "== $(date) done; results in $OUT" | tee -a "$OUT/log.txt"
