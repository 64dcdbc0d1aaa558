"""CUDA-stream data prefetcher for the ImageNet KD runs.

Adapted from the NVIDIA apex ImageNet example: the next batch is copied to the GPU
and normalized on a side stream while the current batch is being processed, so the
teacher+student forward never waits on the host->device copy.

Use together with ``fast_collate`` (uint8 NCHW batches, no ToTensor/Normalize in the
dataset transform).
"""
import numpy as np
import torch

IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def fast_collate(batch, memory_format=torch.contiguous_format):
    """collate PIL images into a uint8 tensor without normalizing (done on GPU)"""
    imgs = [img[0] for img in batch]
    targets = torch.tensor([target[1] for target in batch], dtype=torch.int64)
    w = imgs[0].size[0]
    h = imgs[0].size[1]
    tensor = torch.zeros((len(imgs), 3, h, w), dtype=torch.uint8).contiguous(memory_format=memory_format)
    for i, img in enumerate(imgs):
        nump_array = np.asarray(img, dtype=np.uint8)
        if nump_array.ndim < 3:
            nump_array = np.expand_dims(nump_array, axis=-1)
        nump_array = np.rollaxis(nump_array, 2)
        tensor[i] += torch.from_numpy(nump_array)
    return tensor, targets


class DataPrefetcher(object):
    def __init__(self, loader, fp16=False, channels_last=False):
        self.loader = loader
        self.iter = iter(loader)
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor(IMAGENET_MEAN).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor(IMAGENET_STD).cuda().view(1, 3, 1, 1)
        self.fp16 = fp16
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        if fp16:
            self.mean = self.mean.half()
            self.std = self.std.half()
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.iter)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        # if record_stream() doesn't work, another option is to make sure device inputs are created
        # on the main stream.
        # self.next_input_gpu = torch.empty_like(self.next_input, device='cuda')
        # self.next_target_gpu = torch.empty_like(self.next_target, device='cuda')
        # Need to make sure the memory allocated for next_* is not still in use by the main stream
        # at the time we start copying to next_*:
        # self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)
            # more code for the alternative if record_stream() doesn't work:
            # copy_ will record the use of the pinned source tensor in this side stream.
            # self.next_input_gpu.copy_(self.next_input, non_blocking=True)
            # self.next_target_gpu.copy_(self.next_target, non_blocking=True)
            # self.next_input = self.next_input_gpu
            # self.next_target = self.next_target_gpu
            if self.fp16:
                self.next_input = self.next_input.half()
            else:
                self.next_input = self.next_input.float()
            self.next_input = self.next_input.sub_(self.mean).div_(self.std)
            self.next_input = self.next_input.contiguous(memory_format=self.memory_format)

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

    def __len__(self):
        return len(self.loader)

    def reset(self):
        self.iter = iter(self.loader)
        self.preload()
