import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.metrics import auc, roc_curve, precision_recall_curve
from torch.utils.data import DataLoader


def test(dataloader, model, args, viz, device):
    with torch.no_grad():
        model.eval()
        pred = torch.zeros(0, device=device)

        for i, input in enumerate(dataloader):
            input = input.to(device)
            input = input.permute(0, 2, 1, 3)
            score_abnormal, score_normal, feat_select_abn, feat_select_normal, feat_abn_bottom, feat_select_normal_bottom, logits, \
            scores_nor_bottom, scores_nor_abn_bag, feat_magnitudes = model(inputs=input)
            logits = torch.squeeze(logits, 1)
            logits = torch.mean(logits, 0)
            sig = logits
            pred = torch.cat((pred, sig))

        if args.dataset == 'shanghai':
            gt = np.load('list/gt-sh.npy')
        else:
            gt = np.load('list/gt-ucf.npy')

        pred = list(pred.cpu().detach().numpy())
        pred = np.repeat(np.array(pred), 16)

        fpr, tpr, threshold = roc_curve(list(gt), pred)
        np.save('fpr.npy', fpr)
        np.save('tpr.npy', tpr)
        rec_auc = auc(fpr, tpr)
        print('auc : ' + str(rec_auc))

        precision, recall, th = precision_recall_curve(list(gt), pred)
        pr_auc = auc(recall, precision)
        np.save('precision.npy', precision)
        np.save('recall.npy', recall)
        viz.plot_lines('pr_auc', pr_auc)
        viz.plot_lines('auc', rec_auc)
        viz.lines('scores', pred)
        viz.lines('roc', tpr, fpr)
        return rec_auc


def per_video_auc(dataloader, model, device, gt, video_lengths):
    """AUC computed on the anomalous test videos only (a stricter protocol).

    ``video_lengths`` holds the number of 16-frame snippets of every test video
    in the order of the test list.
    """
    scores = []
    with torch.no_grad():
        model.eval()
        for input in dataloader:
            input = input.to(device).permute(0, 2, 1, 3)
            logits = model(inputs=input)[6]
            logits = torch.mean(torch.squeeze(logits, 1), 0)
            scores.append(np.repeat(logits.cpu().numpy(), 16))
    aucs = []
    offset = 0
    for s, n in zip(scores, video_lengths):
        g = gt[offset:offset + n * 16]
        offset += n * 16
        if g.max() == 0 or g.min() == 1:
            continue  # normal video (or fully abnormal): AUC undefined
        fpr, tpr, _ = roc_curve(g, s[:len(g)])
        aucs.append(auc(fpr, tpr))
    return float(np.mean(aucs)) if aucs else float('nan')


def plot_scores(pred, gt, save_path, video_name):
    """Dump a per-frame score curve against the ground-truth mask."""
    fig = plt.figure(figsize=(12, 3))
    plt.plot(pred, color='tab:red', label='anomaly score')
    plt.fill_between(np.arange(len(gt)), 0, gt, color='tab:gray', alpha=0.3, label='GT')
    plt.ylim(0, 1.05)
    plt.title(video_name)
    plt.legend(loc='upper right')
    plt.tight_layout()
    fig.savefig(os.path.join(save_path, video_name + '.png'))
    plt.close(fig)


if __name__ == '__main__':
    # stand-alone evaluation of a released checkpoint, e.g.
    #   python test_10crop.py --dataset shanghai --ckpt ckpt/rtfm-shanghai.pkl
    import option
    from dataset import Dataset
    from model import Model
    from utils import Visualizer

    option.parser.add_argument('--ckpt', type=str, required=True)
    option.parser.add_argument('--plot-dir', type=str, default='')
    args = option.parser.parse_args()

    viz = Visualizer(env='rtfm eval', use_incoming_socket=False)
    device = torch.device('cuda:{}'.format(args.gpus) if args.gpus >= 0 else 'cpu')

    model = Model(args.feature_size, args.batch_size)
    model.load_state_dict(torch.load(args.ckpt))
    model = model.to(device)

    test_loader = DataLoader(Dataset(args, test_mode=True),
                             batch_size=1, shuffle=False,
                             num_workers=0, pin_memory=False)
    auc_score = test(test_loader, model, args, viz, device)
    print('{} AUC = {:.4f}'.format(os.path.basename(args.ckpt), auc_score))
