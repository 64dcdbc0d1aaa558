#!/usr/bin/env bash
# Set up a conda env for GET3D on a bare-metal machine (no docker).
# Tested with CUDA 11.1 driver >= 450 and an A100 / V100.
set -e

ENV_NAME=${ENV_NAME:-get3d}

conda create -y -n ${ENV_NAME} python=3.8
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate ${ENV_NAME}

# PyTorch with CUDA 11.1
pip install torch==1.9.0+cu111 torchvision==0.10.0+cu111 -f https://download.pytorch.org/whl/torch_stable.html

pip install ninja xatlas gdown
pip install git+https://github.com/NVlabs/nvdiffrast/
pip install meshzoo ipdb imageio gputil h5py point-cloud-utils imageio imageio-ffmpeg==0.4.4 pyspng==0.1.0
pip install urllib3 scipy click tqdm opencv-python==4.5.4.60

# Sanity check: make sure the GPU is visible and the CUDA plugins compile.
nvidia-smi
python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.version.cuda)"
python -c "import torch_utils.ops.upfirdn2d as u; u._init(); print('plugins OK')"

echo "Done. Launch training with e.g."
echo "  CUDA_VISIBLE_DEVICES=4,5,6,7 python train_3d.py --outdir=runs --data=./data/car --camera_path=./data/camera --gpus=4 --batch=32 --gamma=40 --data_camera_mode shapenet_car --dmtet_scale 1.0 --use_shapenet_split 1 --one_3d_generator 1 --fp32 0"
