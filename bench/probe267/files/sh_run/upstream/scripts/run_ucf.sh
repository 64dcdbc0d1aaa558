#!/bin/bash
# Reproduce the UCF-Crime / ShanghaiTech / XD-Violence numbers of the three
# weakly-supervised baselines on pre-extracted I3D (10-crop) features.
#
#   bash scripts/run_ucf.sh            # all three methods, GPU 0
#   GPU=2 bash scripts/run_ucf.sh      # pick another card
#
# Needs a running visdom server for RTFM / UR-DMU curves (started below).
set -e

GPU=${GPU:-0}
export CUDA_VISIBLE_DEVICES=${GPU}
export PYTHONPATH=$(pwd):${PYTHONPATH}

ROOT=${ROOT:-/data/vad}
LOG=logs/$(date +%Y%m%d_%H%M%S)
mkdir -p ${LOG}

echo "==> environment" | tee ${LOG}/env.txt
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee -a ${LOG}/env.txt
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a ${LOG}/env.txt

# visdom for the loss curves
if ! pgrep -f "visdom.server" > /dev/null; then
    nohup python -m visdom.server -port 8097 > ${LOG}/visdom.log 2>&1 &
    sleep 3
fi

# ---------------------------------------------------------------- RTFM
echo "==> RTFM / ShanghaiTech"
(cd RTFM && python main.py \
    --dataset shanghai \
    --feature-size 2048 \
    --rgb-list list/shanghai-i3d-train-10crop.list \
    --test-rgb-list list/shanghai-i3d-test-10crop.list \
    --gt list/gt-sh.npy \
    --batch-size 32 \
    --max-epoch 15000 \
    --model-name rtfm-sh \
    --seed 2022) 2>&1 | tee ${LOG}/rtfm_sh.log

# ---------------------------------------------------------------- MGFN
echo "==> MGFN / UCF-Crime"
(cd MGFN && python main.py \
    --datasetname UCF \
    --feat_extractor i3d \
    --rgb-list UCF_list/ucf-i3d.list \
    --test-rgb-list UCF_list/ucf-i3d-test.list \
    --gt UCF_list/gt-ucf-RTFM.npy \
    --batch_size 16 \
    --lr 0.001 \
    --max_epoch 1000 \
    --gpu 0 \
    --comment ucf_repro) 2>&1 | tee ${LOG}/mgfn_ucf.log

# ---------------------------------------------------------------- UR-DMU
echo "==> UR-DMU / UCF-Crime (3 seeds)"
for SEED in 2022 3407 42; do
    (cd UR-DMU && python ucf_main.py \
        --root_dir ${ROOT}/UCF_Crime_I3D \
        --output_path outputs/ \
        --model_path models/ \
        --lr [0.0001]*3000 \
        --num_iters 3000 \
        --seed ${SEED} \
        --gpus ${GPU}) 2>&1 | tee ${LOG}/urdmu_ucf_${SEED}.log
done

# XD-Violence runs on the second card if there is one, in parallel
if [ "$(nvidia-smi -L | wc -l)" -gt 1 ]; then
    echo "==> UR-DMU / XD-Violence on GPU 1"
    (cd UR-DMU && CUDA_VISIBLE_DEVICES=1 python xd_main.py \
        --root_dir ${ROOT}/XD_I3D \
        --output_path outputs/ \
        --model_path models/ \
        --gpus 0) > ${LOG}/urdmu_xd.log 2>&1 &
fi

wait
echo "all done, logs in ${LOG}"
