set -ex
export CUDA_DEVICE_ORDER='PCI_BUS_ID'
export CUDA_VISIBLE_DEVICES=0,1,2,3

# 4 GPUs: 1 learner + 20 reanalyze actors + self-play actors share them via ray fractional GPUs
# (see @ray.remote(num_gpus=0.125) in core/selfplay_worker.py and core/reanalyze_worker.py)
python main.py --env BreakoutNoFrameskip-v4 --case atari --opr train --force \
  --num_gpus 4 --num_cpus 96 \
  --cpu_actor 14 --gpu_actor 20 \
  --seed 0 \
  --p_mcts_num 128 \
  --use_priority \
  --use_max_priority \
  --amp_type 'torch_amp' \
  --info 'EfficientZero-V1'

# evaluate the final model on a single GPU
CUDA_VISIBLE_DEVICES=0 python main.py --env BreakoutNoFrameskip-v4 --case atari --opr test --seed 0 --num_gpus 1 --num_cpus 20 \
  --amp_type 'torch_amp' --load_model --model_path 'results/atari/EfficientZero-V1/BreakoutNoFrameskip-v4/seed=0/model/model_final.p' \
  --test_episodes 32 --info 'Test'
