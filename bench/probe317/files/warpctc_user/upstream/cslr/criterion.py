"""Sequence losses for the CNN-BLSTM CSLR baseline.

Historically the model was trained with Baidu's warp-ctc (GPU kernels, ~2x faster than the
first cuDNN CTC in PyTorch 1.0).  `--ctc-impl builtin` switches to torch.nn.CTCLoss; the
numbers in the paper were produced with warp-ctc.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from warpctc_pytorch import CTCLoss as WarpCTCLoss
except ImportError:
    WarpCTCLoss = None


class SeqCTC(nn.Module):
    def __init__(self, blank=0, impl='warp', size_average=True, reduction='mean'):
        super().__init__()
        self.blank = blank
        self.impl = impl
        if impl == 'warp':
            assert WarpCTCLoss is not None, 'warpctc_pytorch is not installed (see third_party/warp-ctc)'
            # warp-ctc takes raw activations (it applies softmax internally)
            self.ctc = WarpCTCLoss(blank=blank, size_average=size_average, length_average=False)
        else:
            self.ctc = nn.CTCLoss(blank=blank, reduction=reduction, zero_infinity=True)

    def forward(self, logits, targets, input_lengths, target_lengths):
        """
        logits:         T x B x C (un-normalised)
        targets:        concatenated 1-D label tensor (sum(target_lengths),)
        input_lengths:  B
        target_lengths: B
        """
        if self.impl == 'warp':
            # warp-ctc: IntTensors on the CPU for labels/lengths, activations on the GPU
            loss = self.ctc(logits, targets.int().cpu(), input_lengths.int().cpu(),
                            target_lengths.int().cpu())
            return loss.to(logits.device)
        log_probs = F.log_softmax(logits.float(), dim=-1)
        return self.ctc(log_probs, targets, input_lengths, target_lengths)


class SeqKD(nn.Module):
    """
    NLL loss with label smoothing / knowledge distillation between the visual and the
    sequential classifier.
    """

    def __init__(self, T=1):
        super(SeqKD, self).__init__()
        self.kdloss = nn.KLDivLoss(reduction='batchmean')
        self.T = T

    def forward(self, prediction_logits, ref_logits, use_blank=True):
        start_idx = 0 if use_blank else 1
        prediction_logits = F.log_softmax(prediction_logits[:, :, start_idx:] / self.T, dim=-1) \
            .view(-1, ref_logits.shape[2] - start_idx)
        ref_probs = F.softmax(ref_logits[:, :, start_idx:] / self.T, dim=-1) \
            .view(-1, ref_logits.shape[2] - start_idx)
        loss = self.kdloss(prediction_logits, ref_probs) * self.T * self.T
        return loss


def build_criterion(args):
    impl = getattr(args, 'ctc_impl', 'warp')
    if impl == 'warp' and WarpCTCLoss is None:
        print('[criterion] warp-ctc not available, falling back to torch.nn.CTCLoss')
        impl = 'builtin'
    return {
        'ctc': SeqCTC(blank=0, impl=impl),
        'kd': SeqKD(T=8),
    }
