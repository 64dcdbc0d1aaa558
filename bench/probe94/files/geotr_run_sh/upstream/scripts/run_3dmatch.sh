#!/usr/bin/env bash
# Train / test / evaluate GeoTransformer on 3DMatch and 3DLoMatch.
#
#   bash scripts/run_3dmatch.sh train            # 4-GPU DDP training
#   bash scripts/run_3dmatch.sh test 30 40       # test epochs 30..40 on both benchmarks
#   bash scripts/run_3dmatch.sh eval 40          # RANSAC-free (LGR) evaluation of epoch 40
#
# Environment overrides: GPUS (default "0,1,2,3"), GPU (default 0), EXP, PORT.
set -u

EXP=${EXP:-geotransformer.3dmatch.stage4.gse.k3.max.oacl.stage2.sinkhorn}
GPUS=${GPUS:-0,1,2,3}
GPU=${GPU:-0}
PORT=${PORT:-29501}
NUM_GPUS=$(echo ${GPUS} | tr ',' '\n' | wc -l)
MODE=${1:-train}

cd "$(dirname "$0")/../experiments/${EXP}" || exit 1

case "${MODE}" in
  train)
    echo "Training ${EXP} on GPUs ${GPUS} (${NUM_GPUS} processes)"
    export OMP_NUM_THREADS=4
    export NCCL_DEBUG=WARN
    export NCCL_IB_DISABLE=1
    CUDA_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch \
      --nproc_per_node=${NUM_GPUS} --master_port=${PORT} \
      trainval.py "${@:2}"
    ;;

  test)
    START=${2:-30}
    END=${3:-40}
    for EPOCH in $(seq ${START} ${END}); do
      for BENCHMARK in 3DMatch 3DLoMatch; do
        echo "Testing epoch ${EPOCH} on ${BENCHMARK}"
        CUDA_VISIBLE_DEVICES=${GPU} python test.py --test_epoch=${EPOCH} --benchmark=${BENCHMARK}
      done
    done
    ;;

  eval)
    EPOCH=${2:-40}
    for BENCHMARK in 3DMatch 3DLoMatch; do
      for NUM_CORR in 250 500 1000 2500 5000; do
        # RANSAC with different numbers of correspondences
        CUDA_VISIBLE_DEVICES=${GPU} python eval.py --test_epoch=${EPOCH} --benchmark=${BENCHMARK} --method=ransac --num_corr=${NUM_CORR}
      done
      # LGR (local-to-global registration), no RANSAC
      python eval.py --test_epoch=${EPOCH} --benchmark=${BENCHMARK} --method=lgr
    done
    ;;

  demo)
    CUDA_VISIBLE_DEVICES=${GPU} python demo.py \
      --src_file=../../data/demo/src.npy \
      --ref_file=../../data/demo/ref.npy \
      --gt_file=../../data/demo/gt.npy \
      --weights=../../weights/geotransformer-3dmatch.pth.tar
    ;;

  *)
    echo "Unknown mode: ${MODE} (expected train|test|eval|demo)"
    exit 1
    ;;
esac
