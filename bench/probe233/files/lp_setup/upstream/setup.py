import re
import subprocess

from setuptools import find_packages, setup

VERSION = "1.3.1"

# add the README.md file to the long_description
with open("README.md", "r") as fh:
    long_description = fh.read()


def get_cuda_version():
    """Return the CUDA toolkit version reported by nvcc (e.g. 12.1), or None."""
    nvcc_paths = ["nvcc", "/usr/local/cuda/bin/nvcc"]
    for nvcc in nvcc_paths:
        try:
            output = subprocess.check_output([nvcc, "--version"]).decode()
            match = re.search(r"release (\d+\.\d+)", output)
            if match:
                return float(match.group(1))
        except (FileNotFoundError, subprocess.CalledProcessError):
            continue
    print("nvcc is not installed.")
    return None


# DALI wheels are built per CUDA major version; pick the one matching the toolkit
cuda_version = get_cuda_version()
if cuda_version is not None and cuda_version >= 12.0:
    dali = "nvidia-dali-cuda120"
elif cuda_version is not None and cuda_version >= 11.0:
    dali = "nvidia-dali-cuda110"
else:
    dali = "nvidia-dali-cuda120"
    print("WARNING! CUDA not found. Some training/inference features will not work.")

print(f"Found CUDA version: {cuda_version}, using DALI: {dali}")

# basic requirements
install_requires = [
    "fiftyone",
    "h5py",
    "hydra-core",
    "imgaug",
    "kaleido",  # export plotly figures
    "kornia",
    "lightning",
    "matplotlib",
    "moviepy",
    "opencv-python",
    "pandas>=2.0.0",
    "pillow",
    "plotly",
    "scikit-learn",
    "seaborn",
    "streamlit",
    "tensorboard",
    "torch>=2.0.0",
    "torchtyping",
    "torchvision",
    "typeguard",
    "typing",
    dali,
]

# additional requirements
extras_require = {
    "dev": {
        "black",
        "flake8",
        "isort",
        "pytest",
        "requests",
        "sphinx",
        "sphinx_rtd_theme",
        "sphinx-rtd-dark-mode",
        "sphinx-automodapi",
        "sphinx-copybutton",
        "sphinx-design",
    },
    "extra_models": {
        "transformers",
        "segment_anything @ git+https://github.com/facebookresearch/segment-anything.git",
    },
}


setup(
    name="lightning-pose",
    packages=find_packages(),
    version=VERSION,
    description="Semi-supervised pose estimation using pytorch lightning",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="Dan Biderman and Matt Whiteway",
    install_requires=install_requires,
    extras_require=extras_require,
    url="https://github.com/danbider/lightning-pose",
    keywords=["machine learning", "deep learning", "computer_vision"],
    python_requires=">=3.8",
    # DALI wheels are hosted on NVIDIA's index, not PyPI
    dependency_links=["https://developer.download.nvidia.com/compute/redist"],
)
