'''
@File       :   options.py
@Time       :   2023/02/04 10:51:00
@Auther     :   Jiazheng Xu
@Contact    :   xjz22@mails.tsinghua.edu.cn
@Description:   Command line options of reward model training.
'''

import os
import argparse
import yaml

parser = argparse.ArgumentParser()
parser.add_argument('--config', type=str, default='config/config.yaml')
parser.add_argument('--seed', type=int, default=42)
parser.add_argument('--savepath', type=str, default="blip_uni_cross_mul")
parser.add_argument('--preload_path', type=str, default='')
parser.add_argument('--rank_pair', dest='rank_pair', action='store_true')
parser.add_argument('--batch_size', type=int, default=64)
parser.add_argument('--accumulation_steps', type=int, default=4)
parser.add_argument('--epochs', type=int, default=10)
parser.add_argument('--train-iters', type=int, default=None,
                    help='total number of iterations to train over all training runs')
parser.add_argument('--gpu_num', type=int, default=8,
                    help='number of GPUs on this node, used to derive the per-device batch size')
parser.add_argument('--num_workers', type=int, default=4)
parser.add_argument('--lr-decay-iters', type=int, default=None,
                    help='number of iterations to decay LR over,'
                         ' If None defaults to `--train-iters`*`--epochs`')
parser.add_argument('--lr-decay-style', type=str, default='cosine',
                    choices=['constant', 'linear', 'cosine', 'exponential', 'inverse_square_root'],
                    help='learning rate decay function')
parser.add_argument('--lr-decay-ratio', type=float, default=0.0)
parser.add_argument('--warmup', type=float, default=0.0)
parser.add_argument('--valid_per_epoch', type=int, default=4)
parser.add_argument('--fix_base', action='store_true', help='only train the MLP head')
parser.add_argument('--fix_rate', type=float, default=0.7, help='ratio of frozen BLIP layers')
parser.add_argument('--std_log', action='store_true')
parser.add_argument('--clear_visualizer', action='store_true')
parser.add_argument('--load_emb', action='store_true')
parser.add_argument('--load_pair_store', action='store_true')

parser.add_argument("--local_rank", default=-1, type=int,
                    help="node rank for distributed training; set by torch.distributed.launch")
parser.add_argument("--distributed", default=False, type=bool)

opts = parser.parse_args()

with open(opts.config, 'r') as f:
    config = yaml.load(f, Loader=yaml.FullLoader)

opts.BatchSize = opts.batch_size // opts.accumulation_steps // opts.gpu_num
opts.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
