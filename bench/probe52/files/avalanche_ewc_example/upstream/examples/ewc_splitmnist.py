################################################################################
# Copyright (c) 2021 ContinualAI.                                              #
# Copyrights licensed under the MIT License.                                   #
# See the accompanying LICENSE file for terms.                                 #
#                                                                              #
# Date: 12-10-2021                                                             #
# Author(s): Andrea Cossu                                                      #
# E-mail: contact@continualai.org                                              #
# Website: avalanche.continualai.org                                           #
################################################################################

"""
This example tests Elastic Weight Consolidation (EWC) and its online variant
on Split MNIST / Permuted MNIST, logging accuracy, forgetting and the usual
system metrics (CPU, GPU, RAM, disk) to stdout, a text file and TensorBoard.

    python examples/ewc_splitmnist.py --ewc_mode separate --ewc_lambda 0.4 --cuda 0
    python examples/ewc_splitmnist.py --ewc_mode online --decay_factor 0.1 --cuda -1
"""

import argparse
import random

import numpy as np
import torch
from torch.nn import CrossEntropyLoss
from torch.optim import SGD

from avalanche.benchmarks.classic import PermutedMNIST, SplitMNIST
from avalanche.evaluation.metrics import (
    accuracy_metrics,
    bwt_metrics,
    confusion_matrix_metrics,
    cpu_usage_metrics,
    disk_usage_metrics,
    forgetting_metrics,
    gpu_usage_metrics,
    loss_metrics,
    ram_usage_metrics,
    timing_metrics,
)
from avalanche.logging import InteractiveLogger, TensorboardLogger, TextLogger
from avalanche.models import SimpleMLP
from avalanche.training.plugins import EvaluationPlugin
from avalanche.training.supervised import EWC


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def main(args):
    set_seed(args.seed)

    # --- CONFIG
    device = torch.device(
        f"cuda:{args.cuda}"
        if torch.cuda.is_available() and args.cuda >= 0
        else "cpu"
    )
    print(f"Using device: {device}")

    # --- BENCHMARK CREATION
    if args.benchmark == "split":
        benchmark = SplitMNIST(n_experiences=5, return_task_id=False, seed=args.seed)
    else:
        benchmark = PermutedMNIST(n_experiences=10, seed=args.seed)

    # --- MODEL CREATION
    model = SimpleMLP(num_classes=benchmark.n_classes, hidden_size=args.hidden_size,
                      hidden_layers=args.hidden_layers, drop_rate=args.dropout)

    # --- LOGGERS
    interactive_logger = InteractiveLogger()
    text_logger = TextLogger(open(f"log_ewc_{args.ewc_mode}.txt", "a"))
    tb_logger = TensorboardLogger(f"tb_data/ewc_{args.ewc_mode}")

    eval_plugin = EvaluationPlugin(
        accuracy_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        loss_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        timing_metrics(epoch=True, epoch_running=True),
        forgetting_metrics(experience=True, stream=True),
        bwt_metrics(experience=True, stream=True),
        cpu_usage_metrics(experience=True),
        gpu_usage_metrics(args.cuda, every=0.5, experience=True),
        ram_usage_metrics(every=0.5, experience=True),
        disk_usage_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        confusion_matrix_metrics(num_classes=benchmark.n_classes, save_image=False, stream=True),
        loggers=[interactive_logger, text_logger, tb_logger],
    )

    # --- STRATEGY CREATION
    strategy = EWC(
        model,
        SGD(model.parameters(), lr=args.lr, momentum=0.9),
        CrossEntropyLoss(),
        ewc_lambda=args.ewc_lambda,
        mode=args.ewc_mode,
        decay_factor=args.decay_factor,
        train_epochs=args.epochs,
        device=device,
        train_mb_size=args.minibatch_size,
        eval_mb_size=256,
        evaluator=eval_plugin,
    )

    # --- TRAINING LOOP
    print("Starting experiment...")
    results = []
    for experience in benchmark.train_stream:
        print("Start of experience: ", experience.current_experience)
        print("Current Classes: ", experience.classes_in_this_experience)

        strategy.train(experience, num_workers=4, persistent_workers=True)
        print("Training completed")

        print("Computing accuracy on the whole test set")
        results.append(strategy.eval(benchmark.test_stream, num_workers=4))

    last = results[-1]
    top1 = last.get("Top1_Acc_Stream/eval_phase/test_stream/Task000")
    fgt = last.get("StreamForgetting/eval_phase/test_stream")
    print(f"final stream accuracy {top1}, forgetting {fgt}")

    torch.save(strategy.model.state_dict(), f"ewc_{args.ewc_mode}_final.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark", type=str, default="split", choices=["split", "permuted"])
    parser.add_argument("--ewc_mode", type=str, choices=["separate", "online"], default="separate",
                        help="Choose between EWC and online.")
    parser.add_argument("--ewc_lambda", type=float, default=0.4,
                        help="Penalty hyperparameter for EWC")
    parser.add_argument("--decay_factor", type=float, default=0.1,
                        help="Decay factor for importance when ewc_mode is online.")
    parser.add_argument("--lr", type=float, default=1e-3, help="Learning rate.")
    parser.add_argument("--hidden_size", type=int, default=1000, help="MLP hidden size.")
    parser.add_argument("--hidden_layers", type=int, default=1, help="Number of MLP hidden layers.")
    parser.add_argument("--dropout", type=float, default=0.0, help="MLP dropout.")
    parser.add_argument("--epochs", type=int, default=10, help="Number of training epochs.")
    parser.add_argument("--minibatch_size", type=int, default=256, help="Minibatch size.")
    parser.add_argument("--seed", type=int, default=1234, help="Random seed.")
    parser.add_argument("--cuda", type=int, default=0,
                        help="Specify GPU id to use. Use CPU if -1.")
    args = parser.parse_args()

    main(args)
