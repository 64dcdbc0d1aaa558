#! /usr/bin/env python3
"""KNN-based OOD detection on ImageNet-1K (Sun et al., "Out-of-distribution
Detection with Deep Nearest Neighbors", ICML 2022).

Step 1 (``--extract``) caches penultimate features of the ID train/val sets and
of every OOD set as float32 memmaps under ./cache. Step 2 normalises them and
scores each test sample by its K-th nearest neighbour distance in the
(possibly sub-sampled) ID train bank.
"""
import argparse
import os
import time

import faiss
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms
from tqdm import tqdm

from util.metrics import compute_traditional_ood
from util.args_loader import get_args
from util.data_loader import get_loader_in, get_loader_out
from util.model_loader import get_model

parser = argparse.ArgumentParser(description='KNN OOD on ImageNet')
parser.add_argument('--in-dataset', default='imagenet', type=str)
parser.add_argument('--out-datasets', default=['inat', 'sun50', 'places50', 'dtd'], nargs='+')
parser.add_argument('--name', default='resnet50-supcon', type=str)
parser.add_argument('--model-arch', default='resnet50-supcon', type=str)
parser.add_argument('--batch-size', default=256, type=int)
parser.add_argument('--gpu', default='0', type=str, help='which gpu(s) to use, e.g. 0,1')
parser.add_argument('--extract', action='store_true', help='(re)compute the feature cache first')
parser.add_argument('--K', default=1000, type=int)
parser.add_argument('--ratio', default=1.0, type=float, help='fraction of the ID train bank to keep')
parser.add_argument('--faiss-gpu', action='store_true', help='run the KNN search on GPU (needs faiss-gpu)')
args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

torch.manual_seed(1)
torch.cuda.manual_seed(1)
np.random.seed(1)

device = 'cuda' if torch.cuda.is_available() else 'cpu'

FORCE_RUN = args.extract
cache_root = './cache'


def extract(model, loader, cache_name, featdim, num_classes):
    """Run ``model`` over ``loader`` and dump features/logits/labels to
    ``cache_name`` as one float32 memmap of shape [N, featdim + C + 1]."""
    ds_len = len(loader.dataset)
    out = np.memmap(cache_name, dtype=float, mode='w+', shape=(ds_len, featdim + num_classes + 1))
    model.eval()
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(tqdm(loader)):
            inputs, targets = inputs.to(device), targets.to(device)
            start_ind = batch_idx * loader.batch_size
            end_ind = min((batch_idx + 1) * loader.batch_size, ds_len)

            out_feat = model.forward_features(inputs)
            logits = model.fc(out_feat)
            out[start_ind:end_ind, :featdim] = out_feat.data.cpu().numpy()
            out[start_ind:end_ind, featdim:featdim + num_classes] = logits.data.cpu().numpy()
            out[start_ind:end_ind, -1] = targets.data.cpu().numpy()
    out.flush()
    return out


class_num = 1000
featdim = 2048

if FORCE_RUN:
    loader_in_dict = get_loader_in(args, config_type='eval', split=('train', 'val'))
    trainloaderIn, testloaderIn = loader_in_dict.train_loader, loader_in_dict.val_loader
    model = get_model(args, class_num, load_ckpt=True)
    model = model.to(device)
    model.eval()
    if torch.cuda.device_count() > 1:
        # feature extraction only, plain DataParallel is good enough here
        model = torch.nn.DataParallel(model)
        model_core = model.module
    else:
        model_core = model

    os.makedirs(os.path.join(cache_root, args.in_dataset), exist_ok=True)
    for split, in_loader in [('train', trainloaderIn), ('val', testloaderIn)]:
        cache_name = f"{cache_root}/{args.in_dataset}_{split}_{args.name}_in_alllayers.npy"
        t0 = time.time()
        extract(model_core, in_loader, cache_name, featdim, class_num)
        print(f'{split}: {time.time() - t0:.1f}s')

    for ood_dataset in args.out_datasets:
        loader_test_dict = get_loader_out(args, dataset=(None, ood_dataset), split=('val'))
        out_loader = loader_test_dict.val_ood_loader
        cache_name = f"{cache_root}/{ood_dataset}vs{args.in_dataset}_{args.name}_out_alllayers.npy"
        extract(model_core, out_loader, cache_name, featdim, class_num)

    del model
    torch.cuda.empty_cache()


def load_cache(cache_name, n):
    arr = np.memmap(cache_name, dtype=float, mode='r', shape=(n, featdim + class_num + 1))
    return arr[:, :featdim]


id_train_size = 1281167
id_val_size = 50000

feat_log = load_cache(f"{cache_root}/{args.in_dataset}_train_{args.name}_in_alllayers.npy", id_train_size)
feat_log_val = load_cache(f"{cache_root}/{args.in_dataset}_val_{args.name}_in_alllayers.npy", id_val_size)

ood_feat_log_all = {}
for ood_dataset in args.out_datasets:
    ood_feat_log_all[ood_dataset] = load_cache(
        f"{cache_root}/{ood_dataset}vs{args.in_dataset}_{args.name}_out_alllayers.npy", 10000)

normalizer = lambda x: x / (np.linalg.norm(x, ord=2, axis=-1, keepdims=True) + 1e-10)
prepos_feat = lambda x: np.ascontiguousarray(normalizer(x))  # Last Layer only

ftrain = prepos_feat(feat_log).astype(np.float32)
ftest = prepos_feat(feat_log_val).astype(np.float32)
food_all = {}
for ood_dataset in args.out_datasets:
    food_all[ood_dataset] = prepos_feat(ood_feat_log_all[ood_dataset]).astype(np.float32)

print('faiss: {} GPUs visible'.format(faiss.get_num_gpus()))

#################### KNN score OOD detection #################
index = faiss.IndexFlatL2(ftrain.shape[1])
if args.faiss_gpu:
    res = faiss.StandardGpuResources()
    res.setTempMemory(2 * 1024 * 1024 * 1024)
    index = faiss.index_cpu_to_gpu(res, 0, index)

rand_ind = np.random.choice(id_train_size, int(id_train_size * args.ratio), replace=False)
index.add(ftrain[rand_ind])

for K in [args.K]:
    t0 = time.time()
    D, _ = index.search(ftest, K)
    scores_in = -D[:, -1]
    all_results = []
    all_score_ood = []
    for ood_dataset, food in food_all.items():
        D, _ = index.search(food, K)
        scores_ood_test = -D[:, -1]
        all_score_ood.extend(scores_ood_test)
        results = compute_traditional_ood(scores_in, scores_ood_test)
        all_results.append(results)

    print_measures = lambda r, name: print(
        f"{name:>10s}  FPR95 {100 * r['FPR']:.2f}  AUROC {100 * r['AUROC']:.2f}")
    for ood_dataset, r in zip(food_all.keys(), all_results):
        print_measures(r, ood_dataset)
    mean = {k: np.mean([r[k] for r in all_results]) for k in all_results[0]}
    print_measures(mean, 'mean')
    print(f'K={K} search time: {time.time() - t0:.1f}s')
