FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu22.04
ARG DEBIAN_FRONTEND=noninteractive

# renderer runs headless through EGL, libglvnd ships the NVIDIA EGL vendor file
ENV PYOPENGL_PLATFORM=egl
ENV NVIDIA_VISIBLE_DEVICES=all
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics

RUN apt-get update && apt-get install -y --no-install-recommends \
        git wget curl ca-certificates \
        python3.10 python3.10-dev python3-pip python-is-python3 \
        libglfw3-dev libgles2-mesa-dev libosmesa6-dev freeglut3-dev \
        libegl1 libgl1 libglvnd0 libglib2.0-0 libsm6 libxrender1 libxext6 \
        ffmpeg ninja-build build-essential \
    && rm -rf /var/lib/apt/lists/*

RUN pip install --no-cache-dir --upgrade pip setuptools wheel

# PyTorch built against CUDA 11.7
RUN pip install --no-cache-dir torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu117

# detectron2 compiles its CUDA ops at install time; make sure all our cards are covered
ENV FORCE_CUDA=1
ENV TORCH_CUDA_ARCH_LIST="6.0;7.0;7.5;8.0;8.6+PTX"
RUN pip install --no-cache-dir 'git+https://github.com/facebookresearch/detectron2.git'

WORKDIR /hamer
COPY . /hamer

# ViTPose pins mmcv 1.3.9; build the full ops so the top-down pipeline can use GPU NMS
RUN MMCV_WITH_OPS=1 pip install --no-cache-dir mmcv==1.3.9
RUN pip install --no-cache-dir -v -e third-party/ViTPose

RUN pip install --no-cache-dir -e .[all]

# fetch MANO-free demo data (checkpoints + ViTPose weights)
RUN bash fetch_demo_data.sh

ENV CUDA_VISIBLE_DEVICES=0
CMD ["python", "demo.py", "--img_folder", "example_data", "--out_folder", "demo_out", "--batch_size", "48", "--side_view", "--save_mesh", "--full_frame"]
