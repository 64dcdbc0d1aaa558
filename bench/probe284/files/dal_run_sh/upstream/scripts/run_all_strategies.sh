#!/bin/bash
# Sweep every query strategy x dataset x seed with demo.py.
# Jobs are packed round-robin onto the GPUs listed in GPUS, one job per GPU
# at a time; a batch waits for all of its jobs before the next one starts.
#
#   GPUS="0 1 2 3" bash scripts/run_all_strategies.sh
#   DETERMINISTIC=1 bash scripts/run_all_strategies.sh      # bit-exact reruns

GPUS=(${GPUS:-0 1 2 3})
SEEDS=(1 2 3)
DATASETS=(MNIST FashionMNIST SVHN CIFAR10)
STRATEGIES=(RandomSampling LeastConfidence MarginSampling EntropySampling \
            LeastConfidenceDropout MarginSamplingDropout EntropySamplingDropout \
            KMeansSampling KCenterGreedy BALDDropout AdversarialBIM AdversarialDeepFool)

LOGDIR=${LOGDIR:-logs/$(date +%Y%m%d_%H%M)}
mkdir -p "$LOGDIR"

if [ "${DETERMINISTIC:-0}" = "1" ]; then
    export CUBLAS_WORKSPACE_CONFIG=:4096:8
    export PYTHONHASHSEED=0
fi

# keep numpy / MKL from oversubscribing the CPU when 4 jobs run at once
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4

n_init() {
    case $1 in
        MNIST|FashionMNIST) echo 100 ;;
        SVHN) echo 1000 ;;
        CIFAR10) echo 1000 ;;
    esac
}

i=0
for ds in "${DATASETS[@]}"; do
  for st in "${STRATEGIES[@]}"; do
    for seed in "${SEEDS[@]}"; do
      gpu=${GPUS[$((i % ${#GPUS[@]}))]}
      log="$LOGDIR/${ds}_${st}_seed${seed}.log"
      echo "[gpu $gpu] $ds $st seed=$seed -> $log"
      CUDA_VISIBLE_DEVICES=$gpu nohup python demo.py \
          --dataset_name "$ds" \
          --strategy_name "$st" \
          --seed "$seed" \
          --n_init_labeled "$(n_init "$ds")" \
          --n_query 1000 \
          --n_round 10 \
          --out_dir results > "$log" 2>&1 &
      i=$((i + 1))
      if (( i % ${#GPUS[@]} == 0 )); then
          wait
      fi
    done
  done
done
wait
echo "all done; summarise with: python tools/plot_curves.py --results results"
