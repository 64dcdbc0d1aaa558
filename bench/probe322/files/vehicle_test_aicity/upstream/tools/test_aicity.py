# encoding: utf-8
"""
Feature extraction + re-ranking for the AI City Challenge vehicle ReID track.

    python tools/test_aicity.py --config_file configs/aicity21/r50_ibn_gnn.yml \
        --weights output/aicity21/r50_ibn_gnn/model_036.pth --rerank gnn --gpu 0

Writes track2.txt (top-100 gallery ids for every query) into OUTPUT_DIR.
"""
import argparse
import os
import pickle
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

sys.path.append('.')
from reid.config import cfg
from reid.data.common import ImageDataset, val_collate_fn
from reid.data.datasets import init_dataset
from reid.data.transforms import build_transforms
from reid.modeling import build_model
from reid.rerank.gnn_reranking.gnn_reranking import gnn_reranking
from reid.rerank.re_ranking import re_ranking
from reid.utils.logger import setup_logger


def extract_features(model, loader, flip=True, half=False):
    feats, pids, camids, paths = [], [], [], []
    with torch.no_grad():
        for imgs, pid, camid, path in loader:
            imgs = imgs.to('cuda', non_blocking=True)
            if half:
                imgs = imgs.half()
            f = model(imgs)
            if flip:
                f = f + model(torch.flip(imgs, dims=[3]))
            feats.append(F.normalize(f.float(), dim=1).cpu())
            pids.extend(pid)
            camids.extend(camid)
            paths.extend(path)
    return torch.cat(feats, dim=0), np.asarray(pids), np.asarray(camids), paths


def write_results(indices, query_paths, gallery_paths, out_file, topk=100):
    gallery_ids = [os.path.splitext(os.path.basename(p))[0] for p in gallery_paths]
    with open(out_file, 'w') as f:
        for q_idx in range(len(query_paths)):
            row = [gallery_ids[g].lstrip('0') or '0' for g in indices[q_idx, :topk]]
            f.write(' '.join(row) + '\n')


def build_loader(cfg, items):
    transform = build_transforms(cfg, is_train=False)
    return DataLoader(
        ImageDataset(items, transform),
        batch_size=cfg.TEST.IMS_PER_BATCH,
        shuffle=False,
        num_workers=cfg.DATALOADER.NUM_WORKERS,
        pin_memory=torch.cuda.is_available(),
        collate_fn=val_collate_fn,
    )


def main():
    parser = argparse.ArgumentParser(description='AICity vehicle ReID test')
    parser.add_argument('--config_file', default='', type=str)
    parser.add_argument('--weights', required=True, type=str)
    parser.add_argument('--rerank', default='gnn', choices=['none', 'kreciprocal', 'gnn'])
    parser.add_argument('--k1', default=26, type=int)
    parser.add_argument('--k2', default=7, type=int)
    parser.add_argument('--gpu', default='0', type=str, help='gpu id(s) to use, e.g. "0" or "0,1"')
    parser.add_argument('--save_feats', action='store_true', help='dump query/gallery features to a pickle')
    parser.add_argument('opts', default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()

    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

    if args.config_file:
        cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()

    output_dir = cfg.OUTPUT_DIR
    os.makedirs(output_dir, exist_ok=True)
    logger = setup_logger('reid', output_dir, 0)
    logger.info('Running with config:\n{}'.format(cfg))

    dataset = init_dataset(cfg.DATASETS.TEST[0], root=cfg.DATASETS.ROOT_DIR)
    query_loader = build_loader(cfg, dataset.query)
    gallery_loader = build_loader(cfg, dataset.gallery)

    model = build_model(cfg, num_classes=dataset.num_train_pids)
    checkpoint = torch.load(args.weights, map_location='cuda:0')
    state_dict = checkpoint.get('model', checkpoint)
    state_dict = {k.replace('module.', ''): v for k, v in state_dict.items()}
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    if missing:
        logger.info('missing keys: {}'.format(missing))
    if unexpected:
        logger.info('unexpected keys: {}'.format(unexpected))
    model = model.cuda().eval()
    if cfg.TEST.FP16:
        model = model.half()

    start = time.time()
    qf, q_pids, q_camids, q_paths = extract_features(model, query_loader, flip=cfg.TEST.FLIP, half=cfg.TEST.FP16)
    gf, g_pids, g_camids, g_paths = extract_features(model, gallery_loader, flip=cfg.TEST.FLIP, half=cfg.TEST.FP16)
    logger.info('feature extraction: {} query / {} gallery in {:.1f}s'.format(
        qf.size(0), gf.size(0), time.time() - start))

    if args.save_feats:
        with open(os.path.join(output_dir, 'feats.pkl'), 'wb') as f:
            pickle.dump({'qf': qf.numpy(), 'gf': gf.numpy(), 'q_paths': q_paths, 'g_paths': g_paths}, f)

    if args.rerank == 'gnn':
        logger.info('GNN re-ranking with k1={} k2={}'.format(args.k1, args.k2))
        X_q = qf.cuda()
        X_g = gf.cuda()
        start = time.time()
        indices = gnn_reranking(X_q, X_g, args.k1, args.k2)
        torch.cuda.synchronize()
        logger.info('GNN re-ranking took {:.3f}s'.format(time.time() - start))
    elif args.rerank == 'kreciprocal':
        distmat = re_ranking(qf, gf, k1=args.k1, k2=args.k2, lambda_value=0.3)
        indices = np.argsort(distmat, axis=1)
    else:
        distmat = 1 - torch.mm(qf, gf.t()).numpy()
        indices = np.argsort(distmat, axis=1)

    out_file = os.path.join(output_dir, 'track2.txt')
    write_results(indices, q_paths, g_paths, out_file)
    logger.info('results written to {}'.format(out_file))


if __name__ == '__main__':
    main()
