# Copyright (c) 2023 Intel Corporation
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#      http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import argparse
import os.path as osp
import sys
import time
import warnings
from copy import deepcopy
from pathlib import Path
from shutil import copyfile

import torch
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from torch.backends import cudnn
from torch.cuda.amp.autocast_mode import autocast
from torchvision.models import InceptionOutputs

from examples.common.paths import configure_paths
from examples.torch.classification.common import create_datasets, extract_model_and_compression_states
from examples.torch.classification.common import get_parameter_groups, get_run_name, make_optimizer, train
from examples.torch.common.utils import create_code_snapshot, is_staged_quantization
from examples.common.sample_config import SampleConfig, create_sample_config
from examples.torch.common.example_logger import logger
from examples.torch.common.execution import ExecutionMode, get_execution_mode, prepare_model_for_execution
from examples.torch.common.execution import set_seed, start_worker
from examples.torch.common.model_loader import COMPRESSION_STATE_ATTR, MODEL_STATE_ATTR, load_model, load_resuming_checkpoint
from examples.torch.common.utils import SafeMLFLow, configure_device, configure_logging, is_pretrained_model_requested
from examples.torch.common.utils import is_on_first_rank, print_args, write_metrics
from nncf import NNCFConfig
from nncf.api.compression import CompressionStage
from nncf.common.utils.tensorboard import prepare_for_tensorboard
from nncf.config.utils import is_accuracy_aware_training
from nncf.torch import create_compressed_model
from nncf.torch.checkpoint_loading import load_state
from nncf.torch.dynamic_graph.graph_tracer import create_input_infos
from nncf.torch.initialization import default_criterion_fn, register_default_init_args
from nncf.torch.utils import is_main_process, safe_thread_call

model_names = sorted(name for name in models.__dict__ if name.islower() and not name.startswith("__") and callable(models.__dict__[name]))


def get_argument_parser():
    parser = argparse.ArgumentParser(description="NNCF classification sample")
    parser.add_argument("-c", "--config", help="Path to a config file with task/model-specific parameters", required=True)
    parser.add_argument("--mode", "-m", nargs="+", choices=["train", "test", "export"], default=["train"])
    parser.add_argument("--dataset", help="Dataset to use.", choices=["imagenet", "cifar100", "cifar10"], default=None)
    parser.add_argument("--data", dest="dataset_dir", type=str, help="Path to the root directory of the selected dataset.")
    parser.add_argument("--weights", type=str, default=None, help="File with model weights to initialize with")
    parser.add_argument("--resume", type=str, default=None, dest="resuming_checkpoint_path",
                        help="Specifies the .pth file with the saved model to be tested")
    parser.add_argument("--pretrained", dest="pretrained", action="store_true", help="Use pretrained models from the model zoo")
    parser.add_argument("--to-onnx", type=str, metavar="PATH", default=None, help="Export to ONNX model by given path")
    parser.add_argument("-j", "--workers", default=4, type=int, help="number of data loading workers (default: 4)")
    parser.add_argument("--batch-size", type=int, default=None, help="Batch size. Will be split equally between multiple GPUs in the "
                        "--multiprocessing-distributed mode.")
    parser.add_argument("--batch-size-val", type=int, default=None, help="Batch size for validation step")
    parser.add_argument("--epochs", type=int, default=None, help="Number of training epochs")
    parser.add_argument("--seed", default=None, type=int, help="Specific seed for initializing pseudo-random number generators.")
    parser.add_argument("--print-freq", "-p", default=10, type=int, help="print frequency (default: 10)")
    parser.add_argument("--log-dir", type=str, default="runs", help="The directory where models and TensorboardX summaries are saved")

    execution_type = parser.add_mutually_exclusive_group()
    execution_type.add_argument("--gpu-id", type=int, metavar="N", help="The ID of the GPU training will be performed on, without any parallelization")
    execution_type.add_argument("--multiprocessing-distributed", action="store_true",
                                help="Specifies that the computations should be parallelized using PyTorch DistributedDataParallel "
                                     "with training launched in a separate process for each available GPU.")
    execution_type.add_argument("--cpu-only", action="store_true", help="Specifies that the computation should be performed using CPU only.")

    parser.add_argument("--world-size", default=1, type=int, help="Sets the number of nodes participating in training")
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:8899", help="URL used to set up distributed training")
    parser.add_argument("--rank", default=0, type=int, help="Node rank for distributed training")
    parser.add_argument("--dist-backend", default="nccl", type=str, help="Distributed backend")
    parser.add_argument("--mixed-precision", action="store_true", help="Run the compressed model under torch.cuda.amp autocast")
    return parser


def main(argv):
    parser = get_argument_parser()
    args = parser.parse_args(args=argv)
    config = create_sample_config(args, parser)

    if config.dist_url == "env://":
        config.update_from_env()

    configure_paths(config, get_run_name(config))
    copyfile(args.config, osp.join(config.log_dir, "config.json"))
    source_root = Path(__file__).absolute().parents[2]  # nncf root
    create_code_snapshot(source_root, osp.join(config.log_dir, "snapshot.tar.gz"))

    if config.seed is not None:
        warnings.warn("You have chosen to seed training. This will turn on the CUDNN deterministic setting, which can slow down "
                      "your training considerably! You may see unexpected behavior when restarting from checkpoints.")

    config.execution_mode = get_execution_mode(config)

    if config.metrics_dump is not None:
        write_metrics(0, config.metrics_dump)

    if not is_staged_quantization(config):
        start_worker(main_worker, config)
    else:
        from examples.torch.classification.staged_quantization_worker import staged_quantization_main_worker

        start_worker(staged_quantization_main_worker, config)


def inception_criterion_fn(model_outputs, target, criterion):
    # Inception-v3 has auxiliary outputs during training
    output, aux_outputs = model_outputs
    loss1 = criterion(output, target)
    loss2 = criterion(aux_outputs, target)
    return loss1 + 0.4 * loss2


def main_worker(current_gpu, config: SampleConfig):
    configure_device(current_gpu, config)
    if is_on_first_rank(config):
        configure_logging(logger, config)
        print_args(config)

    set_seed(config)

    # define loss function (criterion)
    criterion = nn.CrossEntropyLoss()
    criterion = criterion.to(config.device)

    model_name = config["model"]
    train_criterion_fn = inception_criterion_fn if "inception" in model_name else default_criterion_fn

    train_loader = train_sampler = val_loader = None
    resuming_checkpoint_path = config.resuming_checkpoint_path
    nncf_config = config.nncf_config
    pretrained = is_pretrained_model_requested(config)
    is_export_only = "export" in config.mode and ("train" not in config.mode and "test" not in config.mode)

    if is_export_only:
        assert pretrained or (resuming_checkpoint_path is not None)
    else:
        # Data loading code
        train_dataset, val_dataset = create_datasets(config)
        train_loader, train_sampler, val_loader, init_loader = create_data_loaders(config, train_dataset, val_dataset)

        def train_steps_fn(loader, model, optimizer, compression_ctrl, train_steps):
            train_epoch(loader, model, criterion, train_criterion_fn, optimizer, compression_ctrl, 0, config, train_iters=train_steps, log_training_info=False)

        def validate_model_fn(model, eval_loader):
            top1, top5, loss = validate(eval_loader, model, criterion, config, log_validation_info=False)
            return top1, top5, loss

        def model_eval_fn(model):
            top1, _, _ = validate(val_loader, model, criterion, config)
            return top1

        execution_params = ExecutionParameters(config.cpu_only, config.current_gpu)

        nncf_config = register_default_init_args(
            nncf_config,
            init_loader,
            criterion=criterion,
            criterion_fn=train_criterion_fn,
            train_steps_fn=train_steps_fn,
            validate_fn=lambda *x: validate_model_fn(*x)[::2],
            autoq_eval_fn=lambda *x: validate_model_fn(*x)[1],
            val_loader=val_loader,
            model_eval_fn=model_eval_fn,
            device=config.device,
            execution_parameters=execution_params,
        )

    # create model
    model = load_model(
        model_name,
        pretrained=pretrained,
        num_classes=config.get("num_classes", 1000),
        model_params=config.get("model_params"),
        weights_path=config.get("weights"),
    )

    model.to(config.device)

    if "train" in config.mode and is_accuracy_aware_training(config):
        uncompressed_model_accuracy = model_eval_fn(model)

    resuming_checkpoint = None
    if resuming_checkpoint_path is not None:
        resuming_checkpoint = load_resuming_checkpoint(resuming_checkpoint_path)
    model_state_dict, compression_state = extract_model_and_compression_states(resuming_checkpoint)
    compression_ctrl, model = create_compressed_model(model, nncf_config, compression_state)
    if model_state_dict is not None:
        load_state(model, model_state_dict, is_resume=True)

    if not isinstance(compression_ctrl, CompressionStage) and config.distributed:
        compression_ctrl.distributed()

    model, _ = prepare_model_for_execution(model, config), None

    if "train" in config.mode:
        optimizer, lr_scheduler = make_optimizer(get_parameter_groups(model, config), config)
        best_acc1 = 0
        if resuming_checkpoint_path is not None and "train" in config.mode:
            optimizer.load_state_dict(resuming_checkpoint.get("optimizer", optimizer.state_dict()))
            best_acc1 = resuming_checkpoint.get("best_acc1", 0)
            config.start_epoch = resuming_checkpoint["epoch"]

        if config.execution_mode != ExecutionMode.CPU_ONLY:
            cudnn.benchmark = True

        train(config, compression_ctrl, model, criterion, train_criterion_fn, lr_scheduler, model_name, optimizer,
              train_loader, train_sampler, val_loader, best_acc1)

    if "test" in config.mode:
        val_model = model
        validate(val_loader, val_model, criterion, config)

    config.mlflow.end_run()

    if "export" in config.mode:
        save_path = config.to_onnx if config.to_onnx else osp.join(config.log_dir, "compressed_model.onnx")
        compression_ctrl.export_model(save_path)
        logger.info("Saved to {}".format(save_path))


def create_data_loaders(config, train_dataset, val_dataset):
    pin_memory = config.execution_mode != ExecutionMode.CPU_ONLY

    # When using a single GPU per process and per
    # DistributedDataParallel, we need to divide the batch size
    # ourselves based on the total number of GPUs we have
    batch_size = int(config.batch_size)
    workers = int(config.workers)
    batch_size_val = int(config.batch_size_val) if config.batch_size_val is not None else int(config.batch_size)
    if config.execution_mode == ExecutionMode.MULTIPROCESSING_DISTRIBUTED:
        batch_size //= config.ngpus_per_node
        batch_size_val //= config.ngpus_per_node
        workers //= config.ngpus_per_node

    val_sampler = torch.utils.data.SequentialSampler(val_dataset)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=batch_size_val, shuffle=False, num_workers=workers,
                                             pin_memory=pin_memory, sampler=val_sampler, drop_last=False)

    train_sampler = None
    if config.distributed:
        sampler_seed = 0 if config.seed is None else config.seed
        dist_sampler_shuffle = config.seed is None
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, seed=sampler_seed, shuffle=dist_sampler_shuffle)

    train_shuffle = train_sampler is None and config.seed is None

    def create_train_data_loader(batch_size_):
        return torch.utils.data.DataLoader(train_dataset, batch_size=batch_size_, shuffle=train_shuffle, num_workers=workers,
                                           pin_memory=pin_memory, sampler=train_sampler, drop_last=True)

    train_loader = create_train_data_loader(batch_size)
    init_loader = deepcopy(train_loader)
    return train_loader, train_sampler, val_loader, init_loader


def train_epoch(train_loader, model, criterion, criterion_fn, optimizer, compression_ctrl, epoch, config,
                train_iters=None, log_training_info=True):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    if train_iters is None:
        train_iters = len(train_loader)

    compression_scheduler = compression_ctrl.scheduler
    casting = autocast if config.mixed_precision else NullContextManager

    # switch to train mode
    model.train()

    end = time.time()
    for i, (input_, target) in enumerate(train_loader):
        compression_scheduler.step()
        # measure data loading time
        data_time.update(time.time() - end)

        input_ = input_.to(config.device)
        target = target.to(config.device)

        # compute output
        with casting():
            output = model(input_)
            criterion_loss = criterion_fn(output, target, criterion)

            # compute compression loss
            compression_loss = compression_ctrl.loss()
            loss = criterion_loss + compression_loss

        if isinstance(output, InceptionOutputs):
            output = output.logits
        # measure accuracy and record loss
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), input_.size(0))
        top1.update(acc1, input_.size(0))
        top5.update(acc5, input_.size(0))

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if i % config.print_freq == 0 and log_training_info:
            logger.info(
                "{rank}: Epoch: [{0}][{1}/{2}] Lr: {3:.3} Time: {batch_time.val:.3f} ({batch_time.avg:.3f}) "
                "Loss: {loss.val:.4f} ({loss.avg:.4f}) Acc@1: {top1.val:.3f} ({top1.avg:.3f}) "
                "GPU mem: {mem:.0f}MiB".format(
                    epoch, i, len(train_loader), get_lr(optimizer), batch_time=batch_time, loss=losses, top1=top1,
                    rank="{}:".format(config.rank) if config.multiprocessing_distributed else "",
                    mem=torch.cuda.max_memory_allocated() / 2**20,
                )
            )
        if i >= train_iters:
            break


def validate(val_loader, model, criterion, config, epoch=0, log_validation_info=True):
    batch_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    # switch to evaluate mode
    model.eval()

    with torch.no_grad():
        end = time.time()
        for i, (input_, target) in enumerate(val_loader):
            input_ = input_.to(config.device)
            target = target.to(config.device)

            # compute output
            output = model(input_)
            loss = default_criterion_fn(output, target, criterion)

            # measure accuracy and record loss
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), input_.size(0))
            top1.update(acc1.item(), input_.size(0))
            top5.update(acc5.item(), input_.size(0))

            # measure elapsed time
            batch_time.update(time.time() - end)
            end = time.time()

        if config.distributed:
            torch.distributed.barrier()
            stats = torch.tensor([top1.sum, top1.count, top5.sum, top5.count], device=config.device)
            torch.distributed.all_reduce(stats)
            top1.avg = (stats[0] / stats[1]).item()
            top5.avg = (stats[2] / stats[3]).item()

        if log_validation_info:
            logger.info(" * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}".format(top1=top1, top5=top5))
    return top1.avg, top5.avg, losses.avg


class NullContextManager:
    def __enter__(self):
        return None

    def __exit__(self, *args):
        return False


class ExecutionParameters:
    def __init__(self, cpu_only: bool, current_gpu: int):
        self.cpu_only = cpu_only
        self.current_gpu = current_gpu


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def get_lr(optimizer):
    return optimizer.param_groups[0]["lr"]


if __name__ == "__main__":
    main(sys.argv[1:])
