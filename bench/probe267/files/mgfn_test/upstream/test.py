import os

import numpy as np
import torch
from matplotlib import pyplot as plt
from sklearn.metrics import auc, precision_recall_curve, roc_curve
from tqdm import tqdm

import option
from utils.utils import get_gt

args = option.parse_args()


def test(dataloader, model, args, device):
    plt.clf()
    with torch.no_grad():
        model.eval()
        pred = torch.zeros(0)
        featurelen = []
        for i, inputs in tqdm(enumerate(dataloader)):

            input = inputs[0].to(device)
            input = input.permute(0, 2, 1, 3)
            _, _, _, _, logits = model(input)
            logits = torch.squeeze(logits, 1)
            logits = torch.mean(logits, 0)
            sig = logits
            featurelen.append(len(sig))
            pred = torch.cat((pred, sig.cpu()))

        gt = np.load(args.gt)
        pred = list(pred.cpu().detach().numpy())
        pred = np.repeat(np.array(pred), 16)
        fpr, tpr, threshold = roc_curve(list(gt), pred)
        rec_auc = auc(fpr, tpr)
        precision, recall, th = precision_recall_curve(list(gt), pred)
        pr_auc = auc(recall, precision)
        print('pr_auc : ' + str(pr_auc))
        print('rec_auc : ' + str(rec_auc))
        return rec_auc, pr_auc


def dump_video_scores(dataloader, model, device, out_dir, names):
    """Save one score curve per test video (frame level) for qualitative figures."""
    os.makedirs(out_dir, exist_ok=True)
    with torch.no_grad():
        model.eval()
        for i, inputs in enumerate(tqdm(dataloader, desc='dump')):
            input = inputs[0].to(device).permute(0, 2, 1, 3)
            _, _, _, _, logits = model(input)
            logits = torch.mean(torch.squeeze(logits, 1), 0)
            frame_scores = np.repeat(logits.cpu().numpy(), 16)
            np.save(os.path.join(out_dir, names[i] + '.npy'), frame_scores)


def xd_average_precision(pred, gt):
    """XD-Violence reports AP instead of AUC."""
    precision, recall, _ = precision_recall_curve(list(gt), pred)
    return auc(recall, precision)


def plot_pr(pred, gt, path):
    precision, recall, _ = precision_recall_curve(list(gt), pred)
    plt.figure(figsize=(4, 4))
    plt.plot(recall, precision)
    plt.xlabel('recall')
    plt.ylabel('precision')
    plt.title('AP = {:.4f}'.format(auc(recall, precision)))
    plt.tight_layout()
    plt.savefig(path)
    plt.close()


if __name__ == '__main__':
    from torch.utils.data import DataLoader

    from datasets.dataset import Dataset
    from models.mgfn import mgfn as Model

    args = option.parse_args()
    device = torch.device("cuda")
    model = Model()
    test_loader = DataLoader(Dataset(args, test_mode=True),
                             batch_size=1, shuffle=False,
                             num_workers=0, pin_memory=False)
    model = model.to(device)
    model_dict = model.load_state_dict(
        {k.replace('module.', ''): v for k, v in torch.load('mgfn_ucf.pkl', map_location='cuda:0').items()})
    auc, pr_auc = test(test_loader, model, args, device)
    print('AUC {:.4f} / AP {:.4f}'.format(auc, pr_auc))
