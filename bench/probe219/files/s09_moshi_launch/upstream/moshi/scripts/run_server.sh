#!/usr/bin/env bash
# Launch one moshi.server per GPU behind the nginx round-robin in deploy/nginx.conf.
#
#   ./scripts/run_server.sh            # all visible GPUs
#   NUM_GPUS=2 ./scripts/run_server.sh # first two GPUs
#
# Each instance handles a single conversation at a time (the server holds a lock), so
# the number of concurrent users equals the number of GPUs.
set -euo pipefail

HF_REPO=${HF_REPO:-kyutai/moshiko-pytorch-bf16}
BASE_PORT=${BASE_PORT:-8998}
LOG_DIR=${LOG_DIR:-./logs}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}

mkdir -p "${LOG_DIR}"

# Keep the depformer CUDA graphs, but make the allocator less fragmented.
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
# Set to 1 to debug a crash inside a captured graph.
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
export NO_TORCH_COMPILE=${NO_TORCH_COMPILE:-0}

pids=()
cleanup() {
    echo "stopping ${#pids[@]} servers"
    for pid in "${pids[@]}"; do
        kill "${pid}" 2>/dev/null || true
    done
}
trap cleanup EXIT INT TERM

for ((gpu = 0; gpu < NUM_GPUS; gpu++)); do
    port=$((BASE_PORT + gpu))
    echo "starting moshi.server on GPU ${gpu}, port ${port}"
    CUDA_VISIBLE_DEVICES=${gpu} python -m moshi.server \
        --hf-repo "${HF_REPO}" \
        --host 0.0.0.0 \
        --port "${port}" \
        --device cuda \
        --static none \
        > "${LOG_DIR}/moshi_${gpu}.log" 2>&1 &
    pids+=($!)
    # give the previous instance time to capture its graphs before loading the next one
    sleep 20
done

echo "all servers started, tailing logs"
tail -f "${LOG_DIR}"/moshi_*.log
