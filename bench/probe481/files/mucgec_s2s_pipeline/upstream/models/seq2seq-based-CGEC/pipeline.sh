#!/bin/bash
# Step 1. Data preprocessing
DATA_DIR=./exp_data/lang8_hsk
mkdir -p $DATA_DIR

TRAIN_SRC_FILE=../../data/train_data/lang8+hsk/train.src
TRAIN_TGT_FILE=../../data/train_data/lang8+hsk/train.tgt
DEV_SRC_FILE=../../data/valid_data/MuCGEC_CGED_Dev.src
DEV_TGT_FILE=../../data/valid_data/MuCGEC_CGED_Dev.tgt

if [ ! -f $DATA_DIR"/train.json" ]; then
    python ./utils.py $TRAIN_SRC_FILE $TRAIN_TGT_FILE $DATA_DIR"/train.json"
fi

if [ ! -f $DATA_DIR"/valid.json" ]; then
    python ./utils.py $DEV_SRC_FILE $DEV_TGT_FILE $DATA_DIR"/valid.json"
fi

# Step 2. Training
SEED=2021
PRETRAIN_MODEL=fnlp/bart-large-chinese
MODEL_DIR=./exps/seq2seq_lang8_hsk
TASK_NAME=gec
CUDA_DEVICE=0,1,2,3
NPROC=4

mkdir -p $MODEL_DIR/$TASK_NAME/src_bak
cp ./pipeline.sh $MODEL_DIR/$TASK_NAME/src_bak
cp train.py $MODEL_DIR/$TASK_NAME/src_bak
cp predict.py $MODEL_DIR/$TASK_NAME/src_bak

CUDA_VISIBLE_DEVICES=$CUDA_DEVICE nohup python -m torch.distributed.launch --nproc_per_node $NPROC --master_port 29513 -u train.py \
    --model_path $PRETRAIN_MODEL \
    --save_path $MODEL_DIR \
    --train_file $DATA_DIR"/train.json" \
    --dev_file $DATA_DIR"/valid.json" \
    --batch_size 32 \
    --gradient_accumulation_steps 4 \
    --lr 3e-6 \
    --epoch 10 \
    --seed $SEED \
    --fp16 > $MODEL_DIR/$TASK_NAME/train.log 2>&1 &

wait

# Step 3. Inference
MODEL_PATH=$MODEL_DIR/best
RESULT_DIR=$MODEL_DIR/results
mkdir -p $RESULT_DIR
INPUT_FILE=../../data/test_data/MuCGEC/MuCGEC-ALL/MuCGEC_ALL_Test.input
OUTPUT_FILE=$RESULT_DIR"/MuCGEC_test.output"

echo "Generating..."
SECONDS=0
python -u predict.py -m $MODEL_PATH -i $INPUT_FILE -o $OUTPUT_FILE -b 50 --gpu 0 --fp16

echo "Generating Finish!"
duration=$SECONDS
echo "$(($duration / 60)) minutes and $(($duration % 60)) seconds elapsed."
