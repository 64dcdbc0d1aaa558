"""Miscellaneous callbacks used by tsai learners."""

__all__ = ['TransformScheduler', 'ShowGraph', 'ShowGraphCallback2', 'GPUMemoryTracker', 'GPUUtilization',
           'SaveBestModel', 'get_lds_kernel_window', 'prepare_LDS_weights']

import time
import warnings
from pathlib import Path

import numpy as np
import matplotlib.pyplot as plt
import torch
from fastcore.basics import store_attr, listify
from fastai.callback.core import Callback
from fastai.callback.tracker import TrackerCallback
from fastai.learner import Recorder

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:
    _HAS_NVML = False


class TransformScheduler(Callback):
    "A callback to schedule batch transforms during training based on a function (sched_lin, sched_exp, sched_cos (default), etc)"

    def __init__(self, schedule_func, show_plot=False):
        self.schedule_func, self.show_plot = schedule_func, show_plot
        self.mult = []

    def before_fit(self):
        for pct in np.linspace(0, 1, len(self.dls.train) * self.n_epoch):
            self.mult.append(self.schedule_func(pct))
        # get initial magnitude values and update initial value
        self.mag = []
        self.mag_tfms = []
        for t in listify(self.dls.after_batch):
            if hasattr(t, 'magnitude'):
                self.mag.append(t.magnitude)
                t.magnitude *= self.mult[0]
                self.mag_tfms.append(t)

    def after_batch(self):
        if self.training and len(self.mag_tfms) > 0 and self.train_iter < len(self.mult):
            # set values for next batch
            for t, m in zip(self.mag_tfms, self.mag):
                t.magnitude = m * self.mult[self.train_iter]

    def after_fit(self):
        if self.show_plot and self.mult != [] and len(self.mag_tfms) > 0:
            print()
            plt.plot(self.mult)
            plt.title('Scheduled tfms')
            plt.show()
            print()
            self.show_plot = False
        # set values to initial values
        for t, m in zip(self.mag_tfms, self.mag):
            t.magnitude = m

    def __repr__(self):
        return f'{self.__class__.__name__}({self.schedule_func})'


class ShowGraph(Callback):
    "(Modified) Update a graph of training and validation loss"
    order, run_valid = 65, False
    names = ['train', 'valid']

    def __init__(self, plot_metrics: bool = True, final_losses: bool = True, perc: float = .5):
        store_attr("plot_metrics,final_losses,perc")

    def before_fit(self):
        self.run = not hasattr(self.learn, 'lr_finder') and not hasattr(self, "gather_preds")
        if not (self.run):
            return
        self.nb_batches = []

    def after_train(self):
        self.nb_batches.append(self.train_iter - 1)

    def after_epoch(self):
        "Plot validation loss in the pbar graph"
        if not self.nb_batches:
            return
        rec = self.learn.recorder
        if self.epoch == 0:
            self.rec_start = len(rec.losses)
        iters = range_of(rec.losses)
        val_losses = np.stack(rec.values)[:, self.learn.recorder.metric_names.index('valid_loss') - 1]
        x_bounds = (0, len(rec.losses) - 1)
        if self.epoch == 0:
            y_min = min((min(rec.losses), min(val_losses)))
            y_max = max((max(rec.losses), max(val_losses)))
        else:
            y_min = min((min(rec.losses[self.rec_start - 1:]), min(val_losses)))
            y_max = max((max(rec.losses[self.rec_start - 1:]), max(val_losses)))
        margin = (y_max - y_min) * .05
        y_bounds = (y_min - margin, y_max + margin)
        self.update_graph([(iters, rec.losses), (self.nb_batches, val_losses)], x_bounds, y_bounds)

    def update_graph(self, graphs, x_bounds=None, y_bounds=None, figsize=(6, 4)):
        if not hasattr(self, 'graph_fig'):
            self.graph_fig, self.graph_ax = plt.subplots(1, figsize=figsize)
        self.graph_ax.clear()
        for g, n in zip(graphs, self.names):
            self.graph_ax.plot(*g, label=n)
        self.graph_ax.legend(loc='upper right')
        self.graph_ax.grid(color='gainsboro', linewidth=.5)
        if x_bounds is not None:
            self.graph_ax.set_xlim(*x_bounds)
        if y_bounds is not None:
            self.graph_ax.set_ylim(*y_bounds)
        plt.pause(0.01)


ShowGraphCallback2 = ShowGraph


def range_of(x):
    return list(range(len(x)))


class GPUMemoryTracker(Callback):
    "Records allocated / peak GPU memory (MB) after every epoch and prints a summary after fit"
    order = 90

    def __init__(self, device=None, verbose=True):
        self.device, self.verbose = device, verbose

    def before_fit(self):
        self.enabled = torch.cuda.is_available()
        self.mem_alloc, self.mem_peak = [], []
        if self.enabled:
            torch.cuda.reset_peak_memory_stats(self.device)

    def after_epoch(self):
        if not self.enabled:
            return
        torch.cuda.synchronize(self.device)
        self.mem_alloc.append(torch.cuda.memory_allocated(self.device) / 2**20)
        self.mem_peak.append(torch.cuda.max_memory_allocated(self.device) / 2**20)

    def after_fit(self):
        if self.enabled and self.verbose and self.mem_peak:
            print(f'GPU memory - last allocated: {self.mem_alloc[-1]:.0f} MB | peak: {max(self.mem_peak):.0f} MB')


class GPUUtilization(Callback):
    "Samples GPU utilisation with NVML at the end of every training batch (only if pynvml is installed)"
    order = 91

    def __init__(self, gpu_index=0, every=50):
        self.gpu_index, self.every = gpu_index, every

    def before_fit(self):
        self.samples = []
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(self.gpu_index) if _HAS_NVML else None

    def after_batch(self):
        if self.handle is None or not self.training or self.train_iter % self.every:
            return
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        self.samples.append(util.gpu)

    def after_fit(self):
        if self.samples:
            print(f'mean GPU utilisation: {np.mean(self.samples):.1f}% ({len(self.samples)} samples)')


class SaveBestModel(TrackerCallback):
    "Saves the weights (state_dict on CPU) whenever the monitored metric improves"
    order = TrackerCallback.order + 1

    def __init__(self, monitor='valid_loss', comp=None, min_delta=0., fname='model', path='models',
                 reset_on_fit=True):
        super().__init__(monitor=monitor, comp=comp, min_delta=min_delta, reset_on_fit=reset_on_fit)
        self.fname, self.path = fname, Path(path)

    def after_epoch(self):
        super().after_epoch()
        if self.new_best:
            self.path.mkdir(parents=True, exist_ok=True)
            state = {k: v.detach().cpu() for k, v in self.learn.model.state_dict().items()}
            torch.save(state, self.path / f'{self.fname}.pth')


def get_lds_kernel_window(lds_kernel="gaussian", lds_ks=9, lds_sigma=1):
    r"""Function to determine the label distribution smoothing kernel window

    lds_kernel (str): LDS kernel type
    lds_ks (int): LDS kernel size (should be an odd number).
    lds_sigma (float): LDS gaussian/laplace kernel sigma
    """
    from scipy.ndimage import gaussian_filter1d
    from scipy.signal.windows import triang
    assert lds_kernel in ["gaussian", "triang", "laplace"]
    half_ks = (lds_ks - 1) // 2
    if lds_kernel == "gaussian":
        base_kernel = [0.0] * half_ks + [1.0] + [0.0] * half_ks
        kernel_window = gaussian_filter1d(base_kernel, sigma=lds_sigma) / max(gaussian_filter1d(base_kernel, sigma=lds_sigma))
    elif lds_kernel == "triang":
        kernel_window = triang(lds_ks)
    else:
        def laplace(x):
            return np.exp(-abs(x) / lds_sigma) / (2.0 * lds_sigma)
        kernel_window = list(map(laplace, np.arange(-half_ks, half_ks + 1))) / max(map(laplace, np.arange(-half_ks, half_ks + 1)))
    return kernel_window


def prepare_LDS_weights(labels, n_bins=None, label_range=None, reweight="inv", lds_kernel="gaussian", lds_ks=9,
                        lds_sigma=1, max_rel_weight=None, show_plot=True):
    from scipy.ndimage import convolve1d
    labels = np.asarray(labels)
    if label_range is None:
        label_range = (labels.min(), labels.max())
    if n_bins is None:
        n_bins = int(label_range[1] - label_range[0] + 1)
    bins = np.linspace(label_range[0], label_range[1], n_bins + 1)
    value_dict = np.histogram(labels, bins)[0]
    if reweight == "sqrt_inv":
        value_dict = np.sqrt(value_dict)
    lds_kernel_window = get_lds_kernel_window(lds_kernel, lds_ks, lds_sigma)
    smoothed_value = convolve1d(value_dict, weights=lds_kernel_window, mode="constant")
    idxs = np.clip(np.digitize(labels, bins) - 1, 0, n_bins - 1)
    weights = 1 / np.maximum(smoothed_value[idxs], 1e-6)
    weights = weights / weights.mean()
    if max_rel_weight is not None:
        weights = np.clip(weights, None, max_rel_weight)
    if show_plot:
        plt.plot(bins[:-1], value_dict, label='labels')
        plt.plot(bins[:-1], smoothed_value, label='smoothed')
        plt.legend()
        plt.show()
    return weights
