import numpy as np
import torch
from torch.autograd import Variable

from common.training.options import gpu, gpu_id


class Batcher():
    def __init__(self, data, size):
        self.data = data
        self.size = size
        self.pointer = 0

        if isinstance(self.data, np.ndarray):
            self.data.shape[0]

    def __next__(self):
        if self.pointer == splen(self.data):
            self.pointer = 0
            raise StopIteration

        next = min(splen(self.data), self.pointer + self.size)
        to_return = self.data[self.pointer: next]

        start, end = self.pointer, next

        self.pointer = next

        return to_return, splen(to_return), start, end

    def __iter__(self):
        return self


def splen(data):
    try:
        return data.shape[0]
    except:
        return len(data)


def prepare(data):
    """Dense numpy/scipy batch -> FloatTensor on the training device."""
    data = torch.FloatTensor(data.todense() if hasattr(data, "todense") else data)
    if gpu():
        return Variable(data).cuda(gpu_id())
    return Variable(data)


def prepare_with_labels(data, labels):
    data = prepare(data)
    labels = torch.LongTensor(labels)
    if gpu():
        labels = labels.cuda(gpu_id())
    return data, Variable(labels)
