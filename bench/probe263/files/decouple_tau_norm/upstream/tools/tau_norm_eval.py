"""Sweep the tau-normalization exponent on a trained joint / cRT checkpoint.

Usage:
    python tools/tau_norm_eval.py --cfg config/ImageNet_LT/feat_uniform.yaml \
        --ckpt logs/ImageNet_LT/models/resnext50_uniform_e90/final_model_checkpoint.pth \
        --feats logs/ImageNet_LT/models/resnext50_uniform_e90/valfeat_all.pkl --gpu 0

The val/test features are produced by `main.py --test --save_feat val`, so this
script never touches the backbone; it only re-scales the classifier rows
(w_j / ||w_j||^tau) and recomputes the logits on the GPU.
"""
import os
import sys
import argparse
import pickle

parser = argparse.ArgumentParser()
parser.add_argument('--cfg', type=str, required=True)
parser.add_argument('--ckpt', type=str, required=True)
parser.add_argument('--feats', type=str, required=True)
parser.add_argument('--train_labels', type=str, default='./data/ImageNet_LT/ImageNet_LT_train.txt')
parser.add_argument('--taus', type=str, default='0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0,1.2,1.5,2.0')
parser.add_argument('--gpu', type=str, default='0', help='which GPU to run the sweep on')
parser.add_argument('--out', type=str, default=None)
args = parser.parse_args()

# must happen before torch initialises CUDA
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

import numpy as np
import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from utils import shot_acc, pnorm  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False  # keep the sweep in exact fp32


def load_train_labels(txt):
    labels = []
    with open(txt) as f:
        for line in f:
            labels.append(int(line.split()[1]))
    return np.array(labels)


def get_classifier(ckpt_path):
    ckpt = torch.load(ckpt_path, map_location='cpu')
    state = ckpt['state_dict_best']['classifier']
    # DataParallel prefix
    w = state.get('module.fc.weight', state.get('fc.weight'))
    b = state.get('module.fc.bias', state.get('fc.bias'))
    return w, b


def main():
    with open(args.cfg) as f:
        cfg = yaml.load(f, Loader=yaml.FullLoader)
    num_classes = cfg['training_opt']['num_classes']

    device = torch.device('cuda:0')
    w, b = get_classifier(args.ckpt)
    w = w.to(device)
    b = b.to(device) if b is not None else None
    assert w.shape[0] == num_classes, 'classifier has %d rows, config says %d' % (w.shape[0], num_classes)

    with open(args.feats, 'rb') as f:
        data = pickle.load(f)
    feats = torch.from_numpy(data['feats']).float().cuda()
    labels = torch.from_numpy(data['labels']).long().cuda()
    train_labels = load_train_labels(args.train_labels)

    taus = [float(t) for t in args.taus.split(',')]
    results = []
    print('tau\tall\tmany\tmedium\tfew')
    for tau in taus:
        ws = pnorm(w, tau)
        with torch.no_grad():
            logits = torch.mm(feats, ws.t())
            if b is not None and tau == 0:
                logits = logits + b
            preds = F.softmax(logits, dim=1).argmax(dim=1)
        acc = (preds == labels).float().mean().item()
        many, median, low = shot_acc(preds, labels, train_labels)
        results.append((tau, acc, many, median, low))
        print('%.2f\t%.2f\t%.2f\t%.2f\t%.2f' % (tau, acc * 100, many * 100, median * 100, low * 100))

    best = max(results, key=lambda r: r[1])
    print('best tau = %.2f (top-1 %.2f)' % (best[0], best[1] * 100))
    torch.cuda.synchronize()

    if args.out is not None:
        with open(args.out, 'wb') as f:
            pickle.dump({'results': results, 'best_tau': best[0]}, f)


if __name__ == '__main__':
    main()
