#!/usr/bin/env bash
# Build llama.cpp with CUDA, convert a merged HF checkpoint to GGUF, quantize it and run a short perplexity check.
#
#   bash scripts/export_gguf.sh outputs/merged-llama3-8b Q4_K_M
set -euo pipefail

MODEL_DIR=${1:?"usage: export_gguf.sh <merged_hf_dir> [quant_type]"}
QTYPE=${2:-Q4_K_M}
LLAMA_CPP=${LLAMA_CPP:-$HOME/llama.cpp}
NGL=${NGL:-99}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH

echo "== environment"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

if [ ! -d "$LLAMA_CPP" ]; then
  git clone --depth 1 https://github.com/ggerganov/llama.cpp "$LLAMA_CPP"
fi

echo "== building llama.cpp"
pushd "$LLAMA_CPP" >/dev/null
pip install -r requirements/requirements-convert_hf_to_gguf.txt
if [ ! -x build/bin/llama-quantize ]; then
  cmake -B build -DGGML_CUDA=ON -DGGML_CUDA_F16=ON -DCMAKE_BUILD_TYPE=Release
  cmake --build build --config Release -j "$(nproc)"
fi
popd >/dev/null

OUT_DIR=${OUT_DIR:-$MODEL_DIR/gguf}
mkdir -p "$OUT_DIR"
NAME=$(basename "$MODEL_DIR")

echo "== converting $MODEL_DIR"
python "$LLAMA_CPP/convert_hf_to_gguf.py" "$MODEL_DIR" --outfile "$OUT_DIR/$NAME-f16.gguf" --outtype f16

echo "== quantizing to $QTYPE"
"$LLAMA_CPP/build/bin/llama-quantize" "$OUT_DIR/$NAME-f16.gguf" "$OUT_DIR/$NAME-$QTYPE.gguf" "$QTYPE"

echo "== perplexity (wikitext-2, 32 chunks)"
if [ ! -f "$LLAMA_CPP/wikitext-2-raw/wiki.test.raw" ]; then
  (cd "$LLAMA_CPP" && bash scripts/get-wikitext-2.sh)
fi
"$LLAMA_CPP/build/bin/llama-perplexity" -m "$OUT_DIR/$NAME-$QTYPE.gguf" \
  -f "$LLAMA_CPP/wikitext-2-raw/wiki.test.raw" --chunks 32 -ngl "$NGL" -fa 2>&1 | tee "$OUT_DIR/ppl-$QTYPE.log"

echo "== smoke test"
"$LLAMA_CPP/build/bin/llama-cli" -m "$OUT_DIR/$NAME-$QTYPE.gguf" -p "Building a website can be done in 10 simple steps:" \
  -n 64 -ngl "$NGL" --temp 0 --no-display-prompt

echo "== sizes"
ls -lh "$OUT_DIR"
du -sh "$MODEL_DIR"
echo "done"

# optional: upload to the hub
if [ -n "${HF_REPO:-}" ]; then
  echo "== uploading to $HF_REPO"
  huggingface-cli upload "$HF_REPO" "$OUT_DIR/$NAME-$QTYPE.gguf" "$NAME-$QTYPE.gguf"
  huggingface-cli upload "$HF_REPO" "$OUT_DIR/ppl-$QTYPE.log" "ppl-$QTYPE.log"
fi
