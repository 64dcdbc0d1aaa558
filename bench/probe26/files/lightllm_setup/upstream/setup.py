import os
import subprocess

from setuptools import find_packages, setup

package_data = {"lightllm": ["common/all_kernel_configs/*/*.json", "common/triton_utils/*.json"]}


def get_cuda_version():
    try:
        out = subprocess.check_output(["nvcc", "--version"]).decode()
        return out.strip().split("release ")[-1].split(",")[0]
    except (OSError, subprocess.CalledProcessError):
        return None


def get_version():
    version = "2.0.0"
    cuda_version = get_cuda_version()
    if cuda_version is not None and os.environ.get("LIGHTLLM_LOCAL_VERSION", "1") == "1":
        version += "+cu" + cuda_version.replace(".", "")
    return version


install_requires = [
    "torch==2.5.1",
    "triton==3.1.0",
    "transformers>=4.45.0",
    "safetensors",
    "sentencepiece",
    "einops",
    "numpy<2.0",
    "rpyc",
    "pyzmq",
    "uvloop",
    "fastapi",
    "uvicorn",
    "nvidia-ml-py",
    "flashinfer-python==0.2.2",
]

extras_require = {
    "fp8": ["vllm==0.6.4.post1"],
    "test": ["pytest", "pytest-xdist"],
}

setup(
    name="lightllm",
    version=get_version(),
    packages=find_packages(exclude=("build", "include", "test", "dist", "docs", "benchmarks", "lightllm.egg-info")),
    author="model toolchain",
    author_email="",
    description="lightllm for inference LLM",
    long_description="",
    long_description_content_type="text/markdown",
    url="",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Operating System :: POSIX :: Linux",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
    ],
    python_requires=">=3.9.16",
    install_requires=install_requires,
    extras_require=extras_require,
    package_data=package_data,
)
