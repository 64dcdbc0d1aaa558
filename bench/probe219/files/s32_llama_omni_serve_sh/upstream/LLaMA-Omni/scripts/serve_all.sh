#!/bin/bash
# Start the controller, one model worker per GPU and the gradio web server.
#   bash scripts/serve_all.sh Llama-3.1-8B-Omni 0,1
MODEL_PATH=${1:-Llama-3.1-8B-Omni}
GPUS=${2:-0}
CONTROLLER_PORT=10000
WEB_PORT=8000
BASE_WORKER_PORT=40000
VOCODER_CKPT=vocoder/g_00500000
VOCODER_CFG=vocoder/config.json

mkdir -p logs

python -m omni_speech.serve.controller --host 0.0.0.0 --port ${CONTROLLER_PORT} > logs/controller.log 2>&1 &
sleep 5

IFS=',' read -ra GPU_LIST <<< "${GPUS}"
i=0
for gpu in "${GPU_LIST[@]}"; do
    port=$((BASE_WORKER_PORT + i))
    echo "worker ${i} on GPU ${gpu} (port ${port})"
    CUDA_VISIBLE_DEVICES=${gpu} python -m omni_speech.serve.model_worker \
        --host 0.0.0.0 \
        --controller http://localhost:${CONTROLLER_PORT} \
        --port ${port} \
        --worker http://localhost:${port} \
        --model-path ${MODEL_PATH} \
        --model-name $(basename ${MODEL_PATH}) \
        --vocoder ${VOCODER_CKPT} \
        --vocoder-cfg ${VOCODER_CFG} \
        --s2s > logs/worker_${i}.log 2>&1 &
    i=$((i + 1))
done

# wait until every worker has loaded the 8B model before opening the UI
sleep 60
python -m omni_speech.serve.gradio_web_server \
    --controller http://localhost:${CONTROLLER_PORT} \
    --port ${WEB_PORT} \
    --model-list-mode reload \
    --vocoder ${VOCODER_CKPT} \
    --vocoder-cfg ${VOCODER_CFG}
