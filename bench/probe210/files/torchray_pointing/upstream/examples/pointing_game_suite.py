# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

r"""Run the pointing game benchmark for a set of attribution methods.

Every (method, architecture, dataset) triple is an experiment; experiments
are split in chunks that are farmed out to a pool of worker processes, one
per GPU listed in ``--gpus``.

    python examples/pointing_game_suite.py --gpus 0 1 2 3 --methods grad_cam rise
    python examples/pointing_game_suite.py --debug            # CPU, 20 images
"""

import argparse
import math
import multiprocessing as mp
import os
import sys
import time

import numpy as np
import torch

import torchray.attribution.extremal_perturbation as elp
from torchray.attribution.common import get_pointing_gradient
from torchray.attribution.deconvnet import deconvnet
from torchray.attribution.excitation_backprop import contrastive_excitation_backprop
from torchray.attribution.excitation_backprop import excitation_backprop
from torchray.attribution.excitation_backprop import update_resnet
from torchray.attribution.grad_cam import grad_cam
from torchray.attribution.gradient import gradient
from torchray.attribution.guided_backprop import guided_backprop
from torchray.attribution.rise import rise
from torchray.benchmark.datasets import get_dataset, coco_as_mask, voc_as_mask
from torchray.benchmark.models import get_model, get_transform
from torchray.benchmark.pointing_game import PointingGameBenchmark
from torchray.utils import imsmooth, get_device, xmkdir

series = 'attribution_benchmarks'
series_dir = os.path.join('data', series)

methods = [
    'center',
    'contrastive_excitation_backprop',
    'deconvnet',
    'excitation_backprop',
    'grad_cam',
    'gradient',
    'guided_backprop',
    'rise',
    'extremal_perturbation',
]

archs = ['vgg16', 'resnet50']
datasets = ['voc_2007', 'coco']


class ProcessingError(Exception):
    def __init__(self, executor, experiment, model, image, label, class_id,
                 image_size):
        super().__init__(f"Error processing {str(label):20s}")
        self.executor = executor
        self.experiment = experiment
        self.model = model
        self.image = image
        self.label = label
        self.class_id = class_id
        self.image_size = image_size


def _saliency_to_point(saliency):
    assert len(saliency.shape) == 4
    w = saliency.shape[3]
    point = torch.argmax(saliency.view(len(saliency), -1), dim=1, keepdim=True)
    return torch.cat((point % w, point // w), dim=1)


def _resize_saliency(image, saliency):
    return torch.nn.functional.interpolate(
        saliency,
        image.shape[2:],
        mode='bilinear',
        align_corners=False,
    )


class Experiment():
    def __init__(self, series, method, arch, dataset, root='', chunk=None,
                 boom=False):
        self.series = series
        self.root = root
        self.method = method
        self.arch = arch
        self.dataset = dataset
        self.boom = boom
        self.pointing = float('NaN')
        self.pointing_difficult = float('NaN')
        if self.dataset == 'voc_2007':
            self.subset = 'test'
        elif self.dataset == 'coco':
            self.subset = 'val2014'
        else:
            assert False
        self.chunk = chunk

    @property
    def name(self):
        return f'{self.series}-{self.method}-{self.arch}-{self.dataset}'

    @property
    def path(self):
        return os.path.join(self.root, self.name + '.pth')

    def save(self):
        torch.save(self.__dict__, self.path)

    def load(self):
        data = torch.load(self.path)
        self.__dict__.update(data)

    def done(self):
        return os.path.exists(self.path)

    def __str__(self):
        return (f'{self.method:<28s} {self.arch:<10s} {self.dataset:<10s}'
                f' {self.pointing:6.3f} {self.pointing_difficult:6.3f}')


class ExperimentExecutor():
    def __init__(self, experiment, chunk=None, debug=0, seed=0):
        self.experiment = experiment
        self.device = None
        self.model = None
        self.data = None
        self.loader = None
        self.pointing = None
        self.pointing_difficult = None
        self.debug = debug
        self.seed = seed

        if self.experiment.arch == 'vgg16':
            self.gradcam_layer = 'features.29'  # relu before pool5
            self.saliency_layer = 'features.23'  # pool4
            self.contrast_layer = 'classifier.4'  # relu7
        elif self.experiment.arch == 'resnet50':
            self.gradcam_layer = 'layer4'
            self.saliency_layer = 'layer3'  # 'layer3.5'  # res4a
            self.contrast_layer = 'avgpool'  # pool before fc layer
        else:
            assert False

        if self.experiment.dataset == 'voc_2007':
            subset = 'test'
        elif self.experiment.dataset == 'coco':
            subset = 'val2014'
        else:
            assert False

        # Load the model.
        if self.experiment.method == "rise":
            input_size = (224, 224)
        else:
            input_size = 224
        transform = get_transform(size=input_size, dataset=subset)

        self.data = get_dataset(name=self.experiment.dataset,
                                subset=self.experiment.subset,
                                transform=transform,
                                download=False,
                                limiter=None)

        # Get subset of data. This is used for debugging and for
        # splitting computation on a cluster.
        if chunk is None:
            chunk = self.experiment.chunk

        if isinstance(chunk, dict):
            dataset_filter = chunk
            chunk = []
            if 'image_name' in dataset_filter:
                for i, name in enumerate(self.data.images):
                    if dataset_filter['image_name'] in name:
                        chunk.append(i)

            print(f"Filter selected {len(chunk)} image(s).")

        # Limit the chunk to the actual size of the dataset.
        if chunk is not None:
            chunk = list(set(range(len(self.data))).intersection(set(chunk)))

        # Extract the data subset.
        chunk = torch.utils.data.Subset(self.data, chunk) if chunk else self.data

        # Get a data loader for the subset of data just selected.
        self.loader = torch.utils.data.DataLoader(
            chunk,
            batch_size=1,
            shuffle=False,
            num_workers=0,
            collate_fn=self.data.collate)

        self.pointing = PointingGameBenchmark(self.data, difficult=False)
        self.pointing_difficult = PointingGameBenchmark(
            self.data, difficult=True)

        self.data_iterator = iter(self.loader)

    def _lazy_init(self):
        if self.device is not None:
            return

        if self.debug:
            self.device = 'cpu'
        else:
            self.device = get_device()

        self.model = get_model(
            arch=self.experiment.arch,
            dataset=self.experiment.dataset,
            convert_to_fully_convolutional=True,
        )

        # Some methods require patching the models further for
        # optimization.
        if self.experiment.method == "contrastive_excitation_backprop":
            update_resnet(self.model, debug=True)

        # Put model in evaluation mode.
        self.model.eval()

        # Move model to device.
        self.model.to(self.device)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def __next__(self):
        self._lazy_init()
        x, y = next(self.data_iterator)
        torch.manual_seed(self.seed)

        if self.experiment.dataset == 'voc_2007':
            class_ids = voc_as_mask(y[0])
        else:
            class_ids = coco_as_mask(y[0])

        image_size = (x.shape[2], x.shape[3])

        # Run one image through the attribution method for every class
        # present in the image.
        x = x.to(self.device)
        for class_id in class_ids:
            try:
                saliency = self._saliency(x, class_id)
                point = _saliency_to_point(saliency)
                info = {
                    'saliency': saliency,
                    'point': point,
                }
            except Exception as ex:
                raise ProcessingError(
                    self, self.experiment, self.model, x, y, class_id,
                    image_size) from ex
            self.pointing.aggregate(info['point'], y[0], class_id)
            self.pointing_difficult.aggregate(info['point'], y[0], class_id)
        return x, y, class_ids

    def _saliency(self, x, class_id):
        method = self.experiment.method
        if method == "center":
            w, h = x.shape[3], x.shape[2]
            saliency = torch.zeros((1, 1, h, w), device=self.device)
            saliency[:, :, int(h / 2), int(w / 2)] = 1
        elif method == "gradient":
            saliency = gradient(self.model, x, class_id, resize=(x.shape[2], x.shape[3]),
                                smooth=0.02, get_backward_gradient=get_pointing_gradient)
        elif method == "deconvnet":
            saliency = deconvnet(self.model, x, class_id, resize=(x.shape[2], x.shape[3]),
                                 smooth=0.02, get_backward_gradient=get_pointing_gradient)
        elif method == "guided_backprop":
            saliency = guided_backprop(self.model, x, class_id, resize=(x.shape[2], x.shape[3]),
                                       smooth=0.02, get_backward_gradient=get_pointing_gradient)
        elif method == "grad_cam":
            saliency = grad_cam(self.model, x, class_id, saliency_layer=self.gradcam_layer,
                                resize=(x.shape[2], x.shape[3]),
                                get_backward_gradient=get_pointing_gradient)
        elif method == "excitation_backprop":
            saliency = excitation_backprop(self.model, x, class_id, self.saliency_layer,
                                           resize=(x.shape[2], x.shape[3]),
                                           get_backward_gradient=get_pointing_gradient)
        elif method == "contrastive_excitation_backprop":
            saliency = contrastive_excitation_backprop(
                self.model, x, class_id, saliency_layer=self.saliency_layer,
                contrast_layer=self.contrast_layer, resize=(x.shape[2], x.shape[3]),
                get_backward_gradient=get_pointing_gradient)
        elif method == "rise":
            with torch.no_grad():
                saliency = rise(self.model, x, num_masks=4000, batch_size=64)
            saliency = saliency[:, class_id].unsqueeze(1)
            saliency = _resize_saliency(x, saliency)
        elif method == "extremal_perturbation":
            if self.experiment.dataset == 'voc_2007':
                areas = [0.025, 0.05, 0.1, 0.2]
            else:
                areas = [0.018, 0.025, 0.05, 0.1]
            if self.experiment.boom:
                raise RuntimeError("BOOM!")
            mask, energy = elp.extremal_perturbation(
                self.model, x, class_id, areas=areas, num_levels=8, step=7,
                sigma=7 * 3, max_iter=800, debug=self.debug > 0,
                jitter=True, smooth=0.09, resize=True,
                perturbation='blur', reward_func=elp.simple_reward,
                variant=elp.PRESERVE_VARIANT)
            saliency = mask.sum(dim=0, keepdim=True)
            saliency = imsmooth(saliency, sigma=3)
        else:
            assert False, f"unknown method {method}"
        return saliency

    def aggregate(self, other):
        self.pointing.aggregate(other.pointing)
        self.pointing_difficult.aggregate(other.pointing_difficult)

    def run(self, save=True):
        all_series_dir = os.path.join(series_dir, self.experiment.series)
        xmkdir(all_series_dir)
        for i, _ in enumerate(self):
            if self.debug and i >= 20:
                break
            if i % 50 == 0:
                print(f"{self.experiment.name}: {i}/{len(self)}"
                      f" acc {self.pointing.accuracy:.3f}", flush=True)
        self.experiment.pointing = self.pointing.accuracy
        self.experiment.pointing_difficult = self.pointing_difficult.accuracy
        if save:
            self.experiment.save()
        return self.experiment


# --------------------------------------------------------------------------
# Multi-GPU driver: one worker process per GPU, each pinned to its device.
# --------------------------------------------------------------------------

_gpu_queue = None


def _worker_init(gpu_queue):
    gpu = gpu_queue.get()
    torch.cuda.set_device(gpu)
    # cudnn autotuning pays off: every image has a different size only for
    # the first few batches, then the shapes repeat.
    torch.backends.cudnn.benchmark = True
    print(f"[worker {os.getpid()}] using cuda:{gpu}", flush=True)


def _run_chunk(args):
    experiment, chunk, debug, seed = args
    gpu = torch.cuda.current_device()
    executor = ExperimentExecutor(experiment, chunk=chunk, debug=debug, seed=seed)
    executor.device = torch.device(f'cuda:{gpu}')
    executor._lazy_init()
    start = time.time()
    for i, _ in enumerate(executor):
        pass
    return (experiment.name, executor.pointing, executor.pointing_difficult,
            time.time() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument('--methods', nargs='+', default=methods, choices=methods)
    parser.add_argument('--archs', nargs='+', default=archs, choices=archs)
    parser.add_argument('--datasets', nargs='+', default=datasets, choices=datasets)
    parser.add_argument('--gpus', nargs='+', type=int, default=[0])
    parser.add_argument('--chunk-size', type=int, default=500)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--debug', action='store_true')
    args = parser.parse_args()

    experiments = [Experiment(series=series, method=m, arch=a, dataset=d, root=series_dir)
                   for m in args.methods for a in args.archs for d in args.datasets]

    if args.debug:
        for experiment in experiments:
            ExperimentExecutor(experiment, debug=1, seed=args.seed).run(save=False)
            print(experiment)
        return

    jobs = []
    for experiment in experiments:
        if experiment.done():
            experiment.load()
            continue
        n = len(ExperimentExecutor(experiment, debug=0).data)
        num_chunks = math.ceil(n / args.chunk_size)
        for k in range(num_chunks):
            chunk = list(range(k * args.chunk_size, min(n, (k + 1) * args.chunk_size)))
            jobs.append((experiment, chunk, 0, args.seed))

    ctx = mp.get_context('spawn')
    gpu_queue = ctx.Queue()
    for gpu in args.gpus:
        gpu_queue.put(gpu)

    results = {}
    with ctx.Pool(len(args.gpus), initializer=_worker_init, initargs=(gpu_queue,)) as pool:
        for name, pointing, pointing_difficult, secs in pool.imap_unordered(_run_chunk, jobs):
            if name not in results:
                results[name] = (pointing, pointing_difficult)
            else:
                results[name][0].aggregate(pointing)
                results[name][1].aggregate(pointing_difficult)
            print(f"{name}: chunk done in {secs:.0f}s", flush=True)

    for experiment in experiments:
        if experiment.name in results:
            pointing, pointing_difficult = results[experiment.name]
            experiment.pointing = pointing.accuracy
            experiment.pointing_difficult = pointing_difficult.accuracy
            experiment.save()
        print(experiment)


if __name__ == '__main__':
    main()
