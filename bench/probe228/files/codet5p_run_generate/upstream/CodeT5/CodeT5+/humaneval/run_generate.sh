#!/bin/bash
# Shard the 164 HumanEval problems over the local GPUs, one generate_codet5p.py process per GPU,
# then post-process and score with human-eval.
#   bash run_generate.sh codet5p-2b 0.2 200
model=${1:-codet5p-2b}
temp=${2:-0.2}
pred_num=${3:-200}
max_len=800
num_seqs_per_iter=${4:-25}

output_path=preds/${model}_T${temp}_N${pred_num}

mkdir -p ${output_path}
echo 'Output path: '$output_path
echo 'Model to eval: '$model

# 164 problems, 21 per GPU if GPU=8
index=0
gpu_num=$(nvidia-smi --list-gpus | wc -l)
echo "found ${gpu_num} GPUs"
per_gpu=$(( (164 + gpu_num - 1) / gpu_num ))

for ((i = 0; i < $gpu_num; i++)); do
  start_index=$((i * per_gpu))
  end_index=$(((i + 1) * per_gpu))

  gpu=$((i))
  echo 'Running process #' ${i} 'from' $start_index 'to' $end_index 'on GPU' ${gpu}
  ((index++))
  (
    CUDA_VISIBLE_DEVICES=$gpu python generate_codet5p.py --model Salesforce/${model} \
      --start_index ${start_index} --end_index ${end_index} --temperature ${temp} \
      --num_seqs_per_iter ${num_seqs_per_iter} --N ${pred_num} --max_len ${max_len} --output_path ${output_path}
  ) &
  if (($index % $gpu_num == 0)); then wait; fi
done
wait

echo 'Output path: '$output_path
python process_preds.py --path ${output_path} --out_path ${output_path}.jsonl

evaluate_functional_correctness ${output_path}.jsonl
