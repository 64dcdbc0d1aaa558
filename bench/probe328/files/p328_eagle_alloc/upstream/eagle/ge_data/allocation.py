import argparse
import copy

parser = argparse.ArgumentParser(description="sp")
parser.add_argument("--outdir", type=str, default="0")
parser.add_argument("--model", type=str, default="llama3", choices=["vicuna", "llama2chat", "llama3"])
parser.add_argument("--gpus-per-proc", type=int, default=1, help="8B fits on one 80GB GPU, 70B needs 4")
parser.add_argument("--max-used-mb", type=int, default=2000, help="treat a GPU as busy above this many MiB")
args = parser.parse_args()
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

s = 0
e = 68000 - 1
# e=68 - 1

SCRIPTS = {
    "vicuna": "ge_data_all_vicuna.py",
    "llama2chat": "ge_data_all_llama2chat.py",
    "llama3": "ge_data_all_llama3.py",
}


def free_gpus(max_used_mb):
    """Indices of GPUs that are (almost) idle on this node, as reported by nvidia-smi."""
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=index,memory.used", "--format=csv,noheader,nounits"],
        text=True,
    )
    idle = []
    for line in out.strip().splitlines():
        idx, used = [x.strip() for x in line.split(",")]
        if int(used) <= max_used_mb:
            idle.append(int(idx))
    return idle


def group(ids, k):
    return [ids[i : i + k] for i in range(0, len(ids) - k + 1, k)]


gpus = group(free_gpus(args.max_used_mb), args.gpus_per_proc)
# gpus=[[0],[1],[2],[3],[4],[5],[6],[7]]
if not gpus:
    raise SystemExit("no idle GPUs found")
num_p = len(gpus)
outdir = "{}/sharegpt_{}_{}_mufp16".format(args.outdir, s, e)


def split_range(start, end, n, over=False):
    length = end - start + 1  # Include the end
    base_interval = length // n
    additional = length % n  # Get the remainder of the division
    intervals = []
    previous = start

    for i in range(n):
        current_interval = base_interval + (1 if i < additional else 0)
        if over:
            intervals.append((previous, previous + current_interval))
        else:
            intervals.append((previous, previous + current_interval - 1))  # '-1' because the end is inclusive
        previous += current_interval

    return intervals


def run_command(cmd):
    os.system(cmd)


if not os.path.exists(outdir):
    os.makedirs(outdir)


data_a = split_range(s, e, num_p, over=True)
commands = []
for i in range(num_p):
    index = i
    start = data_a[i][0]
    end = data_a[i][1]
    # gpu_index_str = [str(i) for i in gpu_index]
    # gpu_index_str=','.join(gpu_index_str)
    gpu_index = gpus[i]
    gpu_index_str = " ".join(map(str, gpu_index))
    # gpu_index_str='['+gpu_index_str+']'
    command = "python {} --start={} --end={} --index={} --gpu_index {} --outdir {}".format(
        SCRIPTS[args.model], start, end, index, gpu_index_str, outdir
    )
    commands.append(command)
# run_command(commands[0])
# commands=commands[:1]
with ThreadPoolExecutor(max_workers=len(commands)) as executor:
    for command in commands:
        executor.submit(run_command, command)
        print(command)
