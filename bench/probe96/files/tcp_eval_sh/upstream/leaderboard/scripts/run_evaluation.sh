#!/bin/bash
# Closed-loop evaluation of a TCP checkpoint on the CARLA leaderboard routes.
#   GPU_ID=1 PORT=2000 bash leaderboard/scripts/run_evaluation.sh /path/to/best_epoch=xx.ckpt
# Starts its own CARLA 0.9.10.1 server on the same GPU as the agent.

export CARLA_ROOT=${CARLA_ROOT:-/home/user/carla/CARLA_0.9.10.1}
export CARLA_SERVER=${CARLA_ROOT}/CarlaUE4.sh
export PYTHONPATH=$PYTHONPATH:${CARLA_ROOT}/PythonAPI
export PYTHONPATH=$PYTHONPATH:${CARLA_ROOT}/PythonAPI/carla
export PYTHONPATH=$PYTHONPATH:$CARLA_ROOT/PythonAPI/carla/dist/carla-0.9.10-py3.7-linux-x86_64.egg
export PYTHONPATH=$PYTHONPATH:leaderboard
export PYTHONPATH=$PYTHONPATH:leaderboard/team_code
export PYTHONPATH=$PYTHONPATH:scenario_runner

export LEADERBOARD_ROOT=leaderboard
export CHALLENGE_TRACK_CODENAME=SENSORS
export PORT=${PORT:-2000}
export TM_PORT=$((PORT + 6000))
export DEBUG_CHALLENGE=0
export REPETITIONS=1 # multiple evaluation runs
export RESUME=True
GPU_ID=${GPU_ID:-0}

# TCP evaluation
export ROUTES=leaderboard/data/evaluation_routes/routes_lav_valid.xml
export TEAM_AGENT=team_code/tcp_agent.py
export TEAM_CONFIG=${1:-log/TCP/best_model.ckpt}
export CHECKPOINT_ENDPOINT=results_TCP_${PORT}.json
export SCENARIOS=leaderboard/data/scenarios/all_towns_traffic_scenarios.json
export SAVE_PATH=data/results_TCP_${PORT}/
mkdir -p ${SAVE_PATH}

# Simulator: off-screen rendering on GPU ${GPU_ID}
SDL_HINT_CUDA_DEVICE=${GPU_ID} CUDA_VISIBLE_DEVICES=${GPU_ID} ${CARLA_SERVER} -carla-rpc-port=${PORT} -opengl -RenderOffScreen -nosound > carla_${PORT}.log 2>&1 &
CARLA_PID=$!
trap "kill -9 ${CARLA_PID} 2>/dev/null" EXIT
# wait until the RPC port answers (the first start of a town can take a minute)
for i in $(seq 1 60); do
    (echo > /dev/tcp/localhost/${PORT}) >/dev/null 2>&1 && break
    sleep 2
done
sleep 10

# Agent
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128
export OMP_NUM_THREADS=8

python3 ${LEADERBOARD_ROOT}/leaderboard/leaderboard_evaluator.py \
--scenarios=${SCENARIOS}  \
--routes=${ROUTES} \
--repetitions=${REPETITIONS} \
--track=${CHALLENGE_TRACK_CODENAME} \
--checkpoint=${CHECKPOINT_ENDPOINT} \
--agent=${TEAM_AGENT} \
--agent-config=${TEAM_CONFIG} \
--debug=${DEBUG_CHALLENGE} \
--resume=${RESUME} \
--port=${PORT} \
--trafficManagerPort=${TM_PORT}

python3 tools/result_parser.py --xml ${ROUTES} --results ${CHECKPOINT_ENDPOINT} --save_dir ${SAVE_PATH}
