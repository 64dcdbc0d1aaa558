"""setup.py for the fine-tuning package.

Dependencies are read from requirements.txt; CUDA-specific pins are chosen from the locally
installed torch so that `pip install -e .[flash-attn,deepspeed]` resolves on any CUDA 11.8 / 12.x box.
"""
import os
import platform
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

from setuptools import find_packages, setup


def parse_requirements():
    install_requires = []
    dependency_links = []
    with open("requirements.txt", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("--extra-index-url"):
                dependency_links.append(line.split()[-1])
                continue
            install_requires.append(line)
    return install_requires, dependency_links


def cuda_version() -> str:
    """CUDA version of the installed torch build, e.g. '124'. Falls back to nvcc."""
    try:
        import torch

        if torch.version.cuda:
            return torch.version.cuda.replace(".", "")
    except ImportError:
        pass
    try:
        out = subprocess.check_output(["nvcc", "--version"], text=True)
        match = re.search(r"release (\d+)\.(\d+)", out)
        if match:
            return match.group(1) + match.group(2)
    except (OSError, subprocess.CalledProcessError):
        pass
    raise RuntimeError("Could not determine the CUDA version; install a CUDA build of torch first.")


def torch_version_tuple():
    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        return (2, 6)
    match = re.match(r"^(\d+)\.(\d+)", torch_version)
    return (int(match.group(1)), int(match.group(2)))


install_requires, dependency_links = parse_requirements()

# pin xformers to the release built against the installed torch
major, minor = torch_version_tuple()
xformers_pins = {
    (2, 6): "xformers==0.0.29.post3",
    (2, 5): "xformers==0.0.28.post3",
    (2, 4): "xformers==0.0.27.post2",
    (2, 3): "xformers==0.0.26.post1",
}
install_requires = [r for r in install_requires if not r.startswith("xformers")]
if (major, minor) in xformers_pins:
    install_requires.append(xformers_pins[(major, minor)])

if platform.machine() != "x86_64":
    # no prebuilt wheels for these on aarch64
    install_requires = [r for r in install_requires if not r.startswith(("causal-conv1d", "mamba-ssm"))]

CUDA = cuda_version()
extras_require = {
    "flash-attn": ["flash-attn==2.7.4.post1"],
    "ring-flash-attn": ["flash-attn==2.7.4.post1", "ring-flash-attn>=0.1.4", "yunchang==0.6.0"],
    "deepspeed": ["deepspeed==0.16.7", "deepspeed-kernels"],
    "mamba-ssm": ["mamba-ssm==2.2.4", "causal_conv1d"],
    "auto-gptq": ["auto-gptq==0.7.1", "optimum==1.24.0"],
    "vllm": ["vllm==0.8.5"],
    "apex": [f"apex @ git+https://github.com/NVIDIA/apex.git@24.04.01#egg=apex&cuda={CUDA}"],
    "fp8": ["transformer-engine[pytorch]==1.13.0", "torchao"],
    "galore": ["galore_torch"],
    "optimizers": ["galore_torch", "apollo-torch", "lomo-optim==0.1.1", "torch-optimi==0.2.1", "schedulefree>=1.3.0"],
    "ray": ["ray[train]"],
}

setup(
    name="ft-suite",
    version="0.9.0",
    description="LLM fine-tuning and alignment recipes",
    package_dir={"": "src"},
    packages=find_packages("src"),
    python_requires=">=3.10",
    install_requires=install_requires,
    dependency_links=dependency_links,
    extras_require=extras_require,
    entry_points={
        "console_scripts": [
            "ft-train=ft_suite.cli.train:main",
            "ft-merge=ft_suite.cli.merge_lora:main",
            "ft-eval=ft_suite.cli.evaluate:main",
        ]
    },
)
