"""Density estimation on images (CIFAR-10 / ImageNet64 / CelebA) with neural spline flows.

Multi-scale Glow-style architecture where the coupling transforms are rational-quadratic
splines (Durkan et al. 2019).  Trains with Adam + cosine annealing, mixed precision, and
reports test bits-per-dim.  Hyperparameters come from a sacred config.
"""
import json
import os
import time

import numpy as np
import torch
from sacred import Experiment, observers
from torch import optim
from torch.nn import functional as F
from torch.nn.utils import clip_grad_norm_
from torch.utils import data
from torch.utils.tensorboard import SummaryWriter
from torchvision.utils import make_grid, save_image

import nde.distributions as distributions
import nde.flows as flows
import nde.transforms as transforms
import utils
from experiments import autils
from experiments.autils import Conv2dSameSize, LogProgress
from experiments.images_data import Preprocess, get_data, get_data_root

ex = Experiment("decomposition-flows-images")


class ConvNet(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.hidden_channels = hidden_channels
        self.net = torch.nn.Sequential(
            Conv2dSameSize(in_channels, hidden_channels, kernel_size=3),
            torch.nn.ReLU(),
            Conv2dSameSize(hidden_channels, hidden_channels, kernel_size=1),
            torch.nn.ReLU(),
            Conv2dSameSize(hidden_channels, out_channels, kernel_size=3),
        )

    def forward(self, inp, context=None):
        return self.net.forward(inp)


@ex.config
def config():
    # Dataset
    dataset = "cifar-10-fast"
    num_workers = 0
    valid_frac = 0.01

    # Pre-processing
    preprocessing = "glow"
    alpha = 0.05
    num_bits = 8
    pad = 2  # For mnist-like datasets

    # Model architecture
    steps_per_level = 10
    levels = 3
    multi_scale = True
    actnorm = True

    # Coupling transform
    coupling_layer_type = "rational_quadratic_spline"
    spline_params = {
        "num_bins": 4,
        "tail_bound": 1.0,
        "min_bin_width": 1e-3,
        "min_bin_height": 1e-3,
        "min_derivative": 1e-3,
        "apply_unconditional_transform": False,
    }

    # Coupling transform net
    hidden_channels = 256
    use_resnet = False
    num_res_blocks = 5
    resnet_batchnorm = True
    dropout_prob = 0.0

    # Optimization
    batch_size = 256
    learning_rate = 5e-4
    cosine_annealing = True
    eta_min = 0.0
    warmup_fraction = 0.0
    num_steps = 100000
    temperatures = [0.5, 0.75, 1.0]
    use_amp = True

    # Training logistics
    use_gpu = True
    multi_gpu = False
    run_descr = ""
    flow_checkpoint = None
    optimizer_checkpoint = None
    start_step = 0

    intervals = {
        "save": 1000,
        "sample": 1000,
        "eval": 1000,
        "reconstruct": 10000,
        "log": 10,
    }


@ex.capture
def create_flow(c, h, w, flow_checkpoint, _log):
    distribution = distributions.StandardNormal((c * h * w,))
    transform = autils.create_transform(c, h, w)
    flow = flows.Flow(transform, distribution)
    _log.info("There are {} trainable parameters in this model.".format(
        utils.get_num_parameters(flow)))
    if flow_checkpoint is not None:
        flow.load_state_dict(torch.load(flow_checkpoint))
        _log.info("Flow state loaded from {}".format(flow_checkpoint))
    return flow


@ex.capture
def train_flow(flow, train_dataset, val_dataset, dataset_dims, device,
               batch_size, num_steps, learning_rate, cosine_annealing, warmup_fraction,
               temperatures, num_bits, num_workers, intervals, multi_gpu, actnorm,
               optimizer_checkpoint, start_step, eta_min, use_amp, _log):
    run_dir = autils.get_run_dir(ex)
    summary_writer = SummaryWriter(run_dir, max_queue=100)

    train_loader = data.DataLoader(train_dataset, batch_size=batch_size, shuffle=True,
                                   num_workers=num_workers, pin_memory=True, drop_last=True)
    if val_dataset:
        val_loader = data.DataLoader(dataset=val_dataset, batch_size=batch_size,
                                     num_workers=num_workers, pin_memory=True)
    else:
        val_loader = None

    # Random batch and identity transform for reconstruction evaluation.
    random_batch, _ = next(iter(data.DataLoader(
        dataset=val_dataset if val_dataset is not None else train_dataset,
        batch_size=batch_size, num_workers=0)))
    identity_transform = transforms.CompositeTransform([
        flow._transform,
        transforms.InverseTransform(flow._transform),
    ])

    optimizer = optim.Adam(flow.parameters(), lr=learning_rate)
    if optimizer_checkpoint is not None:
        optimizer.load_state_dict(torch.load(optimizer_checkpoint))
        _log.info("Optimizer state loaded from {}".format(optimizer_checkpoint))

    if cosine_annealing:
        if warmup_fraction == 0.0:
            scheduler = optim.lr_scheduler.CosineAnnealingLR(
                optimizer=optimizer, T_max=num_steps, last_epoch=-1 if start_step == 0 else start_step,
                eta_min=eta_min)
        else:
            scheduler = utils.CosineAnnealingWarmUpLR(
                optimizer=optimizer, warm_up_epochs=int(warmup_fraction * num_steps),
                total_epochs=num_steps, last_epoch=-1 if start_step == 0 else start_step,
                eta_min=eta_min)
    else:
        scheduler = None

    def nats_to_bits_per_dim(x):
        c, h, w = dataset_dims
        return autils.nats_to_bits_per_dim(x, c, h, w)

    _log.info("Starting training...")
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    best_val_log_prob = None
    start_time = None
    num_batches = num_steps - start_step

    for step, (batch, _) in enumerate(load_num_batches(loader=train_loader, num_batches=num_batches),
                                      start=start_step):
        if step == 0:
            start_time = time.time()  # Runtime estimate will be more accurate if set here.

        flow.train()
        optimizer.zero_grad()
        batch = batch.to(device)

        with torch.cuda.amp.autocast(enabled=use_amp):
            log_density = flow.log_prob(batch)
            loss = -nats_to_bits_per_dim(torch.mean(log_density))

        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_grad_norm_(flow.parameters(), max_norm=5.0)
        scaler.step(optimizer)
        scaler.update()
        if scheduler is not None:
            scheduler.step()
            summary_writer.add_scalar("learning_rate", scheduler.get_last_lr()[0], step)

        summary_writer.add_scalar("loss", loss.item(), step)

        if best_val_log_prob:
            summary_writer.add_scalar("best_val_log_prob", best_val_log_prob, step)

        flow.eval()  # Everything beyond this point is evaluation.

        if step % intervals["log"] == 0:
            elapsed_time = time.time() - start_time
            progress = autils.progress_string(elapsed_time, step, num_steps)
            _log.info("It: {}/{} loss: {:.3f} [{}]".format(step, num_steps, loss, progress))
            summary_writer.add_scalar("gpu_mem_mb", torch.cuda.memory_allocated() / 2 ** 20, step)

        if step % intervals["sample"] == 0:
            fig, axs = plt_subplots_for_temperatures(temperatures)
            with torch.no_grad():
                for temperature in temperatures:
                    noise = flow._distribution.sample(64) * temperature
                    samples, _ = flow._transform.inverse(noise)
                    samples = Preprocess(num_bits).inverse(samples)
                    save_image(samples.cpu(), os.path.join(run_dir, f"samples_{step}_T{temperature}.png"),
                               nrow=8)

        if step > 0 and step % intervals["eval"] == 0 and (val_loader is not None):
            if multi_gpu:
                def log_prob_fn(batch):
                    return torch.nn.parallel.data_parallel(LogProbWrapper(flow), batch.to(device))
            else:
                def log_prob_fn(batch):
                    return flow.log_prob(batch.to(device))

            val_log_prob = autils.eval_log_density(log_prob_fn=log_prob_fn, data_loader=val_loader)
            val_log_prob = nats_to_bits_per_dim(val_log_prob).item()

            _log.info("It: {}/{} val_log_prob: {:.3f}".format(step, num_steps, val_log_prob))
            summary_writer.add_scalar("val_log_prob", val_log_prob, step)

            if best_val_log_prob is None or val_log_prob > best_val_log_prob:
                best_val_log_prob = val_log_prob

                torch.save(flow.state_dict(), os.path.join(run_dir, "flow_best.pt"))
                _log.info("It: {}/{} best val_log_prob improved, saved flow_best.pt"
                          .format(step, num_steps))

        if step > 0 and (step % intervals["save"] == 0 or step == (num_steps - 1)):
            torch.save(optimizer.state_dict(), os.path.join(run_dir, "optimizer_last.pt"))
            torch.save(flow.state_dict(), os.path.join(run_dir, "flow_last.pt"))
            _log.info("It: {}/{} saved optimizer_last.pt and flow_last.pt".format(step, num_steps))

        if step > 0 and step % intervals["reconstruct"] == 0:
            with torch.no_grad():
                random_batch_ = random_batch.to(device)
                random_batch_rec, logabsdet = identity_transform(random_batch_)
                max_abs_diff = torch.max(torch.abs(random_batch_rec - random_batch_))
                max_logabsdet = torch.max(logabsdet)
            summary_writer.add_scalar(tag="max_reconstr_abs_diff", scalar_value=max_abs_diff.item(),
                                      global_step=step)
            summary_writer.add_scalar(tag="max_reconstr_logabsdet", scalar_value=max_logabsdet.item(),
                                      global_step=step)


def plt_subplots_for_temperatures(temperatures):
    return None, [None] * len(temperatures)


class LogProbWrapper(torch.nn.Module):
    def __init__(self, flow):
        super(LogProbWrapper, self).__init__()
        self.flow = flow

    def forward(self, inputs, context=None):
        return self.flow.log_prob(inputs, context)


def load_num_batches(loader, num_batches):
    """A generator that returns num_batches batches from the loader, irrespective of the length
    of the dataset."""
    batch_counter = 0
    while True:
        for batch in loader:
            yield batch
            batch_counter += 1
            if batch_counter == num_batches:
                return


@ex.capture
def set_device(use_gpu, multi_gpu, _log):
    # Decide which device to use.
    if use_gpu and not torch.cuda.is_available():
        raise RuntimeError("use_gpu is True but CUDA is not available")

    if use_gpu:
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")

    if multi_gpu and torch.cuda.device_count() > 1:
        num_gpus = torch.cuda.device_count()
        _log.info("Using {} GPUs.".format(num_gpus))
    else:
        _log.info("Using {}.".format(device))
    torch.backends.cudnn.benchmark = True
    return device


@ex.command(unobserved=True)
def eval_reconstruct(num_bits, _log):
    device = set_device()
    flow = create_flow(*get_data_dims())
    flow = flow.to(device)
    test_dataset, (c, h, w) = get_data(test=True)
    loader = data.DataLoader(test_dataset, batch_size=256, num_workers=0)
    total = 0.0
    with torch.no_grad():
        for batch, _ in loader:
            batch = batch.to(device)
            rec, _ = flow._transform.inverse(flow._transform(batch)[0])
            total += torch.max(torch.abs(rec - batch)).item()
    _log.info("mean max reconstruction error: {:.2e}".format(total / len(loader)))


@ex.capture
def get_data_dims(dataset):
    return get_data(dataset, num_bits=8, train=True)[1]


@ex.automain
def main(seed, _log):
    _log.info("Using seed {}".format(seed))
    torch.manual_seed(seed)
    np.random.seed(seed)
    device = set_device()
    train_dataset, val_dataset, (c, h, w) = get_data(train=True)
    flow = create_flow(c, h, w).to(device)
    train_flow(flow, train_dataset, val_dataset, (c, h, w), device)
