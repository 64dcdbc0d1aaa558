"""
Asynchronous host-to-device prefetching for ImageNet / event-frame training of SNNs.

Based on the data_prefetcher of NVIDIA's apex ImageNet example: the next batch is copied to the GPU on a side
stream and normalised there while the current batch is being processed. Use together with ``fast_collate`` so
that images stay uint8 until they reach the GPU.
"""
import numpy as np
import torch


def fast_collate(batch, memory_format=torch.contiguous_format):
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


class data_prefetcher():
    def __init__(self, loader, T: int = 0, fp16: bool = False):
        self.loader = iter(loader)
        self.T = T
        self.fp16 = fp16
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).cuda().view(1, 3, 1, 1)
        if fp16:
            self.mean = self.mean.half()
            self.std = self.std.half()
        # With Amp, it isn't necessary to manually convert data to half.
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
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
            if self.T > 0:
                # static images are repeated T times for the direct-input encoding: [N, C, H, W] -> [T, N, C, H, W]
                self.next_input = self.next_input.unsqueeze(0).repeat(self.T, 1, 1, 1, 1)

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


class event_prefetcher():
    """Same idea for event-frame datasets (DVS128 Gesture, CIFAR10-DVS): frames are float already, [N, T, C, H, W]."""

    def __init__(self, loader, device=None):
        self.loader = iter(loader)
        self.device = device if device is not None else torch.device('cuda', torch.cuda.current_device())
        self.stream = torch.cuda.Stream(device=self.device)
        self.preload()

    def preload(self):
        try:
            frames, label = next(self.loader)
        except StopIteration:
            self.next_frames = None
            self.next_label = None
            return
        with torch.cuda.stream(self.stream):  # copy on the side stream
            # [N, T, C, H, W] -> [T, N, C, H, W] happens on the device, after the copy
            self.next_frames = frames.to(self.device, non_blocking=True).float().transpose(0, 1).contiguous()
            self.next_label = label.to(self.device, non_blocking=True)

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        frames, label = self.next_frames, self.next_label
        if frames is None:
            raise StopIteration
        frames.record_stream(torch.cuda.current_stream(self.device))
        label.record_stream(torch.cuda.current_stream(self.device))
        self.preload()
        return frames, label
