# Visual onset (timestamp) detector used as the temporal condition of FoleyCrafter.
# Backbone follows CondFoleyGen's onset model: an R(2+1)D-18 style video trunk with a
# per-frame binary head that predicts whether a sound event starts at each frame.
import torch
import torch.nn as nn
import torch.nn.functional as F

from .resnet import r2plus1d18KeepTemp


class VideoOnsetNet(nn.Module):
    # Video Onset detection network
    def __init__(self, pretrained):
        super(VideoOnsetNet, self).__init__()
        self.net = r2plus1d18KeepTemp(pretrained=pretrained)
        self.fc = nn.Sequential(nn.Linear(512, 128), nn.ReLU(True), nn.Linear(128, 1))

    def forward(self, inputs, loss=False, evaluate=False):
        # import pdb; pdb.set_trace()
        x = inputs["frames"]
        x = self.net(x)
        x = x.transpose(-1, -2)
        x = self.fc(x)
        x = x.squeeze(-1)

        return x


class BCLoss(nn.Module):
    # binary classification loss
    def __init__(self, args):
        super(BCLoss, self).__init__()

    def forward(self, pred, target):
        # import pdb; pdb.set_trace()
        pred = pred.contiguous().view(-1)
        target = target.contiguous().view(-1)
        pos_weight = (target.shape[0] - target.sum()) / target.sum()
        criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight).to(pred.device)
        loss = criterion(pred, target.float())
        return loss

    def evaluate(self, pred, target):
        # import pdb; pdb.set_trace()
        pred = pred.contiguous().view(-1)
        target = target.contiguous().view(-1)
        pred = torch.sigmoid(pred)
        pred = pred.data.cpu().numpy()
        target = target.data.cpu().numpy()

        pos_index = target.nonzero()[0]
        neg_index = (target == 0).nonzero()[0]
        balance_num = min(pos_index.shape[0], neg_index.shape[0])
        index = torch.cat([torch.from_numpy(pos_index[:balance_num]), torch.from_numpy(neg_index[:balance_num])])
        pred = pred[index.numpy()]
        target = target[index.numpy()]
        res = {}
        for threshold in [0.3, 0.4, 0.5, 0.6, 0.7]:
            pred_bin = (pred > threshold).astype(int)
            acc = (pred_bin == target).mean()
            res[f"acc@{threshold}"] = float(acc)
        return res


def onset_nms(onset, confidence, window=0.05):
    """Suppress onsets closer than `window` seconds, keeping the most confident one."""
    onset_remain = onset.tolist()
    output = []
    sorted_idx = torch.argsort(confidence, descending=True)
    for idx in sorted_idx.tolist():
        cur = onset[idx].item()
        if cur not in onset_remain:
            continue
        output.append(cur)
        onset_remain.remove(cur)
        for o in list(onset_remain):
            if abs(cur - o) < window:
                onset_remain.remove(o)
    return sorted(output)


def detect_onsets(model, frames, fps=15.0, threshold=0.5, nms_window=0.05):
    """frames: 1 x C x T x H x W (already normalised). Returns onset times in seconds."""
    model.eval()
    with torch.no_grad():
        logits = model({"frames": frames})[0]
        prob = torch.sigmoid(logits)
    idx = (prob > threshold).nonzero(as_tuple=False).squeeze(-1)
    if idx.numel() == 0:
        return []
    times = idx.float() / fps
    return onset_nms(times.cpu(), prob[idx].cpu(), window=nms_window)


def onsets_to_condition(onsets, duration, width=1024, height=256, max_duration=10.0):
    """Render onset times as the +1/-1 temporal-condition image consumed by the ControlNet."""
    cond = torch.full((width,), -1.0)
    cols_per_sec = width / max_duration
    for t in onsets:
        if t >= duration:
            continue
        c = int(t * cols_per_sec)
        cond[c : min(width, c + 4)] = 1.0
    cond = F.pad(cond, (0, 0))
    return cond.view(1, 1, 1, width).repeat(1, 1, height, 1)
