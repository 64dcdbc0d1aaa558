#!/bin/bash
# FairMOT DLA-34 fine-tuned on the basketball subset of SportsMOT
# (initialised from the CrowdHuman-pretrained model, 4 x RTX 2080Ti, ~9h).
#
#   cd src && bash ../experiments/bball_dla34.sh
#
set -euo pipefail

EXP_ID=${EXP_ID:-bball_dla34}
GPUS=${GPUS:-0,1,2,3}
BATCH=${BATCH:-32}
PRETRAIN=${PRETRAIN:-../models/crowdhuman_dla34.pth}

# the data-parallel scatter in models/data_parallel.py uses torch.cuda.comm;
# P2P over PCIe is flaky on our 2080Ti box, force it through host memory
export NCCL_P2P_DISABLE=1
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export OMP_NUM_THREADS=4

# (re)build DCNv2 if the extension is missing, e.g. after a CUDA upgrade
if ! python -c "import sys; sys.path.insert(0, 'lib/models/networks/DCNv2'); import _ext" 2>/dev/null; then
    echo "building DCNv2 ..."
    (cd lib/models/networks/DCNv2 && rm -rf build && python setup.py build develop)
fi

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python train.py mot \
    --exp_id "${EXP_ID}" \
    --gpus "${GPUS}" \
    --batch_size "${BATCH}" \
    --num_workers 16 \
    --load_model "${PRETRAIN}" \
    --num_epochs 30 \
    --lr_step 20 \
    --lr 2e-4 \
    --data_cfg ../src/lib/cfg/bball.json \
    --reid_dim 128

# evaluate on the basketball val split (MOTA / IDF1 / HOTA with TrackEval)
python track.py mot \
    --exp_id "${EXP_ID}" \
    --gpus 0 \
    --load_model "../exp/mot/${EXP_ID}/model_last.pth" \
    --conf_thres 0.4 \
    --val_bball True

cd ..
