"""Overlap host-to-device copies with compute.

The DataLoader hands us pinned CPU tensors; we issue the copy for batch i+1 on a
side stream while the default stream is still busy with batch i.  Adapted from
NVIDIA's apex ImageNet example (``data_prefetcher``).
"""
import torch


class DataPrefetcher:
    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            (self.next_view1, self.next_view2), self.next_target = next(self.loader)
        except StopIteration:
            self.next_view1 = None
            self.next_view2 = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_view1 = self.next_view1.cuda(non_blocking=True)
            self.next_view2 = self.next_view2.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        view1, view2, target = self.next_view1, self.next_view2, self.next_target
        # make sure the caching allocator does not hand these buffers to the side
        # stream again before the default stream is done with them
        if view1 is not None:
            view1.record_stream(torch.cuda.current_stream())
            view2.record_stream(torch.cuda.current_stream())
            target.record_stream(torch.cuda.current_stream())
        self.preload()
        return (view1, view2), target

    def __iter__(self):
        return self

    def __next__(self):
        (view1, view2), target = self.next()
        if view1 is None:
            raise StopIteration
        return (view1, view2), target
