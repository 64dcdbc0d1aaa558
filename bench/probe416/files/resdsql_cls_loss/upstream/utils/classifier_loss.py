import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    '''
    Multi-class focal loss. See "Focal Loss for Dense Object Detection" (Lin et al.).
    weight: per-class re-weighting (alpha); gamma: focusing parameter.
    '''
    def __init__(self, weight = None, gamma = 2.0, reduction = 'mean'):
        super(FocalLoss, self).__init__()
        self.weight = weight
        self.gamma = gamma
        self.reduction = reduction

    def forward(self, input_tensor, target_tensor):
        assert input_tensor.shape[0] == target_tensor.shape[0]

        prob = F.softmax(input_tensor, dim = -1)
        log_prob = F.log_softmax(input_tensor, dim = -1)

        loss = F.nll_loss(
            ((1 - prob) ** self.gamma) * log_prob,
            target_tensor,
            weight = self.weight,
            reduction = self.reduction
        )

        return loss


class ClassifierLoss():
    def __init__(self, alpha, gamma):
        weight = torch.FloatTensor([1-alpha, alpha])
        if torch.cuda.is_available():
            weight = weight.cuda()

        self.focal_loss = FocalLoss(
            weight = weight,
            gamma = gamma,
            reduction = 'mean'
        )

    def compute_batch_loss(self, batch_logits, batch_labels, batch_size):
        loss = 0
        for logits, labels in zip(batch_logits, batch_labels):
            loss += self.focal_loss(logits, labels)

        return loss/batch_size

    def compute_loss(
        self,
        batch_table_name_cls_logits,
        batch_table_labels,
        batch_column_info_cls_logits,
        batch_column_labels
    ):
        batch_size = len(batch_table_labels)

        table_loss = self.compute_batch_loss(batch_table_name_cls_logits, batch_table_labels, batch_size)
        column_loss = self.compute_batch_loss(batch_column_info_cls_logits, batch_column_labels, batch_size)

        return table_loss + column_loss
