import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torchvision.ops import box_iou, generalized_box_iou


class HungarianMatcher(nn.Module):
    def __init__(self, cost_class=1.0, cost_bbox=5.0, cost_giou=2.0):
        super().__init__()
        self.cost_class = cost_class
        self.cost_bbox = cost_bbox
        self.cost_giou = cost_giou

    @torch.no_grad()
    def forward(self, logits, pred_boxes, tgt_boxes, tgt_labels):
        indices = []
        for b in range(logits.shape[0]):
            if len(tgt_labels[b]) == 0:
                empty = torch.empty(0, dtype=torch.int64)
                indices.append((empty, empty))
                continue
            prob = logits[b].sigmoid()
            cost_class = -prob[:, tgt_labels[b]]
            cost_bbox = torch.cdist(pred_boxes[b], tgt_boxes[b], p=1)
            cost_giou = -generalized_box_iou(pred_boxes[b], tgt_boxes[b])
            C = self.cost_bbox * cost_bbox + self.cost_class * cost_class + self.cost_giou * cost_giou
            # scipy runs on host; .cpu() is intentional
            i, j = linear_sum_assignment(C.float().cpu().numpy())
            indices.append((torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)))
        return indices


class PushPullLoss(nn.Module):
    """Sigmoid-focal classification against the text queries plus L1/GIoU box terms.

    Unmatched predictions are pushed towards the background (all-zero) target.
    """

    def __init__(self, n_classes, scales=None, alpha=0.25, gamma=2.0):
        super().__init__()
        self.n_classes = n_classes
        self.matcher = HungarianMatcher()
        self.alpha = alpha
        self.gamma = gamma
        self.register_buffer("scales", scales if scales is not None else torch.ones(n_classes))

    def focal(self, logits, target):
        prob = logits.sigmoid()
        ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        p_t = prob * target + (1 - prob) * (1 - target)
        loss = ce * ((1 - p_t) ** self.gamma)
        alpha_t = self.alpha * target + (1 - self.alpha) * (1 - target)
        return alpha_t * loss

    def forward(self, logits, pred_boxes, tgt_boxes, tgt_labels):
        indices = self.matcher(logits, pred_boxes, tgt_boxes, tgt_labels)
        bs, nq, nc = logits.shape
        target = torch.zeros_like(logits)
        fg_mask = torch.zeros((bs, nq), dtype=torch.bool, device=logits.device)
        l1, giou, n_boxes = logits.new_zeros(()), logits.new_zeros(()), 0
        for b, (src, tgt) in enumerate(indices):
            if len(src) == 0:
                continue
            src = src.to(logits.device)
            tgt = tgt.to(logits.device)
            target[b, src, tgt_labels[b][tgt]] = 1.0
            fg_mask[b, src] = True
            l1 = l1 + F.l1_loss(pred_boxes[b, src], tgt_boxes[b][tgt], reduction="sum")
            giou = giou + (1 - torch.diag(generalized_box_iou(pred_boxes[b, src], tgt_boxes[b][tgt]))).sum()
            n_boxes += len(src)
        n_boxes = max(n_boxes, 1)

        cls = self.focal(logits, target) * self.scales[None, None, :]
        loss_ce = cls[fg_mask].sum() / n_boxes
        loss_bg = cls[~fg_mask].sum() / max((~fg_mask).sum().item(), 1)
        return {
            "loss_ce": loss_ce,
            "loss_bg": loss_bg,
            "loss_bbox": l1 / n_boxes,
            "loss_giou": giou / n_boxes,
        }
