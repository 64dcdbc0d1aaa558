#! /bin/bash
# Train the DGR inlier network on 3DMatch on top of a pretrained FCGF model.
#
# Usage:
#   ./scripts/train_3dmatch.sh [PATH_POSTFIX] [EXTRA_ARGS]
#   GPU=1 BATCH_SIZE=8 ./scripts/train_3dmatch.sh -b8 "--weights ./ResUNetBN2C-feat32-3dmatch-v0.05.pth"
#
# All hyper-parameters can be overridden through environment variables.

export PATH_POSTFIX=$1
export MISC_ARGS=$2

export DATA_ROOT="./outputs/Experiments"
export DATASET=${DATASET:-ThreeDMatchPairDataset03}
export THREED_MATCH_DIR=${THREED_MATCH_DIR:-/data/3dmatch/threedmatch}
export TRAINER=${TRAINER:-WeightedProcrustesTrainer}
export INLIER_MODEL=${INLIER_MODEL:-ResUNetBN2C}
export OPTIMIZER=${OPTIMIZER:-SGD}
export LR=${LR:-1e-1}
export MAX_EPOCH=${MAX_EPOCH:-100}
export BATCH_SIZE=${BATCH_SIZE:-4}
export ITER_SIZE=${ITER_SIZE:-1}
export VOXEL_SIZE=${VOXEL_SIZE:-0.05}
export POSITIVE_PAIR_SEARCH_VOXEL_SIZE_MULTIPLIER=${POSITIVE_PAIR_SEARCH_VOXEL_SIZE_MULTIPLIER:-4}
export CONV1_KERNEL_SIZE=${CONV1_KERNEL_SIZE:-7}
export EXP_GAMMA=${EXP_GAMMA:-0.99}
export RANDOM_SCALE=${RANDOM_SCALE:-True}
export KNN_SEARCH=${KNN_SEARCH:-gpu}
export NN_MAX_N=${NN_MAX_N:-500}
export GPU=${GPU:-0}

export TIME=$(date +"%Y-%m-%d_%H-%M-%S")
export VERSION=$(git rev-parse HEAD)

# Pin the job to one device; MinkowskiEngine allocates on the current device.
export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export PYTHONUNBUFFERED="True"

export OUT_DIR=${DATA_ROOT}/${DATASET}-v${VOXEL_SIZE}/${TRAINER}/${INLIER_MODEL}/${OPTIMIZER}-lr${LR}-e${MAX_EPOCH}-b${BATCH_SIZE}i${ITER_SIZE}${PATH_POSTFIX}/${TIME}

echo $OUT_DIR

mkdir -m 755 -p $OUT_DIR

LOG=${OUT_DIR}/log_${TIME}.txt

echo "Host: " $(hostname) | tee -a $LOG
echo "Conda " $(which conda) | tee -a $LOG
echo $(pwd) | tee -a $LOG
echo "Version: " $VERSION | tee -a $LOG
echo "Git diff" | tee -a $LOG
echo "" | tee -a $LOG
git diff | tee -a $LOG
echo "" | tee -a $LOG
nvidia-smi | tee -a $LOG
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))" | tee -a $LOG

# Training
python train.py \
  --weights ${WEIGHTS} \
  --dataset ${DATASET} \
  --threed_match_dir ${THREED_MATCH_DIR} \
  --trainer ${TRAINER} \
  --inlier_model ${INLIER_MODEL} \
  --optimizer ${OPTIMIZER} \
  --lr ${LR} \
  --batch_size ${BATCH_SIZE} \
  --val_batch_size ${BATCH_SIZE} \
  --iter_size ${ITER_SIZE} \
  --max_epoch ${MAX_EPOCH} \
  --voxel_size ${VOXEL_SIZE} \
  --out_dir ${OUT_DIR} \
  --use_random_scale ${RANDOM_SCALE} \
  --positive_pair_search_voxel_size_multiplier ${POSITIVE_PAIR_SEARCH_VOXEL_SIZE_MULTIPLIER} \
  --inlier_conv1_kernel_size ${CONV1_KERNEL_SIZE} \
  --exp_gamma ${EXP_GAMMA} \
  --knn_search_method ${KNN_SEARCH} \
  --nn_max_n ${NN_MAX_N} \
  --use_gpu True \
  $MISC_ARGS 2>&1 | tee -a $LOG

# Test
python -m scripts.test_3dmatch \
  --threed_match_dir ${THREED_MATCH_DIR} \
  --weights ${OUT_DIR}/best_val_checkpoint.pth \
  --knn_search_method ${KNN_SEARCH} \
  2>&1 | tee -a $LOG
