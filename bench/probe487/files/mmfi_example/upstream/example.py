import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import yaml

from mmfi_lib.mmfi import make_dataset, make_dataloader
from mmfi_lib.evaluate import calulate_error


class WiFiPoseBaseline(nn.Module):
    """CSI amplitude (3 antennas x 114 subcarriers x 10 packets) -> 17 x 3 keypoints."""

    def __init__(self, hidden=512, dropout=0.3, num_joints=17):
        super().__init__()
        self.num_joints = num_joints
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=(5, 3), padding=(2, 1)),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.MaxPool2d((2, 1)),
            nn.Conv2d(32, 64, kernel_size=(5, 3), padding=(2, 1)),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((8, 4)),
        )
        self.regressor = nn.Sequential(
            nn.Flatten(),
            nn.Linear(64 * 8 * 4, hidden),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(hidden, num_joints * 3),
        )

    def forward(self, x):
        # x: (B, 3, 114, 10)
        x = torch.nan_to_num(x)
        return self.regressor(self.encoder(x)).view(-1, self.num_joints, 3)


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    losses, preds, gts = [], [], []
    crit = nn.MSELoss()
    for batch in loader:
        x = batch['input_wifi-csi'].to(device)
        y = batch['output'].to(device)
        with torch.set_grad_enabled(training):
            out = model(x)
            loss = crit(out, y)
        if training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
        if not training:
            preds.append(out.detach().cpu().numpy())
            gts.append(y.cpu().numpy())
    if training:
        return float(np.mean(losses)), None
    mpjpe, pampjpe = calulate_error(np.concatenate(preds), np.concatenate(gts))
    return float(np.mean(losses)), (mpjpe, pampjpe)


def main():
    dataset_root = sys.argv[1]
    config_file = sys.argv[2]
    with open(config_file, 'r') as fd:
        config = yaml.load(fd, Loader=yaml.FullLoader)

    train_dataset, val_dataset = make_dataset(dataset_root, config)

    rng_generator = torch.manual_seed(config['init_rand_seed'])
    train_loader = make_dataloader(train_dataset, is_training=True, generator=rng_generator, **config['train_loader'])
    val_loader = make_dataloader(val_dataset, is_training=False, generator=rng_generator, **config['validation_loader'])

    device = torch.device(config.get('device', 'cuda'))
    model = WiFiPoseBaseline(**config['model']).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config['optim']['lr'])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config['optim']['epochs'])

    os.makedirs(config['output_dir'], exist_ok=True)
    best = float('inf')
    for epoch in range(config['optim']['epochs']):
        t0 = time.time()
        train_loss, _ = run_epoch(model, train_loader, device, optimizer)
        val_loss, (mpjpe, pampjpe) = run_epoch(model, val_loader, device)
        scheduler.step()
        print('epoch %02d | train %.4f | val %.4f | MPJPE %.1f mm | PA-MPJPE %.1f mm | %.0fs' % (
            epoch, train_loss, val_loss, mpjpe * 1000, pampjpe * 1000, time.time() - t0))
        if mpjpe < best:
            best = mpjpe
            torch.save(model.state_dict(), os.path.join(config['output_dir'], 'best.pth'))
    print('best MPJPE: %.1f mm' % (best * 1000))


if __name__ == '__main__':
    main()
