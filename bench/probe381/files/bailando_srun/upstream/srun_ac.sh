#!/bin/sh
currenttime=`date "+%Y%m%d%H%M%S"`
if [ ! -d log ]; then
    mkdir log
fi

echo "[Usage] ./srun_ac.sh config_path [train|eval|sample] partition gpunum"
# check config exists
if [ ! -e $1 ]
then
    echo "[ERROR] configuration file: $1 does not exists!"
    exit
fi

expname=$(basename $1 .yaml)
if [ ! -d ${expname} ]; then
    mkdir ${expname}
fi

echo "[INFO] saving results to, or loading files from: "$expname

if [ "$3" == "" ]; then
    echo "[ERROR] enter partition name"
    exit
fi
partition_name=$3
echo "[INFO] partition name: $partition_name"

if [ "$4" == "" ]; then
    echo "[ERROR] enter gpu num"
    exit
fi
gpunum=$4
gpunum=$(($gpunum<8?$gpunum:8))
noden=$(($4/8+1))
echo "[INFO] GPU num: $gpunum"
((ntask=$gpunum*3))

TOOLS="srun --partition=$partition_name --cpus-per-task=16 --mpi=pmi2 --gres=gpu:$gpunum -n1 --ntasks-per-node=1"
PYTHONCMD="python -u main_ac.py --config $1"

if [ $2 == "train" ];
then
    $TOOLS --job-name=$expname sh -c "$PYTHONCMD --train" 2>&1 | tee log/train_${expname}_${currenttime}.log
elif [ $2 == "eval" ];
then
    $TOOLS --job-name=$expname sh -c "$PYTHONCMD --eval" 2>&1 | tee log/eval_${expname}_${currenttime}.log
elif [ $2 == "sample" ];
then
    $TOOLS --job-name=$expname sh -c "$PYTHONCMD --sample" 2>&1 | tee log/sample_${expname}_${currenttime}.log
elif [ $2 == "anl" ];
then
    $TOOLS --job-name=$expname sh -c "$PYTHONCMD --anl" 2>&1 | tee log/anl_${expname}_${currenttime}.log
fi
