# Evaluate a fine-tuned MusicBERT checkpoint on genre / style classification (TOPMAGD, MASD).
#
#   python -u eval_genre.py checkpoints/checkpoint_last_genre_topmagd_x_checkpoint_last_musicbert_base.pt \
#          topmagd_data_bin/x
#
# 'x' in both paths is replaced by the fold index.
import os
import sys
import time

os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')

import numpy as np
import torch
import sklearn.metrics
from fairseq.models.roberta import RobertaModel

use_cuda = torch.cuda.is_available() and 'CPU_ONLY' not in os.environ

max_length = 8192 if 'disable_cp' not in os.environ else 1024
batch_size = 4 if use_cuda else 1
n_folds = 5

scores = dict()
for score in ["f1_score", "roc_auc_score"]:
    for average in ["macro", "micro", "weighted", "samples"]:
        scores[score + "_" + average] = []


def label_fn(label, label_dict):
    return label_dict.string(
        [label + label_dict.nspecial]
    )


def padded_batch(samples, pad_index, max_length):
    max_len = min(max(len(s) for s in samples), max_length)
    out = torch.full((len(samples), max_len), pad_index, dtype=torch.long)
    for j, s in enumerate(samples):
        s = s[:max_len]
        out[j, :len(s)] = s
    return out


for i in range(n_folds):

    print('loading model and data')
    print('start evaluating fold {}'.format(i))

    roberta = RobertaModel.from_pretrained(
        '.',
        checkpoint_file=sys.argv[1].replace('x', str(i)),
        data_name_or_path=sys.argv[2].replace('x', str(i)),
        user_dir='musicbert'
    )
    num_classes = 13 if 'topmagd' in sys.argv[1] else 25
    if use_cuda:
        roberta.cuda()
    roberta.eval()

    roberta.task.load_dataset('valid')
    dataset = roberta.task.datasets['valid']
    label_dict = roberta.task.label_dictionary
    pad_index = label_dict.pad()
    print('dataset size: {}'.format(len(dataset)))

    y_true = []
    y_pred = []
    t0 = time.time()

    for start in range(0, len(dataset), batch_size):
        samples = [dataset[j] for j in range(start, min(start + batch_size, len(dataset)))]
        src = padded_batch([s['source'] for s in samples], pad_index, max_length)
        if use_cuda:
            src = src.cuda(non_blocking=True)
        with torch.no_grad():
            logits = roberta.predict('xai_head', src, return_logits=True)
            probs = torch.sigmoid(logits).cpu().numpy()
        for s, p in zip(samples, probs):
            target = s['target'].tolist()
            label = np.zeros(num_classes, dtype=np.int64)
            for t in target:
                if t == pad_index:
                    continue
                idx = int(label_fn(t, label_dict)) if label_fn(t, label_dict).isdigit() else t - label_dict.nspecial
                if 0 <= idx < num_classes:
                    label[idx] = 1
            y_true.append(label)
            y_pred.append(p[:num_classes])

    print('inference time: {:.1f}s'.format(time.time() - t0))

    y_true = np.vstack(y_true)
    y_pred = np.vstack(y_pred)

    for score in ["f1_score", "roc_auc_score"]:
        for average in ["macro", "micro", "weighted", "samples"]:
            try:
                y_score = np.round(y_pred) if score == "f1_score" else y_pred
                result = sklearn.metrics.__dict__[score](y_true, y_score, average=average)
                print("{}_{}:".format(score, average), result)
                scores[score + "_" + average].append(result)
            except BaseException as e:
                print("{}_{}:".format(score, average), None)

    del roberta
    if use_cuda:
        torch.cuda.empty_cache()

print()
for k in scores:
    print(k, sum(scores[k]) / max(1, len(scores[k])))
