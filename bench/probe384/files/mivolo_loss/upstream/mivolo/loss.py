import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightedMSE(nn.Module):
    """
    Age regression loss (MSE on normalized age) + optional gender cross-entropy.

    Ages are normalized to [-1, 1] around the dataset mean; rare age bins get a larger weight
    so that the model does not collapse to the mean age. The per-bin weights are kept in a
    registered buffer so that they move together with the module (``.cuda()`` / ``.to()``).
    """

    def __init__(self, with_gender: bool = True, num_bins: int = 100, gender_weight: float = 1.0):
        super().__init__()
        self.with_gender = with_gender
        self.num_bins = num_bins
        self.gender_weight = gender_weight
        self.register_buffer("bin_weights", torch.ones(num_bins, dtype=torch.float32))

    @torch.no_grad()
    def set_age_distribution(self, hist: torch.Tensor, smoothing: float = 1.0):
        hist = hist.float() + smoothing
        weights = hist.sum() / (hist * hist.numel())
        self.bin_weights.copy_(weights / weights.mean())

    def forward(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if self.with_gender:
            age_pred = output[:, 2]
            age_target = target[:, 0]
            gender_target = target[:, 1].long()
        else:
            age_pred = output.squeeze(-1)
            age_target = target[:, 0] if target.dim() > 1 else target
            gender_target = None

        bins = ((age_target + 1.0) * 0.5 * (self.num_bins - 1)).round().long().clamp(0, self.num_bins - 1)
        w = self.bin_weights[bins]
        loss = (w * (age_pred - age_target) ** 2).mean()

        if gender_target is not None:
            valid = gender_target >= 0
            if valid.any():
                loss = loss + self.gender_weight * F.cross_entropy(output[valid, :2], gender_target[valid])
        return loss


def cumulative_score_and_mae(output, target, min_age, max_age, avg_age=None):
    if avg_age is None:
        avg_age = (max_age + min_age) / 2.0
    scale = (max_age - min_age) / 2.0
    if output.shape[1] == 3:
        age_pred = output[:, 2] * scale + avg_age
        gender_pred = output[:, :2].argmax(dim=-1)
        gender_target = target[:, 1].long()
        valid = gender_target >= 0
        if valid.any():
            gender_acc = (gender_pred[valid] == gender_target[valid]).float().mean()
        else:
            gender_acc = torch.zeros((), device=output.device)
    else:
        age_pred = output[:, 0] * scale + avg_age
        gender_acc = torch.zeros((), device=output.device)
    age_target = target[:, 0] * scale + avg_age
    mae = (age_pred - age_target).abs().mean()
    return mae, gender_acc
