# written by Seongwon Lee (won4113@yonsei.ac.kr)

import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

import faiss

from test.config_gnd import config_gnd
from test.dataset import DataSet
from test.evaluate import compute_map
from test.test_loader import construct_loader


@torch.no_grad()
def extract_feature(model, test_loader):
    with torch.no_grad():
        img_feats = [[] for i in range(3)]

        for i, im_list in enumerate(tqdm(test_loader, mininterval=10)):
            for idx in range(len(im_list)):
                im_list[idx] = im_list[idx].cuda()
                desc = model.forward_global(im_list[idx])
                if len(desc.shape) == 1:
                    desc.unsqueeze_(0)
                desc = F.normalize(desc, p=2, dim=1)
                img_feats[idx].append(desc.detach().cpu())

        for idx in range(len(img_feats)):
            img_feats[idx] = torch.cat(img_feats[idx], dim=0)
            if len(img_feats[idx].shape) == 1:
                img_feats[idx].unsqueeze_(0)

        img_feats_agg = F.normalize(torch.mean(torch.cat([img_feat.unsqueeze(0) for img_feat in img_feats], dim=0), dim=0), p=2, dim=1)
        img_feats_agg = img_feats_agg.cpu().numpy()

    return img_feats_agg


@torch.no_grad()
def extract_feature_featuremap(model, test_loader):
    """Layer-3 feature maps of every image, kept on the host (they are big)."""
    feats = []
    for im_list in tqdm(test_loader, mininterval=10):
        im = im_list[0].to(next(model.parameters()).device, non_blocking=True)
        fmap = model.extract_featuremap(im)
        feats.append([f.half().cpu() for f in fmap])
    return feats


def build_knn_index(X, use_gpu=True):
    """Inner-product index over the database descriptors (N x D, float32).

    For R-1M the flat index does not fit comfortably on one GPU in float32, so
    the GPU index stores float16 and is sharded over every visible device.
    """
    d = X.shape[1]
    if not use_gpu:
        index = faiss.IndexFlatIP(d)
        index.add(X)
        return index
    ngpu = faiss.get_num_gpus()
    if ngpu == 1:
        res = faiss.StandardGpuResources()
        res.setTempMemory(512 * 1024 * 1024)
        cfg = faiss.GpuIndexFlatConfig()
        cfg.useFloat16 = True
        cfg.device = 0
        index = faiss.GpuIndexFlatIP(res, d, cfg)
    else:
        co = faiss.GpuMultipleClonerOptions()
        co.shard = True
        co.useFloat16 = True
        index = faiss.index_cpu_to_all_gpus(faiss.IndexFlatIP(d), co=co, ngpu=ngpu)
    index.add(X)
    return index


def rerank_ranks_revisitop(cfg, topk, ranks, query_feats, db_feats, model):
    ranks_corr_list = []
    for qidx in tqdm(range(len(query_feats)), mininterval=10):
        rerank_score = []
        qf = [f.cuda() for f in query_feats[qidx]]
        for didx in ranks[:topk, qidx]:
            df = [f.cuda().float() for f in db_feats[didx]]
            rerank_score.append(model.extract_score_with_featuremap([f.float() for f in qf], df).item())
        rerank_score = np.array(rerank_score)
        order = np.argsort(-rerank_score)
        ranks_corr_list.append(np.concatenate([ranks[:topk, qidx][order], ranks[topk:, qidx]]))
    return np.stack(ranks_corr_list, axis=1)


def test_revisitop(cfg, ks, ranks):
    # revisited evaluation
    gnd = cfg['gnd']

    # evaluate ranks
    ks = [1, 5, 10]

    # search for easy & hard
    gnd_t = []
    for i in range(len(gnd)):
        g = {}
        g['ok'] = np.concatenate([gnd[i]['easy'], gnd[i]['hard']])
        g['junk'] = np.concatenate([gnd[i]['junk']])
        gnd_t.append(g)
    mapM, apsM, mprM, prsM = compute_map(ranks, gnd_t, ks)

    # search for hard
    gnd_t = []
    for i in range(len(gnd)):
        g = {}
        g['ok'] = np.concatenate([gnd[i]['hard']])
        g['junk'] = np.concatenate([gnd[i]['junk'], gnd[i]['easy']])
        gnd_t.append(g)
    mapH, apsH, mprH, prsH = compute_map(ranks, gnd_t, ks)

    return (mapM, apsM, mprM, prsM), (mapH, apsH, mprH, prsH)


@torch.no_grad()
def test_model(model, data_dir, dataset_list, scale_list, topk=100, use_faiss=False, logger=print):
    torch.backends.cudnn.benchmark = False
    model.eval()

    for dataset in dataset_list:
        text = '>> {}: Global Retrieval for scale {} with CVNet-Global'.format(dataset, str(scale_list))
        logger(text)
        if dataset == 'roxford5k':
            gnd_fn = 'gnd_roxford5k.pkl'
        elif dataset == 'rparis6k':
            gnd_fn = 'gnd_rparis6k.pkl'
        else:
            assert dataset
        logger("extract query features")
        query_loader = construct_loader(data_dir, dataset, "query", scale_list)
        Q = extract_feature(model, query_loader)
        logger("extract database features")
        db_loader = construct_loader(data_dir, dataset, "db", scale_list)
        X = extract_feature(model, db_loader)

        cfg = config_gnd(dataset, data_dir)
        if use_faiss:
            index = build_knn_index(X, use_gpu=True)
            _, I = index.search(Q, X.shape[0])
            ranks = I.T
        else:
            Q_t = torch.from_numpy(Q).cuda()
            X_t = torch.from_numpy(X).cuda()
            sim = torch.matmul(X_t, Q_t.T)
            ranks = torch.argsort(-sim, dim=0).cpu().numpy()

        (mapM, apsM, mprM, prsM), (mapH, apsH, mprH, prsH) = test_revisitop(cfg, [1, 5, 10], ranks)
        logger('Global retrieval results: mAP M: {:.2f}, H: {:.2f}'.format(np.around(mapM * 100, decimals=2), np.around(mapH * 100, decimals=2)))

        logger('>> {}: Reranking results with CVNet-Rerank'.format(dataset))
        query_fmap_loader = construct_loader(data_dir, dataset, "query", [1.0])
        db_fmap_loader = construct_loader(data_dir, dataset, "db", [1.0])
        query_feats = extract_feature_featuremap(model, query_fmap_loader)
        db_feats = extract_feature_featuremap(model, db_fmap_loader)

        torch.cuda.synchronize()
        t0 = time.time()
        rerank_ranks = rerank_ranks_revisitop(cfg, topk, ranks, query_feats, db_feats, model)
        torch.cuda.synchronize()  # wait for the last rerank kernels before stopping the clock
        elapsed = time.time() - t0
        logger('rerank time per query: {:.1f} ms'.format(1000.0 * elapsed / len(query_feats)))

        (mapM, apsM, mprM, prsM), (mapH, apsH, mprH, prsH) = test_revisitop(cfg, [1, 5, 10], rerank_ranks)
        logger('Reranking results: mAP M: {:.2f}, H: {:.2f}'.format(np.around(mapM * 100, decimals=2), np.around(mapH * 100, decimals=2)))

    torch.backends.cudnn.benchmark = True
