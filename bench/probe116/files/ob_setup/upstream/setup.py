import os
import subprocess

from setuptools import find_packages, setup

OPTIMUM_BENCHMARK_VERSION = "0.0.1"


def is_nvidia_system():
    try:
        subprocess.run("nvidia-smi", check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return True
    except Exception:
        return False


def is_rocm_system():
    try:
        subprocess.run("rocm-smi", check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return True
    except Exception:
        return False


OPTIMUM_VERSION = "1.13.0"

INSTALL_REQUIRES = [
    # Mandatory HF dependencies
    f"optimum>={OPTIMUM_VERSION}",  # backends, tasks and input generation
    "accelerate",  # distributed inference and no weights init
    # Hydra
    "omegaconf==2.3.0",
    "hydra-core==1.3.2",
    "hydra_colorlog==1.2.0",
    "hydra-joblib-launcher==1.2.0",
    # Other
    "codecarbon==2.3.1",
    "psutil==5.9.0",
    "pandas>=2.0.0",
]

# We may allow to install CUDA or RoCm dependencies even when building in a non-CUDA or non-ROCm environment.
USE_CUDA = os.environ.get("USE_CUDA", None) == "1"
USE_ROCM = os.environ.get("USE_ROCM", None) == "1"

if USE_CUDA or is_nvidia_system():
    INSTALL_REQUIRES.append("py3nvml==0.2.7")

if USE_ROCM or is_rocm_system():
    INSTALL_REQUIRES.append("pyrsmi@git+https://github.com/RadeonOpenCompute/pyrsmi.git")

EXTRAS_REQUIRE = {
    "test": ["pytest"],
    "quality": ["black", "ruff"],
    "report": ["flatten_dict", "matplotlib", "seaborn", "rich"],
    # cpu backends
    "openvino": [f"optimum[openvino,nncf]>={OPTIMUM_VERSION}"],
    "onnxruntime": [f"optimum[onnxruntime]>={OPTIMUM_VERSION}"],
    "neural-compressor": [f"optimum[neural-compressor]>={OPTIMUM_VERSION}"],
    # gpu backends
    "onnxruntime-gpu": [f"optimum[onnxruntime-gpu]>={OPTIMUM_VERSION}"],
    "onnxruntime-training": ["torch-ort", "onnxruntime-training"],
    "text-generation-inference": ["docker==6.1.3"],
    # specific settings
    "diffusers": ["diffusers"],
    "peft": ["peft"],
    "bitsandbytes": ["bitsandbytes"],
    "auto-gptq": ["auto-gptq"],
    "flash-attn": ["flash-attn==2.3.3"],
    "deepspeed": ["deepspeed"],
}


setup(
    name="optimum-benchmark",
    version=OPTIMUM_BENCHMARK_VERSION,
    packages=find_packages(),
    install_requires=INSTALL_REQUIRES,
    extras_require=EXTRAS_REQUIRE,
    entry_points={
        "console_scripts": [
            "optimum-benchmark=optimum_benchmark.experiment:run_experiment",
            "optimum-report=optimum_benchmark.aggregators.report:main",
        ]
    },
    python_requires=">=3.8",
    description="Optimum-Benchmark is a unified multi-backend utility for benchmarking "
    "Transformers, Timm, Diffusers and Sentence-Transformers with full support of "
    "Optimum's hardware optimizations & quantization schemes.",
    url="https://github.com/huggingface/optimum-benchmark",
    author="HuggingFace Inc. Special Ops Team",
    include_package_data=True,
    zip_safe=False,
)
