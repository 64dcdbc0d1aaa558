#!/usr/bin/env sh
# Build all the CUDA extensions used by PoinTr / AdaPoinTr and the baselines (GRNet etc.).
# Requires nvcc from the same CUDA toolkit that your PyTorch was built with
# (check with `python -c "import torch; print(torch.version.cuda)"`).
HOME=`pwd`

# Turing / Ampere / Ada; add 6.1 if you still train on a 1080Ti
export TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"

# Chamfer Distance
cd $HOME/extensions/chamfer_dist && python setup.py install --user

# NOTE: For GRNet

# Cubic Feature Sampling
cd $HOME/extensions/cubic_feature_sampling && python setup.py install --user

# Gridding & Gridding Reverse
cd $HOME/extensions/gridding && python setup.py install --user

# Gridding Loss
cd $HOME/extensions/gridding_loss && python setup.py install --user

# EMD
cd $HOME/extensions/emd && python setup.py install --user

cd $HOME

# PointNet++ ops (furthest point sampling / gather)
pip install "git+https://github.com/erikwijmans/Pointnet2_PyTorch.git#egg=pointnet2_ops&subdirectory=pointnet2_ops_lib"

# GPU kNN
pip install --upgrade https://github.com/unlimblue/KNN_CUDA/releases/download/0.2/KNN_CUDA-0.2-py3-none-any.whl

echo "done. run \`python -c 'import chamfer, pointnet2_ops'\` to check the build"
