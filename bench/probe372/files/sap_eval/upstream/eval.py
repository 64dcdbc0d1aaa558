"""Visualise slot decompositions of a trained Slot Attention auto-encoder.

Converted from eval.ipynb so it can run headless on the GPU box.
"""
import argparse

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import torch

from dataset import CLEVR, CLEVRWithMasks
from model import SlotAttentionAutoEncoder

parser = argparse.ArgumentParser()
parser.add_argument('--ckpt', default='./tmp/model10.ckpt', type=str)
parser.add_argument('--num_slots', default=7, type=int)
parser.add_argument('--num_iterations', default=3, type=int)
parser.add_argument('--hid_dim', default=64, type=int)
parser.add_argument('--index', default=2, type=int, help='which test image to show')
parser.add_argument('--out', default='slots.png', type=str)
parser.add_argument('--ari', action='store_true', help='also report FG-ARI on CLEVR-with-masks')
parser.add_argument('--mask_root', default='/home/sample/clevr_with_masks', type=str)
opt = parser.parse_args()

resolution = (128, 128)
device = torch.device("cuda:0")

model = SlotAttentionAutoEncoder(resolution, opt.num_slots, opt.num_iterations, opt.hid_dim)
model.load_state_dict(torch.load(opt.ckpt)['model_state_dict'])
model = model.to(device)
model.eval()


def renormalize(x):
    return x / 2. + 0.5  # [-1, 1] to [0, 1]


def fg_ari(true_mask, pred_mask):
    """Foreground adjusted rand index over a batch of (B, N) integer masks (bg id 0)."""
    scores = []
    for t, p in zip(true_mask, pred_mask):
        fg = t > 0
        t, p = t[fg], p[fg]
        n = t.numel()
        if n < 2:
            continue
        t_oh = torch.nn.functional.one_hot(t).float()
        p_oh = torch.nn.functional.one_hot(p, num_classes=opt.num_slots).float()
        nij = t_oh.T @ p_oh
        a, b = nij.sum(1), nij.sum(0)
        rindex = (nij * (nij - 1)).sum()
        aindex = (a * (a - 1)).sum()
        bindex = (b * (b - 1)).sum()
        expected = aindex * bindex / (n * (n - 1))
        maximum = (aindex + bindex) / 2
        scores.append(((rindex - expected) / (maximum - expected + 1e-8)).item())
    return float(np.mean(scores))


with torch.no_grad():
    test_set = CLEVR('test')
    image = test_set[opt.index]['image']
    image = image.unsqueeze(0).to(device)
    recon_combined, recons, masks, slots = model(image)

    fig, ax = plt.subplots(1, opt.num_slots + 2, figsize=(15, 2))
    image = image.squeeze(0)
    recon_combined = recon_combined.squeeze(0)
    recons = recons.squeeze(0)
    masks = masks.squeeze(0)
    image = image.permute(1, 2, 0).cpu().numpy()
    recon_combined = recon_combined.permute(1, 2, 0)
    recon_combined = recon_combined.cpu().detach().numpy()
    recons = recons.cpu().detach().numpy()
    masks = masks.cpu().detach().numpy()
    ax[0].imshow(image)
    ax[0].set_title('Image')
    ax[1].imshow(recon_combined)
    ax[1].set_title('Recon.')
    for i in range(opt.num_slots):
        picture = recons[i] * masks[i] + (1 - masks[i])
        ax[i + 2].imshow(picture)
        ax[i + 2].set_title('Slot %s' % str(i + 1))
    for i in range(len(ax)):
        ax[i].grid(False)
        ax[i].axis('off')
    fig.savefig(opt.out, bbox_inches='tight')

    if opt.ari:
        val_set = CLEVRWithMasks(opt.mask_root, split='val')
        loader = torch.utils.data.DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True)
        aris = []
        for batch in loader:
            img = batch['image'].to(device, non_blocking=True)
            _, _, pred_masks, _ = model(img)
            pred = pred_masks.squeeze(-1).argmax(1).flatten(1).cpu()
            true = batch['masks'].argmax(1).flatten(1)
            aris.append(fg_ari(true, pred))
        print('FG-ARI: {:.4f}'.format(np.mean(aris)))
