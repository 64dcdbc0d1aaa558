"""
MBD: mask-based document boundary detection used as the dewarping prompt in DocRes.

net1 (DeepLabv3+, ResNet backbone) predicts a coarse document mask on a 448x448
resize; net2 refines the boundary on a crop around the coarse mask.  Only the
mask is returned -- DocRes turns it into its dewarping prompt.
"""
import os
import sys
import cv2
import numpy as np
import torch
import torch.nn.functional as F

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from model.deep_lab_model.deeplab import DeepLab

_MODEL_CACHE = {}
IMG_SIZE = 448
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def _to_tensor(img):
    img = cv2.resize(img, (IMG_SIZE, IMG_SIZE))
    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
    img = (img - MEAN) / STD
    return torch.from_numpy(img.transpose(2, 0, 1)).unsqueeze(0)


def _load_seg_model(model_path):
    if model_path in _MODEL_CACHE:
        return _MODEL_CACHE[model_path]
    seg_model = DeepLab(num_classes=1, backbone='resnet', output_stride=16, sync_bn=False, freeze_bn=False)
    seg_model = torch.nn.DataParallel(seg_model, device_ids=[0])
    checkpoint = torch.load(model_path, map_location='cpu')
    seg_model.load_state_dict(checkpoint['model_state'])
    seg_model.cuda()
    seg_model.eval()
    _MODEL_CACHE[model_path] = seg_model
    return seg_model


def _largest_component(mask):
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n <= 1:
        return mask
    idx = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return ((labels == idx) * 255).astype(np.uint8)


def _fill_holes(mask):
    h, w = mask.shape
    flood = mask.copy()
    ff_mask = np.zeros((h + 2, w + 2), np.uint8)
    cv2.floodFill(flood, ff_mask, (0, 0), 255)
    return mask | cv2.bitwise_not(flood)


def _crop_box(mask, margin=0.05):
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return 0, 0, mask.shape[1], mask.shape[0]
    h, w = mask.shape
    my, mx = int(h * margin), int(w * margin)
    return max(0, xs.min() - mx), max(0, ys.min() - my), min(w, xs.max() + mx), min(h, ys.max() + my)


@torch.no_grad()
def _predict(model, img):
    inp = _to_tensor(img).cuda()
    pred = model(inp)
    pred = torch.sigmoid(pred)
    pred = F.interpolate(pred, size=img.shape[:2], mode='bilinear', align_corners=False)
    return (pred[0, 0].cpu().numpy() > 0.5).astype(np.uint8) * 255


def net1_net2_infer_single_im(img, model_path):
    """img: BGR uint8 (H, W, 3). Returns a uint8 mask (H, W) with 255 for the document."""
    model = _load_seg_model(model_path)
    h, w = img.shape[:2]

    # net1: coarse mask on the full image
    coarse = _predict(model, img)
    coarse = _fill_holes(_largest_component(coarse))

    # net2: refine on a crop around the document
    x0, y0, x1, y1 = _crop_box(coarse)
    crop = img[y0:y1, x0:x1]
    if crop.size == 0:
        return coarse
    fine = _predict(model, crop)
    fine = _fill_holes(_largest_component(fine))

    mask = np.zeros((h, w), np.uint8)
    mask[y0:y1, x0:x1] = fine
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
    return mask


if __name__ == '__main__':
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--im', required=True)
    p.add_argument('--ckpt', default='data/MBD/checkpoint/mbd.pkl')
    p.add_argument('--out', default='mask.png')
    a = p.parse_args()
    m = net1_net2_infer_single_im(cv2.imread(a.im), a.ckpt)
    cv2.imwrite(a.out, m)
    print('saved', a.out, m.shape, 'gpu:', torch.cuda.get_device_name(0))
