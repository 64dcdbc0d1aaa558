#!/bin/bash
# Few-shot sweep for TabLLM on the 9 public datasets (4 GPUs, one node).
#   bash scripts/run_fewshot_sweep.sh meta-llama/Llama-2-7b-hf
set -e

MODEL=${1:-meta-llama/Llama-2-7b-hf}
NUM_GPUS=${NUM_GPUS:-4}
SEEDS="42 1024 0 1 32"
SHOTS="4 8 16 32 64 128 256"
DATASETS="income car heart diabetes creditg bank blood calhousing jungle"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TOKENIZERS_PARALLELISM=false
export HF_HOME=${HF_HOME:-$HOME/.cache/huggingface}

nvidia-smi -L
python -c "import torch; assert torch.cuda.is_available(), 'no GPU'; print(torch.cuda.device_count(), 'GPUs')"

mkdir -p logs/tabllm
for dataset in $DATASETS; do
  for shots in $SHOTS; do
    for seed in $SEEDS; do
      out=outputs/tabllm/${dataset}/${shots}/${seed}
      if [ -f "$out/${dataset}_${shots}_${seed}.json" ]; then
        continue
      fi
      echo "=== $dataset shots=$shots seed=$seed ==="
      accelerate launch \
        --multi_gpu \
        --num_processes "$NUM_GPUS" \
        --mixed_precision bf16 \
        --main_process_port 29511 \
        tabllm/finetune_llm.py \
          --dataset "$dataset" \
          --num-shots "$shots" \
          --seed "$seed" \
          --model "$MODEL" \
          --output-dir "$out" \
        2>&1 | tee "logs/tabllm/${dataset}_${shots}_${seed}.log"
    done
  done
done

python tabllm/aggregate_results.py --root outputs/tabllm --out results/tabllm_fewshot.csv
