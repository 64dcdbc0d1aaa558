import torch
import torch.nn as nn
import torch.nn.functional as F


class cls_pos(nn.Module):
    """Focal-style center classification loss from the CSP paper.
    pos_label channels: 0 - gaussian, 1 - mask (ignore regions zeroed), 2 - center."""
    def __init__(self):
        super(cls_pos, self).__init__()
        self.bce = nn.BCELoss(reduction='none')

    def forward(self, pos_pred, pos_label):  # 0-gauss 1-mask 2-center
        log_loss = self.bce(pos_pred[:, 0, :, :], pos_label[:, 2, :, :])

        positives = pos_label[:, 2, :, :]
        negatives = pos_label[:, 1, :, :] - pos_label[:, 2, :, :]

        fore_weight = positives * (1.0 - pos_pred[:, 0, :, :]) ** 2
        back_weight = negatives * ((1.0 - pos_label[:, 0, :, :]) ** 4.0) * (pos_pred[:, 0, :, :] ** 2.0)

        focal_weight = fore_weight + back_weight
        assigned_box = torch.sum(pos_label[:, 2, :, :])

        # keras original: K.maximum(1.0, assigned_boxes)
        one = torch.cuda.FloatTensor([1.0])
        cls_loss = 0.01 * torch.sum(focal_weight * log_loss) / torch.max(one, assigned_box)

        return cls_loss


class reg_pos(nn.Module):
    def __init__(self):
        super(reg_pos, self).__init__()
        self.smoothl1 = nn.SmoothL1Loss(reduction='none')

    def forward(self, h_pred, h_label):
        l1_loss = h_label[:, 1, :, :] * self.smoothl1(h_pred[:, 0, :, :] / (h_label[:, 0, :, :] + 1e-10),
                                                      h_label[:, 0, :, :] / (h_label[:, 0, :, :] + 1e-10))
        reg_loss = torch.sum(l1_loss) / max(1.0, torch.sum(h_label[:, 1, :, :]))
        return reg_loss


class offset_pos(nn.Module):
    def __init__(self):
        super(offset_pos, self).__init__()
        self.smoothl1 = nn.SmoothL1Loss(reduction='none')

    def forward(self, offset_pred, offset_label):
        l1_loss = offset_label[:, 2, :, :].unsqueeze(dim=1) * self.smoothl1(offset_pred, offset_label[:, :2, :, :])
        off_loss = torch.sum(l1_loss) / max(1.0, torch.sum(offset_label[:, 2, :, :]))
        return off_loss


class reg_pos_wh(nn.Module):
    """Height + width regression used by the Caltech / WiderFace variants
    (config.wh = True). Same normalisation as reg_pos, two channels."""
    def __init__(self):
        super(reg_pos_wh, self).__init__()
        self.smoothl1 = nn.SmoothL1Loss(reduction='none')

    def forward(self, wh_pred, wh_label):
        mask = wh_label[:, 2, :, :]
        h_loss = self.smoothl1(wh_pred[:, 0, :, :] / (wh_label[:, 0, :, :] + 1e-10),
                               wh_label[:, 0, :, :] / (wh_label[:, 0, :, :] + 1e-10))
        w_loss = self.smoothl1(wh_pred[:, 1, :, :] / (wh_label[:, 1, :, :] + 1e-10),
                               wh_label[:, 1, :, :] / (wh_label[:, 1, :, :] + 1e-10))
        l1_loss = mask * (h_loss + w_loss)
        num_pos = torch.sum(mask)
        return torch.sum(l1_loss) / torch.max(torch.cuda.FloatTensor([1.0]), num_pos)


class CSPLoss(nn.Module):
    """Convenience wrapper so trainval scripts can do `loss, parts = criterion(out, labels)`."""
    def __init__(self, cls_weight=1.0, reg_weight=1.0, off_weight=1.0, wh=False):
        super(CSPLoss, self).__init__()
        self.cls = cls_pos()
        self.reg = reg_pos_wh() if wh else reg_pos()
        self.off = offset_pos()
        self.cls_weight = cls_weight
        self.reg_weight = reg_weight
        self.off_weight = off_weight

    def forward(self, outputs, labels):
        cls_loss = self.cls(outputs[0], labels[0]) * self.cls_weight
        reg_loss = self.reg(outputs[1], labels[1]) * self.reg_weight
        if len(outputs) > 2:
            off_loss = self.off(outputs[2], labels[2]) * self.off_weight
        else:
            off_loss = torch.zeros_like(cls_loss)
        total = cls_loss + reg_loss + off_loss
        return total, dict(cls=cls_loss.item(), reg=reg_loss.item(), off=off_loss.item())
