# Step 1. Data preprocessing
DATA_DIR=./exp_data/lang8_hsk
mkdir -p $DATA_DIR

TRAIN_SRC_FILE=../../data/train_data/lang8+hsk/train.src
TRAIN_TGT_FILE=../../data/train_data/lang8+hsk/train.tgt
if [ ! -f $DATA_DIR"/train.label" ]; then
    python ./utils/segment_bert.py < $TRAIN_SRC_FILE > $DATA_DIR"/train.src_char"
    python ./utils/segment_bert.py < $TRAIN_TGT_FILE > $DATA_DIR"/train.tgt_char"
    python ./utils/preprocess_data.py -s $DATA_DIR"/train.src_char" -t $DATA_DIR"/train.tgt_char" -o $DATA_DIR"/train.label" --worker_num 32
fi

DEV_SRC_FILE=../../data/valid_data/MuCGEC_CGED_Dev.src
DEV_TGT_FILE=../../data/valid_data/MuCGEC_CGED_Dev.tgt
if [ ! -f $DATA_DIR"/dev.label" ]; then
    python ./utils/segment_bert.py < $DEV_SRC_FILE > $DATA_DIR"/dev.src_char"
    python ./utils/segment_bert.py < $DEV_TGT_FILE > $DATA_DIR"/dev.tgt_char"
    python ./utils/preprocess_data.py -s $DATA_DIR"/dev.src_char" -t $DATA_DIR"/dev.tgt_char" -o $DATA_DIR"/dev.label" --worker_num 32
fi

# Step 2. Training
SEED=1
CUDA_DEVICE=0
PRETRAIN_WEIGHTS_DIR=./plm/chinese-struct-bert-large
VOCAB_PATH=./data/output_vocabulary_chinese_char_hsk+lang8_5
MODEL_DIR=./exps/seq2edit_lang8
mkdir -p $MODEL_DIR

CUDA_VISIBLE_DEVICES=$CUDA_DEVICE python train.py --tune_bert 1 \
                --train_set $DATA_DIR"/train.label" \
                --dev_set $DATA_DIR"/dev.label" \
                --model_dir $MODEL_DIR \
                --model_name Best_Model_Stage_1 \
                --vocab_path $VOCAB_PATH \
                --batch_size 32 \
                --n_epoch 2 \
                --lr 1e-5 \
                --weights_name $PRETRAIN_WEIGHTS_DIR \
                --seed $SEED

# Step 3. Inference
MODEL_PATH=$MODEL_DIR"/Best_Model_Stage_1.th"
RESULT_DIR=$MODEL_DIR"/results"
INPUT_FILE=../../data/test_data/MuCGEC/MuCGEC-ALL/MuCGEC_ALL_Test.input
OUTPUT_FILE=$RESULT_DIR"/MuCGEC_test.output"
mkdir -p $RESULT_DIR

python ./utils/segment_bert.py < $INPUT_FILE > $INPUT_FILE".char"  # char-level split
CUDA_VISIBLE_DEVICES=$CUDA_DEVICE python predict.py --model_path $MODEL_PATH \
                  --weights_name $PRETRAIN_WEIGHTS_DIR \
                  --vocab_path $VOCAB_PATH \
                  --input_file $INPUT_FILE".char" \
                  --output_file $OUTPUT_FILE --log
