#!/bin/bash
# Step 4 of the LAVAD pipeline: ask Llama-2-13b-chat to score the per-clip summaries.
# Llama-2-13b needs model parallel = 2, i.e. two GPUs per job.

export OMP_NUM_THREADS=8

dataset_dir="/path/to/datasets/ucf_crime"
batch_size=32
frame_interval=16
index_name="flat"
llm_model_name="llama-2-13b-chat"
captions_dir_template="$dataset_dir/captions/clean_summary/$llm_model_name/"
context_prompt="If you were a law enforcement agency, how would you rate the scene described on a scale from 0 to 1, with 0 representing a standard scene and 1 denoting a scene with suspicious activities?"
format_prompt="Please provide the response in the form of a Python list and respond with only one number in the provided list below [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] without any textual explanation. It should begin with '[' and end with  ']'."
summary_prompt="Please summarize what happened in few sentences, based on the following temporal description of a scene. Do not include any unnecessary details or descriptions."

GPU_IDS=${GPU_IDS:-0,1}
NPROC=$(echo "$GPU_IDS" | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-29511}

echo "Scoring with $llm_model_name on GPUs $GPU_IDS (nproc=$NPROC)"

CUDA_VISIBLE_DEVICES=$GPU_IDS torchrun \
    --nproc_per_node "$NPROC" \
    --master_port "$MASTER_PORT" \
    -m src.models.llm_anomaly_scorer \
    --root_path "$dataset_dir/frames" \
    --annotationfile_path "$dataset_dir/annotations/test.txt" \
    --batch_size "$batch_size" \
    --frame_interval "$frame_interval" \
    --summary_prompt "$summary_prompt" \
    --context_prompt "$context_prompt" \
    --format_prompt "$format_prompt" \
    --output_scores_dir "$dataset_dir/scores/raw/$llm_model_name/$index_name/" \
    --output_summary_dir "$dataset_dir/captions/summary/$llm_model_name/$index_name/" \
    --captions_dir "$captions_dir_template$index_name/" \
    --ckpt_dir "libs/llama/$llm_model_name/" \
    --tokenizer_path "libs/llama/tokenizer.model" \
    --score_summary
