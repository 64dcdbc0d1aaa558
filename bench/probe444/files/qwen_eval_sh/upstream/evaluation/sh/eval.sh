set -ex
# usage: bash sh/eval.sh <prompt_type> <model_path>
# all visible GPUs are used for vLLM tensor parallelism (math_eval.py reads CUDA_VISIBLE_DEVICES)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-"0,1,2,3"}

PROMPT_TYPE=$1
MODEL_NAME_OR_PATH=$2
OUTPUT_DIR=${MODEL_NAME_OR_PATH}/math_eval

SPLIT="test"
NUM_TEST_SAMPLE=-1

# English open datasets
DATA_NAME="gsm8k,math500,minerva_math,gaokao2023en,olympiadbench,college_math,aime24,amc23"
TOKENIZERS_PARALLELISM=false \
python3 -u math_eval.py \
    --model_name_or_path ${MODEL_NAME_OR_PATH} \
    --data_name ${DATA_NAME} \
    --output_dir ${OUTPUT_DIR} \
    --split ${SPLIT} \
    --prompt_type ${PROMPT_TYPE} \
    --num_test_sample ${NUM_TEST_SAMPLE} \
    --seed 0 \
    --temperature 0 \
    --n_sampling 1 \
    --top_p 1 \
    --start 0 \
    --end -1 \
    --use_vllm \
    --save_outputs \
    --overwrite \

# English multiple-choice datasets
DATA_NAME="aqua,sat_math,mmlu_stem"
TOKENIZERS_PARALLELISM=false \
python3 -u math_eval.py \
    --model_name_or_path ${MODEL_NAME_OR_PATH} \
    --data_name ${DATA_NAME} \
    --output_dir ${OUTPUT_DIR} \
    --split ${SPLIT} \
    --prompt_type ${PROMPT_TYPE} \
    --num_test_sample ${NUM_TEST_SAMPLE} \
    --seed 0 \
    --temperature 0 \
    --n_sampling 1 \
    --top_p 1 \
    --start 0 \
    --end -1 \
    --use_vllm \
    --save_outputs \
    --overwrite \
    --num_shots 5

# Self-consistency / RM@64 on MATH500: 64 samples at T=0.7, then score with the outcome RM
DATA_NAME="math500"
TOKENIZERS_PARALLELISM=false \
python3 -u math_eval.py \
    --model_name_or_path ${MODEL_NAME_OR_PATH} \
    --data_name ${DATA_NAME} \
    --output_dir ${OUTPUT_DIR}/sc64 \
    --split ${SPLIT} \
    --prompt_type ${PROMPT_TYPE} \
    --seed 0 \
    --temperature 0.7 \
    --n_sampling 64 \
    --top_p 0.8 \
    --use_vllm \
    --save_outputs \
    --overwrite

python3 -u rm_maj_eval.py \
    --rm_name_or_path Qwen/Qwen2.5-Math-RM-72B \
    --input_file ${OUTPUT_DIR}/sc64/math500/test_${PROMPT_TYPE}_-1_seed0_t0.7_s0_e-1.jsonl \
    --ks 1,4,16,64 \
    --flash_attn
