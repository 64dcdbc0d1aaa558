ARG CUDA_VER=11.8.0
ARG CUDNN_VER=8
FROM nvidia/cuda:${CUDA_VER}-cudnn${CUDNN_VER}-runtime-ubuntu22.04
LABEL maintainer "ESPnet developers"

ARG DEBIAN_FRONTEND=noninteractive
ARG TH_VERSION=2.1.0
ARG TH_CUDA=cu118
ARG THIS_USER=espnet

ENV TZ=Etc/UTC
ENV LC_ALL C.UTF-8
ENV LANG C.UTF-8
ENV CUDA_HOME=/usr/local/cuda
ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}

RUN apt-get update && apt-get -y install --no-install-recommends \
        bc build-essential ca-certificates cmake curl ffmpeg flac gawk git \
        libsndfile1-dev python3-dev python3-pip sox sudo unzip wget && \
    apt-get clean && rm -rf /var/lib/apt/lists/*

WORKDIR /opt
RUN git clone --depth 1 https://github.com/espnet/espnet.git

# PyTorch first, so that espnet's setup.py does not pull a different build.
RUN pip install --no-cache-dir torch==${TH_VERSION} torchaudio==${TH_VERSION} \
        --index-url https://download.pytorch.org/whl/${TH_CUDA}
RUN pip install --no-cache-dir -e "/opt/espnet[recipe]" && \
    pip install --no-cache-dir fast_bss_eval pesq pystoi

RUN useradd -ms /bin/bash ${THIS_USER} && chown -R ${THIS_USER} /opt/espnet
USER ${THIS_USER}
WORKDIR /opt/espnet/egs2
CMD ["/bin/bash"]
