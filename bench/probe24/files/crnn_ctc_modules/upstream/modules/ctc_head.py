"""BiLSTM sequence model + CTC head and a CTC loss that picks the fastest backend.

Backends, in order of preference:
  * warp-ctc (Baidu) when the extension is importable and the tensors are on the GPU
  * cuDNN CTC (needs int32 targets on the host, blank=0, all input lengths == T)
  * the native ATen implementation (any device)
"""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)

try:
    import warpctc_pytorch as warp_ctc
    HAS_WARPCTC = True
except ImportError:  # CPU-only installs, Windows, ...
    warp_ctc = None
    HAS_WARPCTC = False


class BidirectionalLSTM(nn.Module):

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.rnn = nn.LSTM(input_size, hidden_size, bidirectional=True, batch_first=True)
        self.linear = nn.Linear(hidden_size * 2, output_size)

    def forward(self, input):
        """
        input : visual feature [batch_size x T x input_size]
        output : contextual feature [batch_size x T x output_size]
        """
        self.rnn.flatten_parameters()
        recurrent, _ = self.rnn(input)  # batch_size x T x input_size -> batch_size x T x (2*hidden_size)
        output = self.linear(recurrent)  # batch_size x T x output_size
        return output


class CTCHead(nn.Module):
    """Two stacked BiLSTMs followed by a linear classifier over the charset (+ blank)."""

    def __init__(self, in_channels, hidden_size, num_classes):
        super().__init__()
        self.sequence = nn.Sequential(
            BidirectionalLSTM(in_channels, hidden_size, hidden_size),
            BidirectionalLSTM(hidden_size, hidden_size, hidden_size))
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, feats):
        # feats: [B, C, 1, W] from the CNN -> [B, W, C]
        feats = feats.squeeze(2).permute(0, 2, 1).contiguous()
        seq = self.sequence(feats)
        return self.fc(seq)


class CTCLossAuto(nn.Module):
    """`nn.CTCLoss(zero_infinity=True)` with an optional warp-ctc fast path."""

    def __init__(self, blank=0, use_warpctc=True, reduction='mean'):
        super().__init__()
        self.blank = blank
        self.reduction = reduction
        self.use_warpctc = use_warpctc and HAS_WARPCTC and blank == 0
        self.native = nn.CTCLoss(blank=blank, reduction=reduction, zero_infinity=True)
        if self.use_warpctc:
            self.warp = warp_ctc.CTCLoss(size_average=False, length_average=False)
            logger.info('using warp-ctc for the CTC loss')

    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(self, logits, targets, input_lengths, target_lengths):
        """logits: [B, T, C] raw scores; targets: 1-D concatenated labels."""
        if self.use_warpctc and logits.is_cuda:
            acts = logits.permute(1, 0, 2).contiguous()  # T x B x C, un-normalised
            loss = self.warp(acts, targets.int().cpu(), input_lengths.int().cpu(),
                             target_lengths.int().cpu())
            if self.reduction == 'mean':
                loss = loss / logits.size(0)
            return loss.to(logits.device)

        log_probs = F.log_softmax(logits, dim=2).permute(1, 0, 2)  # T x B x C
        if logits.is_cuda and torch.backends.cudnn.enabled:
            # cuDNN path: int32 lengths/targets on the CPU
            targets = targets.int().cpu()
            input_lengths = input_lengths.int().cpu()
            target_lengths = target_lengths.int().cpu()
        return self.native(log_probs, targets, input_lengths, target_lengths)


def greedy_decode(logits, blank=0):
    """Collapse repeats and drop blanks; returns python lists of label ids."""
    best = logits.argmax(dim=2).cpu().tolist()
    results = []
    for seq in best:
        out, prev = [], blank
        for idx in seq:
            if idx != prev and idx != blank:
                out.append(idx)
            prev = idx
        results.append(out)
    return results


def ctc_confidence(logits, decoded):
    """Mean of the max softmax probability over non-blank frames."""
    probs = logits.softmax(dim=2).max(dim=2).values
    conf = []
    for p, d in zip(probs, decoded):
        conf.append(float(p[: max(len(d), 1)].mean()))
    return conf


if __name__ == '__main__':
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    head = CTCHead(512, 256, 37).to(dev)
    crit = CTCLossAuto()
    x = torch.randn(4, 512, 1, 26, device=dev)
    y = torch.randint(1, 37, (4 * 5,), device=dev)
    logits = head(x)
    loss = crit(logits, y, torch.full((4,), 26, dtype=torch.long),
                torch.full((4,), 5, dtype=torch.long))
    loss.backward()
    print('loss', loss.item(), 'decoded', greedy_decode(logits)[:1])
