import os
import time
import tqdm
import torch
import argparse
import warnings
import numpy as np
from random import choice
from pygod.metric import *
from pygod.utils import load_data
from utils import init_model, set_seed


def main(args):
    auc, ap, rec = [], [], []
    times, peak_mem = [], []

    data = load_data(args.dataset)
    y = data.y.bool()
    k = sum(y)

    if torch.isnan(data.x).any():
        warnings.warn('Dataset {} contains NaN features, replacing with 0'
                      .format(args.dataset))
        data.x = torch.nan_to_num(data.x)

    use_gpu = args.gpu >= 0 and torch.cuda.is_available()

    for i in tqdm.tqdm(range(args.num_trial)):
        set_seed(args.seed + i)
        model = init_model(args)

        if use_gpu:
            torch.cuda.reset_peak_memory_stats(args.gpu)
        start = time.time()

        if args.model in ('lof', 'if'):
            model.fit(data.x.numpy())
            score = torch.tensor(model.decision_scores_)
        elif args.model == 'scan':
            model.fit(data)
            score = model.decision_score_
        else:
            model.fit(data)
            score = model.decision_score_

        times.append(time.time() - start)
        if use_gpu:
            peak_mem.append(torch.cuda.max_memory_allocated(args.gpu) / 1024 ** 2)

        if np.isnan(score).any():
            warnings.warn('contains NaN, skip one trial.')
            # continue

        auc.append(eval_roc_auc(y, score))
        ap.append(eval_average_precision(y, score))
        rec.append(eval_recall_at_k(y, score, k))

        del model
        if use_gpu:
            torch.cuda.empty_cache()

    print(args.dataset + " " + args.model + " " +
          "AUC: {:.4f}±{:.4f} ({:.4f})\t"
          "AP: {:.4f}±{:.4f} ({:.4f})\t"
          "Recall: {:.4f}±{:.4f} ({:.4f})".format(np.mean(auc), np.std(auc),
                                                  np.max(auc), np.mean(ap),
                                                  np.std(ap), np.max(ap),
                                                  np.mean(rec), np.std(rec),
                                                  np.max(rec)))
    print("time: {:.2f}s/trial".format(np.mean(times)), end='')
    if peak_mem:
        print(", peak GPU memory: {:.1f} MB".format(np.max(peak_mem)))
    else:
        print()

    if args.output:
        os.makedirs(os.path.dirname(args.output) or '.', exist_ok=True)
        with open(args.output, 'a') as f:
            f.write('{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{}\n'
                    .format(args.dataset, args.model,
                            np.mean(auc), np.std(auc),
                            np.mean(ap), np.std(ap),
                            np.mean(rec), np.std(rec),
                            np.mean(times),
                            '{:.1f}'.format(np.max(peak_mem)) if peak_mem else 'NA'))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="dominant",
                        help="supported model: [lof, if, mlpae, scan, radar, "
                             "anomalous, gcnae, dominant, done, adone, "
                             "anomalydae, gaan, guide, conad]. "
                             "Default: dominant")
    parser.add_argument("--gpu", type=int, default=0,
                        help="GPU Index. Default: 0. -1 for using CPU.")
    parser.add_argument("--dataset", type=str, default='inj_cora',
                        help="supported dataset: [inj_cora, inj_amazon, "
                             "inj_flickr, weibo, reddit, disney, books, "
                             "enron]. Default: inj_cora")
    parser.add_argument("--num_trial", type=int, default=20,
                        help="Number of trials. Default: 20")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epoch", type=int, default=100)
    parser.add_argument("--output", type=str, default='')
    args = parser.parse_args()

    # setting the gpu to -1 when the model cannot run on the accelerator
    if args.model in ('lof', 'if', 'scan'):
        args.gpu = -1

    main(args)
