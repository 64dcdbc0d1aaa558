import numpy as np
from mmcv.runner import get_dist_info
from mmcv.utils import print_log
import torch
import torch.distributed as dist


def fast_hist(pred, label, n):
    k = (label >= 0) & (label < n)
    bin_count = np.bincount(
        n * label[k].astype(int) + pred[k], minlength=n ** 2)
    return bin_count[:n ** 2].reshape(n, n)


def per_class_iu(hist):
    return np.diag(hist) / (hist.sum(1) + hist.sum(0) - np.diag(hist))


def fast_hist_crop(output, target, unique_label):
    hist = fast_hist(output.flatten(), target.flatten(), np.max(unique_label) + 2)
    hist = hist[unique_label + 1, :]
    hist = hist[:, unique_label + 1]
    return hist


class MeanIoU:

    def __init__(self,
                 class_indices,
                 ignore_label: int,
                 label_str,
                 name
                 # empty_class: int
                 ):
        self.class_indices = class_indices
        self.num_classes = len(class_indices)
        self.ignore_label = ignore_label
        self.label_str = label_str
        self.name = name

    def reset(self) -> None:
        # kept on the GPU so that _after_epoch can all_reduce them directly
        self.total_seen = torch.zeros(self.num_classes).cuda()
        self.total_correct = torch.zeros(self.num_classes).cuda()
        self.total_positive = torch.zeros(self.num_classes).cuda()

    def _after_step(self, outputs, targets):
        outputs = outputs[targets != self.ignore_label]
        targets = targets[targets != self.ignore_label]

        for i, c in enumerate(self.class_indices):
            self.total_seen[i] += torch.sum(targets == c).item()
            self.total_correct[i] += torch.sum((targets == c)
                                               & (outputs == c)).item()
            self.total_positive[i] += torch.sum(outputs == c).item()

    def _after_epoch(self):
        rank, world_size = get_dist_info()
        if world_size > 1:
            dist.all_reduce(self.total_seen)
            dist.all_reduce(self.total_correct)
            dist.all_reduce(self.total_positive)

        ious = []

        for i in range(self.num_classes):
            if self.total_seen[i] == 0:
                ious.append(1)
            else:
                cur_iou = self.total_correct[i] / (self.total_seen[i]
                                                   + self.total_positive[i]
                                                   - self.total_correct[i])
                ious.append(cur_iou.item())

        miou = np.mean(ious)
        print_log(f'Validation per class iou {self.name}:')
        for iou, label_str in zip(ious, self.label_str):
            print_log('%s : %.2f%%' % (label_str, iou * 100))

        return miou * 100


class OccupancyIoU:
    """Geometry-only IoU (occupied vs. free) over the dense 3-D grid, the
    'IoU' column reported next to mIoU in the occupancy tables."""

    def __init__(self, empty_label=0, ignore_label=255, name='occ'):
        self.empty_label = empty_label
        self.ignore_label = ignore_label
        self.name = name
        self.reset()

    def reset(self):
        self.tp = 0
        self.fp = 0
        self.fn = 0

    def _after_step(self, pred, target):
        mask = target != self.ignore_label
        pred_occ = (pred != self.empty_label) & mask
        gt_occ = (target != self.empty_label) & mask
        self.tp += int((pred_occ & gt_occ).sum())
        self.fp += int((pred_occ & ~gt_occ).sum())
        self.fn += int((~pred_occ & gt_occ).sum())

    def _after_epoch(self):
        stats = torch.tensor([self.tp, self.fp, self.fn],
                             dtype=torch.float64, device='cuda')
        rank, world_size = get_dist_info()
        if world_size > 1:
            dist.all_reduce(stats)
        tp, fp, fn = stats.tolist()
        iou = tp / max(tp + fp + fn, 1.0)
        print_log(f'Validation geometry IoU {self.name}: {iou * 100:.2f}%')
        return iou * 100
