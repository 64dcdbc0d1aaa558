#!/usr/bin/env python3
"""Tools for training and testing a RegNet / AnyNet model (pycls-style)."""

import os
import random
import time
from types import SimpleNamespace

import numpy as np
import torch
import torch.distributed
import torch.multiprocessing as mp
from torch.cuda import amp

import pycls.core.builders as builders
import pycls.core.checkpoint as cp
import pycls.core.logging as logging
import pycls.core.net as net
import pycls.core.optimizer as optim
import pycls.datasets.loader as data_loader


logger = logging.get_logger(__name__)

# ------------------------------------------------------------------ config (subset of pycls/core/config.py)
cfg = SimpleNamespace(
    OUT_DIR="/tmp/regnet",
    RNG_SEED=1,
    NUM_GPUS=8,
    DIST_BACKEND="nccl",
    HOST="localhost",
    PORT_RANGE=[10000, 65000],
    CUDNN=SimpleNamespace(BENCHMARK=True),
    TRAIN=SimpleNamespace(BATCH_SIZE=1024, IM_SIZE=224, MIXED_PRECISION=True,
                          AUTO_RESUME=True, WEIGHTS="", EVAL_PERIOD=1, CHECKPOINT_PERIOD=1),
    TEST=SimpleNamespace(BATCH_SIZE=800, IM_SIZE=256, WEIGHTS=""),
    OPTIM=SimpleNamespace(MAX_EPOCH=100, EMA_ALPHA=1e-5, EMA_UPDATE_PERIOD=32),
    PREC_TIME=SimpleNamespace(NUM_ITER=30, WARMUP_ITER=3),
    LOG_PERIOD=10,
)


# ------------------------------------------------------------------ distributed helpers
def is_master_proc():
    return cfg.NUM_GPUS == 1 or torch.distributed.get_rank() == 0


def init_process_group(proc_rank, world_size, port):
    """Initializes the default process group (one process per GPU)."""
    torch.cuda.set_device(proc_rank)
    torch.distributed.init_process_group(
        backend=cfg.DIST_BACKEND,
        init_method="tcp://{}:{}".format(cfg.HOST, port),
        world_size=world_size,
        rank=proc_rank,
    )


def destroy_process_group():
    torch.distributed.destroy_process_group()


def scaled_all_reduce(tensors):
    """All-reduce a list of tensors and divide by the number of processes."""
    if cfg.NUM_GPUS == 1:
        return tensors
    reductions = []
    for tensor in tensors:
        reduction = torch.distributed.all_reduce(tensor, async_op=True)
        reductions.append(reduction)
    for reduction in reductions:
        reduction.wait()
    for tensor in tensors:
        tensor.mul_(1.0 / cfg.NUM_GPUS)
    return tensors


def _run(proc_rank, world_size, port, fun, fun_args, fun_kwargs):
    init_process_group(proc_rank, world_size, port)
    fun(*fun_args, **fun_kwargs)
    destroy_process_group()


def multi_proc_run(num_proc, fun, fun_args=(), fun_kwargs=None):
    """Run a single or multi GPU job locally on the current node."""
    fun_kwargs = fun_kwargs if fun_kwargs else {}
    if num_proc > 1:
        port = random.randint(cfg.PORT_RANGE[0], cfg.PORT_RANGE[1])
        mp_runner = mp.spawn
        mp_runner(_run, args=(num_proc, port, fun, fun_args, fun_kwargs), nprocs=num_proc, join=True)
    else:
        fun(*fun_args, **fun_kwargs)


# ------------------------------------------------------------------ meters
def gpu_mem_usage():
    """Computes the GPU memory usage for the current device (MB)."""
    mem_usage_bytes = torch.cuda.max_memory_allocated()
    return mem_usage_bytes / 1024 / 1024


class Timer(object):
    def __init__(self):
        self.total_time = 0.0
        self.calls = 0
        self.start_time = 0.0
        self.diff = 0.0
        self.average_time = 0.0

    def tic(self):
        self.start_time = time.time()

    def toc(self):
        self.diff = time.time() - self.start_time
        self.total_time += self.diff
        self.calls += 1
        self.average_time = self.total_time / self.calls


def topk_errors(preds, labels, ks):
    err_str = "Batch dim of predictions and labels must match"
    assert preds.size(0) == labels.size(0), err_str
    _top_max_k_vals, top_max_k_inds = torch.topk(preds, max(ks), dim=1, largest=True, sorted=True)
    top_max_k_inds = top_max_k_inds.t()
    rep_max_k_labels = labels.view(1, -1).expand_as(top_max_k_inds)
    top_max_k_correct = top_max_k_inds.eq(rep_max_k_labels)
    topks_correct = [top_max_k_correct[:k, :].reshape(-1).float().sum() for k in ks]
    return [(1.0 - x / preds.size(0)) * 100.0 for x in topks_correct]


# ------------------------------------------------------------------ setup
def setup_env():
    """Sets up environment for training or testing."""
    if is_master_proc():
        os.makedirs(cfg.OUT_DIR, exist_ok=True)
        logging.setup_logging()
        logger.info("Config:\n{}".format(cfg))
    np.random.seed(cfg.RNG_SEED)
    torch.manual_seed(cfg.RNG_SEED)
    random.seed(cfg.RNG_SEED)
    torch.backends.cudnn.benchmark = cfg.CUDNN.BENCHMARK


def setup_model():
    """Sets up a model for training or testing and log the results."""
    model = builders.build_model()
    logger.info("Model:\n{}".format(model)) if is_master_proc() else ()
    logger.info(logging.dump_log_data(net.complexity(model), "complexity"))
    err_str = "Cannot use more GPU devices than available"
    assert cfg.NUM_GPUS <= torch.cuda.device_count(), err_str
    cur_device = torch.cuda.current_device()
    model = model.cuda(device=cur_device)
    if cfg.NUM_GPUS > 1:
        ddp = torch.nn.parallel.DistributedDataParallel
        model = ddp(module=model, device_ids=[cur_device], output_device=cur_device)
    return model


# ------------------------------------------------------------------ epochs
def train_epoch(loader, model, ema, loss_fun, optimizer, scaler, epoch):
    """Performs one epoch of training."""
    data_loader.shuffle(loader, epoch)
    lr = optim.get_epoch_lr(epoch)
    optim.set_lr(optimizer, lr)
    model.train()
    ema.train()
    timer = Timer()
    timer.tic()
    for cur_iter, (inputs, labels) in enumerate(loader):
        # Transfer the data to the current GPU device
        inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)
        labels_one_hot = net.smooth_one_hot_labels(labels)
        inputs, labels_one_hot, labels = net.mixup(inputs, labels_one_hot)
        with amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):
            preds = model(inputs)
            loss = loss_fun(preds, labels_one_hot)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        net.update_model_ema(model, ema, cur_iter)
        top1_err, top5_err = topk_errors(preds, labels, [1, 5])
        loss, top1_err, top5_err = scaled_all_reduce([loss, top1_err, top5_err])
        timer.toc()
        if cur_iter % cfg.LOG_PERIOD == 0 and is_master_proc():
            logger.info("epoch {} iter {} loss {:.4f} top1 {:.2f} top5 {:.2f} lr {:.4f} "
                        "time {:.3f} mem {:.0f}MB".format(epoch + 1, cur_iter, loss.item(),
                                                          top1_err.item(), top5_err.item(), lr,
                                                          timer.average_time, gpu_mem_usage()))
        timer.tic()


@torch.no_grad()
def test_epoch(loader, model, epoch):
    """Evaluates the model on the test set."""
    model.eval()
    errs = []
    for cur_iter, (inputs, labels) in enumerate(loader):
        inputs = inputs.cuda()
        labels = labels.cuda(non_blocking=True)
        preds = model(inputs)
        top1_err, top5_err = topk_errors(preds, labels, [1, 5])
        top1_err, top5_err = scaled_all_reduce([top1_err, top5_err])
        errs.append((top1_err.item(), top5_err.item()))
    top1 = sum(e[0] for e in errs) / max(len(errs), 1)
    top5 = sum(e[1] for e in errs) / max(len(errs), 1)
    if is_master_proc():
        logger.info("test epoch {}: top1_err {:.3f} top5_err {:.3f}".format(epoch + 1, top1, top5))
    return top1


def train_model():
    """Trains the model."""
    setup_env()
    model = setup_model()
    ema = setup_model()
    loss_fun = builders.build_loss_fun().cuda()
    optimizer = optim.construct_optimizer(model)
    start_epoch = 0
    if cfg.TRAIN.AUTO_RESUME and cp.has_checkpoint():
        file = cp.get_last_checkpoint()
        epoch = cp.load_checkpoint(file, model, ema, optimizer)[0]
        logger.info("Loaded checkpoint from: {}".format(file))
        start_epoch = epoch + 1
    elif cfg.TRAIN.WEIGHTS:
        cp.load_checkpoint(cfg.TRAIN.WEIGHTS, model, ema)
    train_loader = data_loader.construct_train_loader()
    test_loader = data_loader.construct_test_loader()
    scaler = amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)
    if start_epoch == 0 and cfg.PREC_TIME.NUM_ITER > 0:
        compute_time_full(model, loss_fun, train_loader, test_loader)
    logger.info("Start epoch: {}".format(start_epoch + 1))
    best_err = np.inf
    for cur_epoch in range(start_epoch, cfg.OPTIM.MAX_EPOCH):
        params = (train_loader, model, ema, loss_fun, optimizer, scaler, cur_epoch)
        train_epoch(*params)
        net.compute_precise_bn_stats(model, train_loader)
        net.compute_precise_bn_stats(ema, train_loader)
        test_err = test_epoch(test_loader, model, cur_epoch)
        if is_master_proc():
            best = test_err <= best_err
            best_err = min(test_err, best_err)
            cp.save_checkpoint(model, ema, optimizer, cur_epoch, test_err, best)


# ------------------------------------------------------------------ timing (pycls/core/benchmark.py)
@torch.no_grad()
def compute_time_eval(model):
    """Computes precise model forward test time using dummy data."""
    model.eval()
    im_size, batch_size = cfg.TRAIN.IM_SIZE, int(cfg.TEST.BATCH_SIZE / cfg.NUM_GPUS)
    inputs = torch.zeros(batch_size, 3, im_size, im_size).cuda(non_blocking=False)
    timer = Timer()
    total_iter = cfg.PREC_TIME.NUM_ITER + cfg.PREC_TIME.WARMUP_ITER
    for cur_iter in range(total_iter):
        if cur_iter == cfg.PREC_TIME.WARMUP_ITER:
            timer = Timer()
        timer.tic()
        model(inputs)
        torch.cuda.synchronize()
        timer.toc()
    return timer.average_time


def compute_time_train(model, loss_fun):
    """Computes precise model forward + backward time using dummy data."""
    model.train()
    im_size, batch_size = cfg.TRAIN.IM_SIZE, int(cfg.TRAIN.BATCH_SIZE / cfg.NUM_GPUS)
    inputs = torch.rand(batch_size, 3, im_size, im_size).cuda(non_blocking=False)
    labels = torch.zeros(batch_size, dtype=torch.int64).cuda(non_blocking=False)
    labels_one_hot = net.smooth_one_hot_labels(labels)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    bn_stats = [[bn.running_mean.clone(), bn.running_var.clone()] for bn in bns]
    scaler = amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)
    fw_timer, bw_timer = Timer(), Timer()
    total_iter = cfg.PREC_TIME.NUM_ITER + cfg.PREC_TIME.WARMUP_ITER
    for cur_iter in range(total_iter):
        if cur_iter == cfg.PREC_TIME.WARMUP_ITER:
            fw_timer, bw_timer = Timer(), Timer()
        fw_timer.tic()
        with amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):
            preds = model(inputs)
            loss = loss_fun(preds, labels_one_hot)
        torch.cuda.synchronize()  # end of forward
        fw_timer.toc()
        bw_timer.tic()
        scaler.scale(loss).backward()
        torch.cuda.synchronize()  # end of backward
        bw_timer.toc()
    for bn, (mean, var) in zip(bns, bn_stats):
        bn.running_mean, bn.running_var = mean, var
    return fw_timer.average_time, bw_timer.average_time


def compute_time_full(model, loss_fun, train_loader, test_loader):
    logger.info("Computing model and loader timings...")
    test_fw_time = compute_time_eval(model)
    train_fw_time, train_bw_time = compute_time_train(model, loss_fun)
    train_fw_bw_time = train_fw_time + train_bw_time
    logger.info(logging.dump_log_data({
        "test_fw_time": test_fw_time,
        "train_fw_time": train_fw_time,
        "train_bw_time": train_bw_time,
        "train_fw_bw_time": train_fw_bw_time,
    }, "iter_times"))


def train_main():
    multi_proc_run(num_proc=cfg.NUM_GPUS, fun=train_model)
