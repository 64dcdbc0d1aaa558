# DUSt3R / MASt3R demo image (GPU).
#
#   docker compose -f docker/docker-compose-cuda.yml up --build
#   -> gradio demo on http://localhost:7860
#
# The RoPE CUDA kernels (croco/models/curope) are compiled at build time; without
# them DUSt3R falls back to a slower pure-PyTorch RoPE.
FROM nvcr.io/nvidia/pytorch:24.01-py3

LABEL description="Docker container for DUSt3R with dependencies installed. CUDA VERSION"

ARG DEBIAN_FRONTEND=noninteractive
ARG MODEL_NAME="DUSt3R_ViTLarge_BaseDecoder_512_dpt"

ENV DEVICE="cuda"
ENV MODEL="${MODEL_NAME}.pth"
ENV GRADIO_SERVER_PORT=7860
ENV PIP_NO_CACHE_DIR=1
ENV PYTHONUNBUFFERED=1
# compile curope for every architecture we deploy on (V100, T4, A100, A10/3090, L4/4090, H100)
ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0"
ENV NVIDIA_VISIBLE_DEVICES=all
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics

RUN apt-get update && apt-get install -y --no-install-recommends \
        git \
        libgl1 \
        libglib2.0-0 \
        libegl1 \
        ffmpeg \
        wget \
    && rm -rf /var/lib/apt/lists/*

RUN git clone --recursive https://github.com/naver/dust3r /dust3r
WORKDIR /dust3r

# the base image already ships torch/torchvision built against its CUDA; don't let pip replace them
RUN sed -i -e '/^torch$/d' -e '/^torchvision$/d' requirements.txt \
    && pip install -r requirements.txt \
    && pip install -r requirements_optional.txt \
    && pip install opencv-python==4.8.0.74

WORKDIR /dust3r/croco/models/curope/
RUN python setup.py build_ext --inplace

WORKDIR /dust3r
RUN mkdir -p checkpoints \
    && wget -q -P checkpoints https://download.europe.naverlabs.com/ComputerVision/DUSt3R/${MODEL_NAME}.pth

# entrypoint: optional HF login, then the gradio demo
COPY entrypoint.sh /entrypoint.sh
RUN chmod +x /entrypoint.sh

EXPOSE 7860

HEALTHCHECK --interval=60s --timeout=10s --start-period=120s \
    CMD nvidia-smi > /dev/null && curl -fs http://localhost:${GRADIO_SERVER_PORT}/ > /dev/null || exit 1

# entrypoint.sh runs: python3 demo.py --weights checkpoints/$MODEL --device $DEVICE --local_network
ENTRYPOINT ["/entrypoint.sh"]
