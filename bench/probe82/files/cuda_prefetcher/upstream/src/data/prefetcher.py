"""Asynchronous host->device prefetching, after NVIDIA apex's ImageNet example.

The loader yields uint8 NCHW batches (see ``fast_collate``); the copy to the GPU and the
normalisation run on a side CUDA stream so they overlap with the previous step's compute.
With 8 workers this removes the dataloader bottleneck at 512px for B5-B7 backbones.
"""
import numpy as np
import torch

IMAGENET_MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
IMAGENET_STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)


def fast_collate(batch, memory_format=torch.contiguous_format):
    """Collate HWC uint8 numpy images (+ targets) into a uint8 NCHW tensor without normalising."""
    imgs = [b[0] for b in batch]
    targets = [b[1] for b in batch]
    h, w = imgs[0].shape[:2]
    tensor = torch.zeros((len(imgs), 3, h, w), dtype=torch.uint8).contiguous(memory_format=memory_format)
    for i, img in enumerate(imgs):
        arr = np.asarray(img, dtype=np.uint8)
        if arr.ndim < 3:
            arr = np.expand_dims(arr, axis=-1)
        arr = np.rollaxis(arr, 2)
        tensor[i] += torch.from_numpy(arr)
    if isinstance(targets[0], np.ndarray):
        targets = torch.from_numpy(np.stack(targets))
    else:
        targets = torch.as_tensor(np.asarray(targets))
    return tensor, targets


class DataPrefetcher:
    """Wraps a DataLoader; ``next()`` returns (input, target) already on the GPU, or (None, None)."""

    def __init__(self, loader, mean=IMAGENET_MEAN, std=IMAGENET_STD, normalize=True, fp16=False):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.normalize = normalize
        self.fp16 = fp16
        self.mean = torch.tensor(mean).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor(std).cuda().view(1, 3, 1, 1)
        if fp16:
            self.mean = self.mean.half()
            self.std = self.std.half()
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)
            self.next_input = self.next_input.half() if self.fp16 else self.next_input.float()
            if self.normalize:
                self.next_input = self.next_input.sub_(self.mean).div_(self.std)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        input = self.next_input
        target = self.next_target
        if input is not None:
            input.record_stream(torch.cuda.current_stream())
        if target is not None:
            target.record_stream(torch.cuda.current_stream())
        self.preload()
        return input, target

    def __iter__(self):
        return self

    def __next__(self):
        input, target = self.next()
        if input is None:
            raise StopIteration
        return input, target


class PrefetchLoader:
    """Re-iterable wrapper: ``for x, y in PrefetchLoader(loader)`` (one DataPrefetcher per epoch)."""

    def __init__(self, loader, **kwargs):
        self.loader = loader
        self.kwargs = kwargs

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        return DataPrefetcher(self.loader, **self.kwargs)

    @property
    def sampler(self):
        return self.loader.sampler

    @property
    def dataset(self):
        return self.loader.dataset
