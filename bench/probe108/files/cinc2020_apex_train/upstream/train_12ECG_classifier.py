#!/usr/bin/env python
"""PhysioNet/CinC Challenge 2020 entry: SE-ResNet34 on 12-lead ECG, 27 scored SNOMED classes.

Called by the challenge harness as ``train_12ECG_classifier(input_directory, output_directory)``.
Uses NVIDIA apex (amp O1 + FusedAdam) when it is installed with its CUDA extensions,
otherwise falls back to plain fp32 training with torch.optim.Adam.
"""
import os
import glob
import random
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.io import loadmat
from scipy.signal import resample
from torch.utils.data import Dataset, DataLoader

try:
    from apex import amp
    from apex.optimizers import FusedAdam
    import amp_C  # noqa: F401  -- make sure apex was built with --cuda_ext --cpp_ext
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False

from get_12ECG_features import get_classes_from_header, load_weights_csv
from evaluate_12ECG_score import compute_challenge_metric

SEED = 2020
FS = 500
WINDOW = 15 * FS  # 15 s crops
SCORED_CSV = "dx_mapping_scored.csv"
EQUIVALENT = [["713427006", "59118001"], ["284470004", "63593006"], ["427172004", "17338001"]]


def seed_everything(seed=SEED):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True


# ----------------------------------------------------------------------------- model
class SEBlock(nn.Module):
    def __init__(self, ch, r=16):
        super().__init__()
        self.fc1 = nn.Linear(ch, ch // r)
        self.fc2 = nn.Linear(ch // r, ch)

    def forward(self, x):
        w = x.mean(-1)
        w = torch.sigmoid(self.fc2(F.relu(self.fc1(w))))
        return x * w.unsqueeze(-1)


class BasicBlock1d(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv1d(inplanes, planes, 7, stride=stride, padding=3, bias=False)
        self.bn1 = nn.BatchNorm1d(planes)
        self.conv2 = nn.Conv1d(planes, planes, 7, padding=3, bias=False)
        self.bn2 = nn.BatchNorm1d(planes)
        self.se = SEBlock(planes)
        self.downsample = downsample
        self.dropout = nn.Dropout(0.2)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.dropout(out)
        out = self.se(self.bn2(self.conv2(out)))
        return F.relu(out + identity)


class SEResNet34(nn.Module):
    def __init__(self, num_classes=27, in_ch=12, layers=(3, 4, 6, 3), n_meta=2):
        super().__init__()
        self.inplanes = 64
        self.stem = nn.Sequential(
            nn.Conv1d(in_ch, 64, 15, stride=2, padding=7, bias=False),
            nn.BatchNorm1d(64), nn.ReLU(inplace=True), nn.MaxPool1d(3, stride=2, padding=1),
        )
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.meta = nn.Linear(n_meta, 16)  # age, sex
        self.fc = nn.Linear(512 * 2 + 16, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv1d(self.inplanes, planes, 1, stride=stride, bias=False),
                                       nn.BatchNorm1d(planes))
        layers = [BasicBlock1d(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock1d(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x, meta):
        x = self.layer4(self.layer3(self.layer2(self.layer1(self.stem(x)))))
        x = torch.cat([F.adaptive_avg_pool1d(x, 1).flatten(1), F.adaptive_max_pool1d(x, 1).flatten(1)], 1)
        return self.fc(torch.cat([x, F.relu(self.meta(meta))], 1))


# ----------------------------------------------------------------------------- data
def load_recording(mat_file, hea_file):
    x = loadmat(mat_file)["val"].astype(np.float32)
    with open(hea_file) as f:
        header = f.readlines()
    fs = int(header[0].split()[2])
    age, sex = 0.5, 0.5
    for line in header:
        if line.startswith("#Age"):
            try:
                age = float(line.split(": ")[1]) / 100.0
            except ValueError:
                pass
        elif line.startswith("#Sex"):
            sex = 1.0 if line.split(": ")[1].strip().lower().startswith("f") else 0.0
    if fs != FS:
        x = resample(x, int(x.shape[1] * FS / fs), axis=1).astype(np.float32)
    return x / 1000.0, np.array([age, sex], dtype=np.float32), header


class ChallengeDataset(Dataset):
    def __init__(self, records, labels, train=True):
        self.records, self.labels, self.train = records, labels, train

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        x, meta, _ = load_recording(*self.records[i])
        if x.shape[1] >= WINDOW:
            start = np.random.randint(0, x.shape[1] - WINDOW + 1) if self.train else 0
            x = x[:, start:start + WINDOW]
        else:
            x = np.pad(x, ((0, 0), (0, WINDOW - x.shape[1])))
        if self.train:
            x = x * np.random.uniform(0.8, 1.2) + np.random.normal(0, 0.01, x.shape).astype(np.float32)
        return torch.from_numpy(x), torch.from_numpy(meta), torch.from_numpy(self.labels[i])


def find_records(input_directory, scored_classes):
    records, labels = [], []
    index = {c: k for k, c in enumerate(scored_classes)}
    for hea in sorted(glob.glob(os.path.join(input_directory, "*.hea"))):
        mat = hea[:-4] + ".mat"
        y = np.zeros(len(scored_classes), dtype=np.float32)
        for dx in get_classes_from_header(hea):
            for a, b in EQUIVALENT:
                if dx == b:
                    dx = a
            if dx in index:
                y[index[dx]] = 1.0
        if y.sum() > 0:
            records.append((mat, hea))
            labels.append(y)
    return records, np.stack(labels)


# ----------------------------------------------------------------------------- training
def train_12ECG_classifier(input_directory, output_directory):
    seed_everything()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    scored_classes, weights = load_weights_csv("weights.csv")
    records, labels = find_records(input_directory, scored_classes)
    print(f"Found {len(records)} scored recordings, {len(scored_classes)} classes, apex={APEX_AVAILABLE}")

    n_val = max(1, len(records) // 10)
    perm = np.random.permutation(len(records))
    val_idx, tr_idx = perm[:n_val], perm[n_val:]
    train_loader = DataLoader(ChallengeDataset([records[i] for i in tr_idx], labels[tr_idx]),
                              batch_size=64, shuffle=True, num_workers=6, drop_last=True)
    val_loader = DataLoader(ChallengeDataset([records[i] for i in val_idx], labels[val_idx], train=False),
                            batch_size=64, num_workers=6)

    model = SEResNet34(num_classes=len(scored_classes)).to(device)
    if APEX_AVAILABLE:
        optimizer = FusedAdam(model.parameters(), lr=1e-3, weight_decay=1e-5)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20, 30], gamma=0.1)
    pos_weight = torch.tensor(np.clip((len(labels) - labels.sum(0)) / (labels.sum(0) + 1), 1, 50),
                              dtype=torch.float32, device=device)

    best_score = -1.0
    for epoch in range(35):
        model.train()
        for x, meta, y in train_loader:
            x, meta, y = x.to(device), meta.to(device), y.to(device)
            loss = F.binary_cross_entropy_with_logits(model(x, meta), y, pos_weight=pos_weight)
            optimizer.zero_grad()
            if APEX_AVAILABLE:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
        scheduler.step()

        model.eval()
        probs, trues = [], []
        with torch.no_grad():
            for x, meta, y in val_loader:
                probs.append(torch.sigmoid(model(x.to(device), meta.to(device))).cpu().numpy())
                trues.append(y.numpy())
        probs, trues = np.concatenate(probs), np.concatenate(trues)
        score = compute_challenge_metric(weights, trues.astype(bool), probs > 0.5, scored_classes, "426783006")
        print(f"epoch {epoch}: challenge metric {score:.4f}")
        if score > best_score:
            best_score = score
            os.makedirs(output_directory, exist_ok=True)
            torch.save({"model": model.state_dict(), "classes": scored_classes, "threshold": 0.5},
                       os.path.join(output_directory, "model.pth"))


def load_12ECG_model(input_directory):
    ckpt = torch.load(os.path.join(input_directory, "model.pth"), map_location="cuda:0")
    model = SEResNet34(num_classes=len(ckpt["classes"]))
    model.load_state_dict(ckpt["model"])
    model.eval()
    return {"model": model.cuda(), "classes": ckpt["classes"], "threshold": ckpt["threshold"]}


if __name__ == "__main__":
    import sys
    train_12ECG_classifier(sys.argv[1], sys.argv[2])
