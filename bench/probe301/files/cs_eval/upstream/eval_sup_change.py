"""Evaluate a ChangeStar checkpoint on LEVIR-CD / WHU-CD / S2Looking test splits.

    CUDA_VISIBLE_DEVICES=0 python eval_sup_change.py --config_path=levircd.r50_farseg_changestar_bisup \
        --model_dir=./log/bisup-LEVIRCD/r50 --ckpt_path=./log/bisup-LEVIRCD/r50/model-40000.pth --tta
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from core.config import import_config
from core.logger import get_logger
from data.levircd import LEVIRCDLoader
from module.changestar import ChangeStar

parser = argparse.ArgumentParser()
parser.add_argument('--config_path', type=str)
parser.add_argument('--model_dir', type=str)
parser.add_argument('--ckpt_path', type=str)
parser.add_argument('--tta', action='store_true', help='flip test-time augmentation')
parser.add_argument('--fp16', action='store_true', help='run the forward pass under autocast')
parser.add_argument('--save_dir', type=str, default=None, help='optionally write binary change maps here')
parser.add_argument('--gpu', type=int, default=0)


class PixelMetric(object):
    """Accumulates a 2x2 confusion matrix for binary change detection."""

    def __init__(self):
        self.cm = np.zeros((2, 2), dtype=np.int64)

    def update(self, y_true, y_pred):
        y_true = y_true.reshape(-1)
        y_pred = y_pred.reshape(-1)
        valid = y_true >= 0
        idx = 2 * y_true[valid].astype(np.int64) + y_pred[valid].astype(np.int64)
        self.cm += np.bincount(idx, minlength=4).reshape(2, 2)

    def summary(self):
        tn, fp, fn, tp = self.cm.ravel()
        precision = tp / max(tp + fp, 1)
        recall = tp / max(tp + fn, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-12)
        iou = tp / max(tp + fp + fn, 1)
        oa = (tp + tn) / max(self.cm.sum(), 1)
        return dict(precision=float(precision), recall=float(recall), f1=float(f1), iou=float(iou), oa=float(oa))


def flip_tta(model, x):
    """Average change probabilities over identity / h-flip / v-flip."""
    out = model(x).sigmoid()
    out = out + model(x.flip(-1)).sigmoid().flip(-1)
    out = out + model(x.flip(-2)).sigmoid().flip(-2)
    return out / 3.0


def load_model(cfg, ckpt_path, device):
    model = ChangeStar(cfg['model']['params'])
    state = torch.load(ckpt_path, map_location=lambda storage, loc: storage)
    if 'model' in state:
        state = state['model']
    state = {k[len('module.'):] if k.startswith('module.') else k: v for k, v in state.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing:
        print('missing keys: %s' % missing)
    if unexpected:
        print('unexpected keys: %s' % unexpected)
    model.to(device)
    model.eval()
    return model


@torch.no_grad()
def evaluate(model, loader, device, tta=False, fp16=False, save_dir=None):
    metric = PixelMetric()
    n_img = 0
    t_model = 0.0
    for img, gt in tqdm(loader):
        img = img.to(device, non_blocking=True)
        torch.cuda.synchronize(device)
        t0 = time.time()
        with torch.cuda.amp.autocast(enabled=fp16):
            prob = flip_tta(model, img) if tta else model(img).sigmoid()
        torch.cuda.synchronize()
        t_model += time.time() - t0
        if prob.shape[-2:] != gt['change'].shape[-2:]:
            prob = F.interpolate(prob.float(), size=gt['change'].shape[-2:], mode='bilinear', align_corners=False)
        pred = (prob > 0.5).squeeze(1).cpu().numpy().astype(np.uint8)
        y_true = gt['change'].numpy().astype(np.int64)
        metric.update(y_true, pred)
        if save_dir is not None:
            from PIL import Image
            for i, name in enumerate(gt['image_filename']):
                Image.fromarray(pred[i] * 255).save(os.path.join(save_dir, name))
        n_img += img.size(0)
    scores = metric.summary()
    scores['fps'] = n_img / max(t_model, 1e-6)
    return scores


def main():
    args = parser.parse_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)

    cfg = import_config(args.config_path)
    logger = get_logger('changestar-eval', os.path.join(args.model_dir, 'eval.log'))
    test_loader = LEVIRCDLoader(cfg['data']['test']['params'], distributed=False)
    model = load_model(cfg, args.ckpt_path, device)

    if args.save_dir is not None:
        os.makedirs(args.save_dir, exist_ok=True)

    scores = evaluate(model, test_loader, device, tta=args.tta, fp16=args.fp16, save_dir=args.save_dir)
    logger.info('ckpt: %s | tta: %s | %s', args.ckpt_path, args.tta, json.dumps(scores))
    with open(os.path.join(args.model_dir, 'eval_%s.json' % os.path.basename(args.ckpt_path)), 'w') as f:
        json.dump(scores, f, indent=2)


if __name__ == '__main__':
    main()
