#!/usr/bin/env bash
# Sweep torch.compile decode configurations (bf16 / int8 / int4, with and without compiled prefill)
# for the gpt-fast style generator and collect tokens/s + peak memory into one table.
#
#   NGPU=1 GPU_IDS=0 bash scripts/run_compile_bench.sh
#   NGPU=8 GPU_IDS=0,1,2,3,4,5,6,7 MODEL_REPO=meta-llama/Meta-Llama-3-70B bash scripts/run_compile_bench.sh
set -euo pipefail

MODEL_REPO=${MODEL_REPO:-meta-llama/Meta-Llama-3-8B}
CKPT_DIR=${CKPT_DIR:-checkpoints/$MODEL_REPO}
OUT_DIR=${OUT_DIR:-results/$(date +%Y%m%d-%H%M%S)}
NGPU=${NGPU:-1}
GPU_IDS=${GPU_IDS:-0}
mkdir -p "$OUT_DIR"

export CUDA_VISIBLE_DEVICES=$GPU_IDS
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$HOME/.cache/inductor}
export TORCHINDUCTOR_FX_GRAPH_CACHE=1
export TORCHINDUCTOR_AUTOGRAD_CACHE=1
export TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1
export TRITON_CACHE_DIR=$HOME/.triton/cache
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_LOGS="${TORCH_LOGS:-}"

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT_DIR/run.log"; }

# record the environment next to the numbers
{
  nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv
  nvcc --version | tail -n1
  python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
  python -c "import triton; print('triton', triton.__version__)"
  git rev-parse HEAD
} > "$OUT_DIR/env.txt" 2>&1

# lock clocks for stable numbers (needs root; ignore failure)
sudo nvidia-smi -pm 1 >/dev/null 2>&1 && sudo nvidia-smi -lgc 1980 >/dev/null 2>&1 || true

run_one() {
  local mode=$1 quant=$2 extra=$3
  local ckpt="$CKPT_DIR/model.pth"
  [[ "$quant" == int8 ]] && ckpt="$CKPT_DIR/model_int8.pth"
  [[ "$quant" == int4 ]] && ckpt="$CKPT_DIR/model_int4.g32.pth"
  local tag="${mode}-${quant}"
  log "== $tag"
  local launcher
  if [[ $NGPU -gt 1 ]]; then
    launcher=(torchrun --standalone --nproc_per_node="$NGPU")
  else
    launcher=(python)
  fi
  "${launcher[@]}" generate.py --checkpoint_path "$ckpt" --compile $extra --num_samples 5 --max_new_tokens 200 \
      2>&1 | tee "$OUT_DIR/$tag.log" | grep -E "tokens/sec|Memory used|Compilation time" || true
}

# quantize once (the quantizers run on the accelerator)
if [[ ! -f "$CKPT_DIR/model_int8.pth" ]]; then
  python quantize.py --checkpoint_path "$CKPT_DIR/model.pth" --mode int8
fi
if [[ ! -f "$CKPT_DIR/model_int4.g32.pth" ]]; then
  python quantize.py --checkpoint_path "$CKPT_DIR/model.pth" --mode int4 --groupsize 32
fi

for quant in bf16 int8 int4; do
  run_one reduce-overhead "$quant" ""
  run_one reduce-overhead-prefill "$quant" "--compile_prefill"
done

# kernel-level trace of the steady-state decode for the bf16 model
if command -v nsys >/dev/null 2>&1; then
  nsys profile -t cuda,nvtx,osrt -o "$OUT_DIR/decode_bf16" --force-overwrite true \
    python generate.py --checkpoint_path "$CKPT_DIR/model.pth" --compile --num_samples 2 --max_new_tokens 64
fi

# summary table
python - "$OUT_DIR" <<'PY'
import re, sys, pathlib
out = pathlib.Path(sys.argv[1])
rows = []
for f in sorted(out.glob("*.log")):
    if f.name == "run.log":
        continue
    txt = f.read_text()
    tps = re.findall(r"Average tokens/sec: ([\d.]+)", txt)
    mem = re.findall(r"Memory used: ([\d.]+) GB", txt)
    rows.append((f.stem, tps[-1] if tps else "n/a", mem[-1] if mem else "n/a"))
w = max(len(r[0]) for r in rows) if rows else 10
print(f"{'config':<{w}}  tok/s    mem(GB)")
for r in rows:
    print(f"{r[0]:<{w}}  {r[1]:>6}  {r[2]:>7}")
PY

sudo nvidia-smi -rgc >/dev/null 2>&1 || true
log "done -> $OUT_DIR"
