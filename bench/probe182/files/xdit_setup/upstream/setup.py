import os
import subprocess

from setuptools import find_packages, setup


def get_cuda_version():
    """Return the CUDA toolkit version reported by nvcc, e.g. '12.4'."""
    try:
        nvcc_output = subprocess.check_output(["nvcc", "--version"]).decode("utf-8")
        version_line = [line for line in nvcc_output.split("\n") if "release" in line][0]
        cuda_version = version_line.split(" ")[-2].replace(",", "")
        return cuda_version
    except Exception as e:
        # no nvcc on the build machine: fall back to the cu121 wheels
        return "12.1"


def get_version():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "xfuser", "__version__.py")) as f:
        ns = {}
        exec(f.read(), ns)
    return ns["__version__"]


if __name__ == "__main__":
    with open("README.md", "r", encoding="utf-8") as f:
        long_description = f.read()

    cuda_version = get_cuda_version()
    fa_version = "flash-attn>=2.6.0" if cuda_version >= "11.8" else "flash-attn==2.5.9.post1"

    setup(
        name="xfuser",
        author="xDiT Team",
        author_email="fangjiarui123@gmail.com",
        packages=find_packages(),
        install_requires=[
            "torch>=2.1.0",
            "accelerate>=0.33.0",
            "transformers>=4.39.1",
            "sentencepiece>=0.1.99",
            "beautifulsoup4>=4.12.3",
            "distvae",
            "yunchang>=0.6.0",
            "pytest",
            "flask",
            "opencv-python",
            "imageio",
            "imageio-ffmpeg",
            "optimum-quanto",
            "ray",
        ],
        extras_require={
            "diffusers": [
                "diffusers>=0.31.0",  # NOTE: diffusers>=0.32.0.dev is necessary for CogVideoX and Flux
            ],
            "flash-attn": [
                fa_version,
            ],
            "optimum-quanto": [
                "optimum-quanto",
            ],
            "torchao": [
                "torchao>=0.7.1",
            ],
        },
        url="https://github.com/xdit-project/xDiT.",
        description="A Scalable Inference Engine for Diffusion Transformers (DiTs) on Multiple Computing Devices",
        long_description=long_description,
        long_description_content_type="text/markdown",
        version=get_version(),
        classifiers=[
            "Programming Language :: Python :: 3",
            "Operating System :: OS Independent",
            "Environment :: GPU :: NVIDIA CUDA",
        ],
        include_package_data=True,
        python_requires=">=3.10",
    )
