import math
import os
import shlex
import subprocess
import uuid
from dataclasses import dataclass
from typing import List, Optional

import tyro


@dataclass
class Args:
    env_ids: List[str]
    """the ids of the environment to compare"""
    command: str
    """the command to run"""
    num_seeds: int = 3
    """the number of random seeds"""
    start_seed: int = 1
    """the number of the starting seed"""
    workers: int = 0
    """the number of workers to run benchmark experimenets"""
    auto_tag: bool = True
    """if toggled, the runs will be tagged with git tags, commit, and pull request number if possible"""
    slurm_template_path: Optional[str] = None
    """the path to the slurm template file (see docs for more details)"""
    slurm_gpus_per_task: Optional[int] = None
    """the number of gpus per task to use for slurm jobs"""
    slurm_total_cpus: Optional[int] = None
    """the number of gpus per task to use for slurm jobs"""
    slurm_ntasks: Optional[int] = None
    """the number of tasks to use for slurm jobs"""
    slurm_nodes: Optional[int] = None
    """the number of nodes to use for slurm jobs"""
    gpu_round_robin: bool = False
    """if toggled, each worker is pinned to one GPU (round robin over `nvidia-smi -L`) via CUDA_VISIBLE_DEVICES"""


def count_gpus() -> int:
    """Number of GPUs on this host, as reported by the NVIDIA driver."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
    except (FileNotFoundError, subprocess.CalledProcessError):
        return 0
    return len([line for line in out.splitlines() if line.startswith("GPU ")])


def run_experiment(command: str, gpu_id: Optional[int] = None):
    command_list = shlex.split(command)
    env = os.environ.copy()
    if gpu_id is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu_id)
    print(f"running {command}" + (f" on GPU {gpu_id}" if gpu_id is not None else ""))
    fd = subprocess.Popen(command_list, env=env)
    return_code = fd.wait()
    assert return_code == 0


def autotag() -> str:
    wandb_tag = ""
    print("autotag feature is enabled")
    try:
        git_tag = subprocess.check_output(["git", "describe", "--tags"]).decode("ascii").strip()
        wandb_tag = f"{git_tag}"
        print(f"identified git tag: {git_tag}")
    except subprocess.CalledProcessError:
        return wandb_tag

    git_commit = subprocess.check_output(["git", "rev-parse", "--verify", "HEAD"]).decode("ascii").strip()
    try:
        # try finding the pull request number on github
        prs = subprocess.check_output(["gh", "pr", "list", "--search", git_commit, "--state", "merged"]).decode("ascii")
        if prs:
            pr = prs.split()[0]
            wandb_tag += f",pr-{pr}"
        print(f"identified github pull request: {pr}")
    except Exception as e:
        print(e)
    return wandb_tag


if __name__ == "__main__":
    args = tyro.cli(Args)
    if args.auto_tag:
        existing_wandb_tag = os.environ.get("WANDB_TAGS", "")
        wandb_tag = autotag()
        if len(wandb_tag) > 0:
            if len(existing_wandb_tag) > 0:
                os.environ["WANDB_TAGS"] = ",".join([existing_wandb_tag, wandb_tag])
            else:
                os.environ["WANDB_TAGS"] = wandb_tag

    commands = []
    for seed in range(0, args.num_seeds):
        for env_id in args.env_ids:
            commands += [" ".join([args.command, "--env-id", env_id, "--seed", str(args.start_seed + seed)])]

    print("======= commands to run:")
    for command in commands:
        print(command)

    if args.workers > 0 and args.slurm_template_path is None:
        from concurrent.futures import ThreadPoolExecutor

        num_gpus = count_gpus() if args.gpu_round_robin else 0
        executor = ThreadPoolExecutor(max_workers=args.workers, thread_name_prefix="cleanrl-benchmark-worker-")
        for i, command in enumerate(commands):
            gpu_id = i % num_gpus if num_gpus > 0 else None
            executor.submit(run_experiment, command, gpu_id)
        executor.shutdown(wait=True)
    else:
        print("not running the experiments because --workers is set to 0; just printing the commands to run")

    # SLURM logic
    if args.slurm_template_path is not None:
        if not os.path.exists("slurm"):
            os.makedirs("slurm")
        if not os.path.exists("slurm/logs"):
            os.makedirs("slurm/logs")
        print("======= slurm commands to run:")
        with open(args.slurm_template_path) as f:
            slurm_template = f.read()
        slurm_template = slurm_template.replace("{{array}}", f"0-{len(commands) - 1}%{args.workers}")
        slurm_template = slurm_template.replace(
            "{{seeds}}", f"({' '.join([str(args.start_seed + int(seed)) for seed in range(args.num_seeds)])})"
        )
        slurm_template = slurm_template.replace("{{len_seeds}}", f"{args.num_seeds}")
        slurm_template = slurm_template.replace("{{command}}", args.command)
        slurm_template = slurm_template.replace("{{gpus_per_task}}", f"{args.slurm_gpus_per_task}")
        total_gpus = args.slurm_gpus_per_task * args.slurm_ntasks
        slurm_cpus_per_gpu = math.ceil(args.slurm_total_cpus / total_gpus)
        slurm_template = slurm_template.replace("{{cpus_per_gpu}}", f"{slurm_cpus_per_gpu}")
        slurm_template = slurm_template.replace("{{ntasks}}", f"{args.slurm_ntasks}")
        if args.slurm_nodes is not None:
            slurm_template = slurm_template.replace("{{nodes}}", f"#SBATCH --nodes={args.slurm_nodes}")
        else:
            slurm_template = slurm_template.replace("{{nodes}}", "")
        filename = str(uuid.uuid4())
        open(os.path.join("slurm", f"{filename}.slurm"), "w").write(slurm_template)
        slurm_path = os.path.join("slurm", f"{filename}.slurm")
        print(f"saving command in {slurm_path}")
        if args.workers > 0:
            job_id = subprocess.check_output(["sbatch", "--parsable", slurm_path]).decode("utf-8").strip()
            print(f"Job ID: {job_id}")
