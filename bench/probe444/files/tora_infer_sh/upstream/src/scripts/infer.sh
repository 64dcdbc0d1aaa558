set -ex

MODEL_NAME_OR_PATH="llm-agents/tora-code-34b-v1.0"

# DATA_LIST = ['math', 'gsm8k', 'gsm-hard', 'svamp', 'tabmwp', 'asdiv', 'mawps']

DATA_NAME="math"
# DATA_NAME="gsm8k"

SPLIT="test"
PROMPT_TYPE="tora"
NUM_TEST_SAMPLE=-1

# the number of visible GPUs decides the vLLM tensor-parallel size (see infer/inference.py)
export CUDA_VISIBLE_DEVICES="0,1,2,3"

CUDA_LAUNCH_BLOCKING=0 TOKENIZERS_PARALLELISM=false \
python -um infer.inference \
--model_name_or_path ${MODEL_NAME_OR_PATH} \
--data_name ${DATA_NAME} \
--split ${SPLIT} \
--prompt_type ${PROMPT_TYPE} \
--num_test_sample ${NUM_TEST_SAMPLE} \
--seed 0 \
--temperature 0 \
--n_sampling 1 \
--top_p 1 \
--start 0 \
--end -1 \

# self-consistency: sample 50 paths per question with temperature 0.6 and vote
# python -um infer.inference --model_name_or_path ${MODEL_NAME_OR_PATH} --data_name ${DATA_NAME} \
#     --split ${SPLIT} --prompt_type ${PROMPT_TYPE} --temperature 0.6 --n_sampling 50 --top_p 0.95 --seed 0
