import os
import sys
import argparse
import torch

uer_dir = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, uer_dir)

from uer.utils import *
from uer.opts import *
from uer.utils.config import load_hyperparam
from uer.utils.vocab import Vocab
from uer.utils.logging import init_logger
from uer import trainer


def main():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)

    pretrain_opts(parser)

    model_opts(parser)

    # Optimizer options.
    optimization_opts(parser)

    # Tokenizer options.
    tokenizer_opts(parser)

    # Deepspeed options.
    deepspeed_opts(parser)

    args = parser.parse_args()

    if "cls" in args.target:
        assert args.labels_num is not None, "Cls target needs the denotation of the number of labels."

    # Load hyper-parameters from config file.
    if args.config_path:
        load_hyperparam(args)

    ranks_num = len(args.gpu_ranks)

    if args.deepspeed:
        if args.world_size > 1:
            args.dist_train = True
        else:
            args.dist_train = False
    else:
        if args.world_size > 1:
            # Multiprocessing distributed mode.
            assert torch.cuda.is_available(), "No available GPUs."
            assert ranks_num <= args.world_size, "Started processes exceed `world_size` upper limit."
            assert ranks_num <= torch.cuda.device_count(), "Started processes exceeds the available GPUs."
            args.dist_train = True
            args.ranks_num = ranks_num
            print("Using distributed mode for training.")
        elif args.world_size == 1 and ranks_num == 1:
            # Single GPU mode.
            assert torch.cuda.is_available(), "No available GPU for single-GPU mode."
            args.gpu_id = args.gpu_ranks[0]
            assert args.gpu_id < torch.cuda.device_count(), "Invalid specified GPU device."
            args.dist_train = False
            args.single_gpu = True
            print("Using GPU %d for training." % args.gpu_id)
        else:
            # CPU mode.
            assert ranks_num == 0, "GPUs are specified, please check the arguments."
            args.dist_train = False
            args.single_gpu = False
            print("Using CPU mode for training.")

    # Build tokenizer.
    args.tokenizer = str2tokenizer[args.tokenizer](args)

    # Get logger
    args.logger = init_logger(args)

    # Make sure the output directory exists before any worker writes to it.
    output_dir = os.path.dirname(os.path.abspath(args.output_model_path))
    if not os.path.exists(output_dir):
        os.makedirs(output_dir, exist_ok=True)

    trainer.train_and_validate(args)


if __name__ == "__main__":
    main()
