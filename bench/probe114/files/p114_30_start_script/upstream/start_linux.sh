#!/usr/bin/env bash
# One-click launcher for the local RAG stack on a single-GPU Linux box.
#
#   ./start_linux.sh                # retrieval API + Streamlit UI
#   ./start_linux.sh --ingest docs  # (re)index a folder first
#   GPU_ID=1 ./start_linux.sh       # use another card
set -euo pipefail
cd "$(dirname "$0")"

GPU_ID="${GPU_ID:-0}"
UI_PORT="${UI_PORT:-8501}"
API_PORT="${API_PORT:-8010}"
VENV_DIR="${VENV_DIR:-installer_files/env}"
INGEST_DIR=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --ingest) INGEST_DIR="$2"; shift 2 ;;
    --cpu) GPU_ID=""; shift ;;
    *) echo "unknown argument: $1"; exit 1 ;;
  esac
done

# ------------------------------------------------------------------ python env
if [[ ! -x "${VENV_DIR}/bin/python" ]]; then
  echo ">>> creating virtualenv in ${VENV_DIR}"
  python3 -m venv "${VENV_DIR}"
  "${VENV_DIR}/bin/pip" install --upgrade pip
  "${VENV_DIR}/bin/pip" install torch==2.2.1 torchvision==0.17.1 --index-url https://download.pytorch.org/whl/cu121
  "${VENV_DIR}/bin/pip" install -r requirements.txt
fi
# shellcheck disable=SC1091
source "${VENV_DIR}/bin/activate"

# ------------------------------------------------------------------ GPU checks
if [[ -n "${GPU_ID}" ]]; then
  if ! command -v nvidia-smi &>/dev/null; then
    echo "!!! nvidia-smi not found -- install the NVIDIA driver or run with --cpu"
    exit 1
  fi
  nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader -i "${GPU_ID}"
  python - <<'PY'
import sys
import torch
if not torch.cuda.is_available():
    sys.exit("torch cannot see a CUDA device; check the driver / the torch wheel (cu121)")
print(f"torch {torch.__version__} cuda {torch.version.cuda} -> {torch.cuda.get_device_name(0)}")
PY
  export CUDA_VISIBLE_DEVICES="${GPU_ID}"
  export EMBED_DEVICE="cuda"
else
  export CUDA_VISIBLE_DEVICES=""
  export EMBED_DEVICE="cpu"
fi

# allocator / threading knobs
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-8}"
export HF_HOME="${HF_HOME:-$PWD/hf_cache}"

# ------------------------------------------------------------------ ingest
if [[ -n "${INGEST_DIR}" ]]; then
  echo ">>> indexing ${INGEST_DIR}"
  python indexing/chunk_corpus.py --input "${INGEST_DIR}" --output data/chunks.jsonl
  python indexing/build_index.py --chunks data/chunks.jsonl --out data/ivfpq
fi

# ------------------------------------------------------------------ services
mkdir -p logs
echo ">>> starting retrieval API on :${API_PORT}"
uvicorn rag_server.retrieval:app --host 0.0.0.0 --port "${API_PORT}" > logs/retrieval.log 2>&1 &
API_PID=$!
trap 'echo ">>> stopping"; kill ${API_PID} 2>/dev/null || true' EXIT INT TERM

for _ in $(seq 1 60); do
  if curl -sf "http://127.0.0.1:${API_PORT}/health" >/dev/null; then
    break
  fi
  sleep 2
done

echo ">>> starting UI on :${UI_PORT}"
streamlit run app.py --server.port "${UI_PORT}" --server.headless true
