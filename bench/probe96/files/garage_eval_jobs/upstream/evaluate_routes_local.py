"""
Runs the CARLA leaderboard routes of a benchmark (longest6, Town13 validation, Bench2Drive) in parallel on one
workstation: one CARLA server + one agent process per GPU, several routes per GPU in sequence.
Adapted from the slurm version (evaluate_routes_slurm.py) for machines without a cluster scheduler.

Example:
  python evaluate_routes_local.py --routes_dir leaderboard/data/longest6_split --model_dir pretrained_models/tfpp \
      --out_root results/tfpp_longest6 --agent team_code/sensor_agent.py --jobs_per_gpu 1
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pynvml
import torch

CARLA_ROOT = os.environ.get('CARLA_ROOT', '/home/user/software/carla0915')
WORK_DIR = os.environ.get('WORK_DIR', str(Path(__file__).resolve().parent))


def get_free_gpus(min_free_mb=9000):
    """Returns the indices of GPUs that have at least min_free_mb free memory."""
    free = []
    try:
        pynvml.nvmlInit()
        for idx in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
            info = pynvml.nvmlDeviceGetMemoryInfo(handle)
            if info.free / 2 ** 20 >= min_free_mb:
                free.append(idx)
        pynvml.nvmlShutdown()
    except pynvml.NVMLError:
        # Fall back to nvidia-smi (e.g. inside containers without libnvidia-ml)
        out = subprocess.check_output(['nvidia-smi', '--query-gpu=index,memory.used,memory.total',
                                       '--format=csv,noheader,nounits'], encoding='utf-8')
        for line in out.strip().splitlines():
            idx, used, total = [int(v) for v in line.split(',')]
            if total - used >= min_free_mb:
                free.append(idx)
    return free


def bash_file_for_route(route, gpu, port, tm_port, args, result_file, log_dir):
    """Writes the bash script that starts a CARLA server and evaluates one route file with the agent."""
    route_name = Path(route).stem
    seed = random.randint(0, 10000)
    script = f'''#!/bin/bash
# Route {route_name} on GPU {gpu}
export CARLA_ROOT={CARLA_ROOT}
export CARLA_SERVER=${{CARLA_ROOT}}/CarlaUE4.sh
export PYTHONPATH=$PYTHONPATH:${{CARLA_ROOT}}/PythonAPI
export PYTHONPATH=$PYTHONPATH:${{CARLA_ROOT}}/PythonAPI/carla
export PYTHONPATH=$PYTHONPATH:${{CARLA_ROOT}}/PythonAPI/carla/dist/carla-0.9.15-py3.7-linux-x86_64.egg
export PYTHONPATH=$PYTHONPATH:{WORK_DIR}/leaderboard
export PYTHONPATH=$PYTHONPATH:{WORK_DIR}/scenario_runner
export LEADERBOARD_ROOT={WORK_DIR}/leaderboard
export SCENARIO_RUNNER_ROOT={WORK_DIR}/scenario_runner

export TEAM_AGENT={args.agent}
export TEAM_CONFIG={args.model_dir}
export CHECKPOINT_ENDPOINT={result_file}
export SAVE_PATH={log_dir}
export DIRECT=0
export UNCERTAINTY_WEIGHT=1
export STOP_CONTROL=1
export BENCHMARK={args.benchmark}

# The simulator renders on the GPU given by -graphicsadapter (Vulkan, off-screen)
SDL_VIDEODRIVER=offscreen ${{CARLA_SERVER}} -carla-rpc-port={port} -nosound -RenderOffScreen -carla-primary-port=0 -graphicsadapter={gpu} &
CARLA_PID=$!
sleep {args.carla_startup_time}

CUDA_VISIBLE_DEVICES={gpu} python -u ${{LEADERBOARD_ROOT}}/leaderboard/leaderboard_evaluator_local.py \\
    --routes={route} \\
    --repetitions=1 \\
    --track=SENSORS \\
    --checkpoint=${{CHECKPOINT_ENDPOINT}} \\
    --agent=${{TEAM_AGENT}} \\
    --agent-config=${{TEAM_CONFIG}} \\
    --debug=0 \\
    --resume=1 \\
    --timeout=600 \\
    --port={port} \\
    --traffic-manager-port={tm_port} \\
    --traffic-manager-seed={seed}

kill -9 $CARLA_PID || true
'''
    return script


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--routes_dir', required=True)
    parser.add_argument('--model_dir', required=True)
    parser.add_argument('--out_root', required=True)
    parser.add_argument('--agent', default='team_code/sensor_agent.py')
    parser.add_argument('--benchmark', default='longest6')
    parser.add_argument('--jobs_per_gpu', type=int, default=1)
    parser.add_argument('--gpus', type=str, default=None, help='comma separated list, default: all free GPUs')
    parser.add_argument('--min_free_mb', type=int, default=9000)
    parser.add_argument('--carla_startup_time', type=int, default=60)
    parser.add_argument('--base_port', type=int, default=10000)
    parser.add_argument('--dry_run', action='store_true')
    args = parser.parse_args()

    if args.gpus is not None:
        gpus = [int(g) for g in args.gpus.split(',')]
    else:
        gpus = get_free_gpus(args.min_free_mb)
    if len(gpus) == 0:
        gpus = list(range(torch.cuda.device_count()))
    if len(gpus) == 0:
        print('No GPU available, aborting.')
        sys.exit(1)
    print(f'Evaluating on GPUs {gpus}')

    routes = sorted(glob.glob(os.path.join(args.routes_dir, '*.xml')))
    out_root = Path(args.out_root)
    (out_root / 'run_bashs').mkdir(parents=True, exist_ok=True)
    (out_root / 'logs').mkdir(parents=True, exist_ok=True)
    (out_root / 'results').mkdir(parents=True, exist_ok=True)

    # Every slot gets its own CARLA port + traffic manager port so that servers don't collide
    slots = [(gpu, j) for gpu in gpus for j in range(args.jobs_per_gpu)]
    todo = []
    for i, route in enumerate(routes):
        route_name = Path(route).stem
        result_file = out_root / 'results' / f'{route_name}.json'
        if result_file.exists():
            with open(result_file, 'r', encoding='utf-8') as f:
                try:
                    res = json.load(f)
                    if res.get('_checkpoint', {}).get('progress', [0, 1])[0] == res.get('_checkpoint', {}).get('progress', [0, 1])[1]:
                        continue
                except json.JSONDecodeError:
                    pass
        todo.append((route, result_file))
    print(f'{len(todo)} of {len(routes)} routes left to evaluate')

    running = {}
    free_slots = list(range(len(slots)))
    while len(todo) > 0 or len(running) > 0:
        while len(todo) > 0 and len(free_slots) > 0:
            slot = free_slots.pop(0)
            gpu, j = slots[slot]
            route, result_file = todo.pop(0)
            port = args.base_port + 150 * slot
            tm_port = port + 50
            log_dir = out_root / 'logs' / Path(route).stem
            log_dir.mkdir(parents=True, exist_ok=True)
            script = bash_file_for_route(route, gpu, port, tm_port, args, result_file, log_dir)
            script_path = out_root / 'run_bashs' / f'eval_{Path(route).stem}.sh'
            with open(script_path, 'w', encoding='utf-8') as f:
                f.write(script)
            os.chmod(script_path, 0o755)
            if args.dry_run:
                print('would run', script_path)
                free_slots.append(slot)
                continue
            stdout = open(log_dir / 'run.log', 'w', encoding='utf-8')
            proc = subprocess.Popen(['bash', str(script_path)], stdout=stdout, stderr=subprocess.STDOUT)
            running[slot] = (proc, stdout, route)
            print(f'started {Path(route).stem} on GPU {gpu} (slot {slot}, port {port})')

        time.sleep(10)
        for slot in list(running.keys()):
            proc, stdout, route = running[slot]
            if proc.poll() is not None:
                stdout.close()
                print(f'finished {Path(route).stem} with code {proc.returncode}')
                del running[slot]
                free_slots.append(slot)

    print('All routes done; merge the results with tools/result_parser.py')


if __name__ == '__main__':
    main()
