################################################################################
# Copyright (c) 2021 ContinualAI.                                              #
# Copyrights licensed under the MIT License.                                   #
# See the accompanying LICENSE file for terms.                                 #
#                                                                              #
# Date: 12-03-2021                                                             #
# Author(s): ContinualAI                                                       #
# E-mail: contact@continualai.org                                              #
# Website: avalanche.continualai.org                                           #
################################################################################

"""
This example compares Naive fine-tuning, EWC, Replay and LwF on Split MNIST
(class-incremental, 5 experiences) and Permuted MNIST (domain-incremental).
Every strategy gets the same model, optimizer and evaluation plugin so the
numbers in the TensorBoard / text logs are directly comparable.

Typical invocation on a single GPU box:

    python examples/strategies_comparison.py --cuda 0 --benchmark split_mnist

Pass --cuda -1 to run everything on the CPU.
"""

import argparse
import os
import random

import numpy as np
import torch
from torch.nn import CrossEntropyLoss
from torch.optim import SGD, Adam

from avalanche.benchmarks.classic import SplitMNIST, PermutedMNIST
from avalanche.models import SimpleMLP
from avalanche.training.supervised import Naive, EWC, Replay, LwF
from avalanche.training.plugins import EvaluationPlugin, LRSchedulerPlugin
from avalanche.evaluation.metrics import (
    accuracy_metrics,
    loss_metrics,
    forgetting_metrics,
    bwt_metrics,
    confusion_matrix_metrics,
    cpu_usage_metrics,
    gpu_usage_metrics,
    timing_metrics,
    ram_usage_metrics,
)
from avalanche.logging import InteractiveLogger, TextLogger, TensorboardLogger


STRATEGIES = ("naive", "ewc", "replay", "lwf")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def build_benchmark(name, seed):
    if name == "split_mnist":
        return SplitMNIST(n_experiences=5, return_task_id=False, seed=seed)
    if name == "permuted_mnist":
        return PermutedMNIST(n_experiences=5, seed=seed)
    raise ValueError(f"Unknown benchmark {name}")


def build_evaluator(args, log_dir):
    loggers = [InteractiveLogger(),
               TextLogger(open(os.path.join(log_dir, "log.txt"), "a")),
               TensorboardLogger(tb_log_dir=log_dir)]

    return EvaluationPlugin(
        accuracy_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        loss_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        timing_metrics(epoch=True, epoch_running=True),
        forgetting_metrics(experience=True, stream=True),
        bwt_metrics(experience=True, stream=True),
        confusion_matrix_metrics(num_classes=10, save_image=False, stream=True),
        cpu_usage_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        gpu_usage_metrics(args.cuda, every=0.5, minibatch=True, epoch=True, experience=True, stream=True),
        ram_usage_metrics(every=1, minibatch=True, epoch=True, experience=True, stream=True),
        loggers=loggers,
    )


def build_strategy(name, model, optimizer, criterion, device, evaluator, args):
    common = dict(
        train_mb_size=args.batch_size,
        train_epochs=args.epochs,
        eval_mb_size=args.eval_batch_size,
        device=device,
        evaluator=evaluator,
    )
    if name == "naive":
        return Naive(model, optimizer, criterion, **common)
    if name == "ewc":
        return EWC(model, optimizer, criterion, ewc_lambda=args.ewc_lambda,
                   mode="separate", **common)
    if name == "replay":
        return Replay(model, optimizer, criterion, mem_size=args.mem_size, **common)
    if name == "lwf":
        return LwF(model, optimizer, criterion, alpha=args.lwf_alpha,
                   temperature=args.lwf_temperature, **common)
    raise ValueError(f"Unknown strategy {name}")


def main(args):
    set_seed(args.seed)

    # --- CONFIG
    device = torch.device(
        f"cuda:{args.cuda}"
        if torch.cuda.is_available() and args.cuda >= 0
        else "cpu"
    )
    print(f"Using device: {device}")

    benchmark = build_benchmark(args.benchmark, args.seed)
    results = {}

    for strategy_name in args.strategies:
        log_dir = os.path.join(args.log_dir, args.benchmark, strategy_name)
        os.makedirs(log_dir, exist_ok=True)

        # --- MODEL, OPTIMIZER, CRITERION
        model = SimpleMLP(num_classes=benchmark.n_classes, hidden_size=args.hidden_size,
                          hidden_layers=2, drop_rate=0.0)
        if args.optimizer == "sgd":
            optimizer = SGD(model.parameters(), lr=args.lr, momentum=0.9)
        else:
            optimizer = Adam(model.parameters(), lr=args.lr)
        criterion = CrossEntropyLoss()

        evaluator = build_evaluator(args, log_dir)
        strategy = build_strategy(strategy_name, model, optimizer, criterion,
                                  device, evaluator, args)

        # --- TRAINING LOOP
        print(f"Starting experiment with {strategy_name}...")
        stream_results = []
        for experience in benchmark.train_stream:
            print("Start of experience: ", experience.current_experience)
            print("Current Classes: ", experience.classes_in_this_experience)

            strategy.train(experience, num_workers=args.num_workers)
            print("Training completed")

            print("Computing accuracy on the whole test set")
            stream_results.append(strategy.eval(benchmark.test_stream,
                                                num_workers=args.num_workers))
        results[strategy_name] = stream_results

        if args.save_models:
            torch.save(model.state_dict(), os.path.join(log_dir, "model_final.pt"))

    for strategy_name, stream_results in results.items():
        last = stream_results[-1]
        acc = last.get("Top1_Acc_Stream/eval_phase/test_stream/Task000", float("nan"))
        print(f"{strategy_name:>8s}: final stream accuracy {acc:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuda", type=int, default=0,
                        help="Select zero-indexed cuda device. -1 to use CPU.")
    parser.add_argument("--benchmark", type=str, default="split_mnist",
                        choices=["split_mnist", "permuted_mnist"])
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES),
                        choices=STRATEGIES)
    parser.add_argument("--optimizer", type=str, default="sgd", choices=["sgd", "adam"])
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--eval_batch_size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--hidden_size", type=int, default=512)
    parser.add_argument("--ewc_lambda", type=float, default=0.4)
    parser.add_argument("--mem_size", type=int, default=500)
    parser.add_argument("--lwf_alpha", type=float, default=1.0)
    parser.add_argument("--lwf_temperature", type=float, default=2.0)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--log_dir", type=str, default="./logs")
    parser.add_argument("--save_models", action="store_true")
    args = parser.parse_args()
    main(args)
