# Copyright (C) 2024-present Naver Corporation. All rights reserved.
# Licensed under CC BY-NC-SA 4.0 (non-commercial use only).
#
# --------------------------------------------------------
# Main Retriever class
# --------------------------------------------------------
import os
import argparse
import numpy as np
import torch
from tqdm import tqdm

from mast3r.model import AsymmetricMASt3R
from mast3r.retrieval.model import RetrievalModel, extract_local_features

try:
    import faiss
    faiss.StandardGpuResources()  # when loading the checkpoint, it will try to instanciate FaissGpuL2Index
except AttributeError as e:
    import asmk.index

    class FaissCPUL2Index(asmk.index.FaissL2Index):
        def __init__(self, gpu_id):
            super().__init__()
            self.gpu_id = gpu_id

        def _faiss_index_flat(self, dim):
            return faiss.IndexFlatL2(dim)

    asmk.index.FaissGpuL2Index = FaissCPUL2Index

from asmk import io_helpers, asmk_method, kernel as kern_pkg  # noqa

from dust3r.utils.image import load_images


class Retriever(object):
    def __init__(self, modelname, backbone=None, device='cuda'):
        # load the model
        assert os.path.isfile(modelname), modelname
        print(f'Loading retrieval model from {modelname}')
        ckpt = torch.load(modelname, 'cpu')  # TODO from pretrained to download it automatically
        ckpt_args = ckpt['args']
        if backbone is None:
            backbone = AsymmetricMASt3R.from_pretrained(ckpt_args.pretrained)
        self.model = RetrievalModel(
            backbone, freeze_backbone=ckpt_args.freeze_backbone, prewhiten=ckpt_args.prewhiten,
            hdims=list(map(int, ckpt_args.hdims.split('_'))) if len(ckpt_args.hdims) > 0 else "",
            residual=getattr(ckpt_args, 'residual', False), postwhiten=ckpt_args.postwhiten,
            featweights=ckpt_args.featweights, nfeat=ckpt_args.nfeat
        ).to(device)
        self.device = device
        msg = self.model.load_state_dict(ckpt['model'], strict=False)
        assert all(k.startswith('backbone') for k in msg.missing_keys)
        assert len(msg.unexpected_keys) == 0
        self.imsize = ckpt_args.imsize

        # load the asmk codebook
        dname, bname = os.path.split(modelname)  # TODO they should both be in the same file ?
        bname_splits = bname.split('_')
        cache_codebook_fname = os.path.join(dname, '_'.join(bname_splits[:-1]) + '_codebook.pkl')
        assert os.path.isfile(cache_codebook_fname), cache_codebook_fname
        asmk_params = {'index': {'gpu_id': 0}, 'train_codebook': {'codebook': {'size': '64k'}},
                       'build_ivf': {'kernel': {'binary': True}, 'ivf': {'use_idf': False},
                                     'quantize': {'multiple_assignment': 1}, 'aggregate': {}},
                       'query_ivf': {'quantize': {'multiple_assignment': 5}, 'aggregate': {},
                                     'search': {'topk': None},
                                     'similarity': {'similarity_threshold': 0.0, 'alpha': 3.0}}}
        asmk_params['train_codebook']['codebook']['size'] = ckpt_args.nclusters
        self.asmk = asmk_method.ASMKMethod.initialize_untrained(asmk_params)
        self.asmk = self.asmk.train_codebook(None, cache_path=cache_codebook_fname)

    def __call__(self, input_imdir_or_imlistfile, outfile=None):
        # get impaths
        if isinstance(input_imdir_or_imlistfile, str):
            impaths = get_impaths_from_imdir_or_imlistfile(input_imdir_or_imlistfile)
        else:
            impaths = input_imdir_or_imlistfile  # we're assuming a list has been passed
        print(f'Found {len(impaths)} images')

        # build the database
        feat, ids = extract_local_features(self.model, impaths, self.imsize, tocpu=True, device=self.device)
        feat = feat.cpu().numpy()
        ids = ids.cpu().numpy()
        asmk_dataset = self.asmk.build_ivf(feat, ids)

        # we actually retrieve the same set of images
        metadata, query_ids, ranks, ranked_scores = asmk_dataset.query_ivf(feat, ids)

        # well ... scores are actually reordered according to ranks ...
        # so we redo it the other way around...
        scores = np.empty_like(ranked_scores)
        scores[np.arange(ranked_scores.shape[0])[:, None], ranks] = ranked_scores

        # save
        if outfile is not None:
            if os.path.isdir(os.path.dirname(outfile)):
                os.makedirs(os.path.dirname(outfile), exist_ok=True)
            np.save(outfile, scores)
            print(f'Scores matrix saved in {outfile}')
        return scores


def get_impaths_from_imdir_or_imlistfile(input_imdir_or_imlistfile):
    if os.path.isfile(input_imdir_or_imlistfile):
        with open(input_imdir_or_imlistfile, 'r') as fid:
            impaths = [l.strip() for l in fid.readlines()]
    else:
        impaths = [os.path.join(input_imdir_or_imlistfile, f) for f in sorted(os.listdir(input_imdir_or_imlistfile))
                   if f.lower().endswith(('.png', '.jpg', '.jpeg'))]
    return impaths


def knn_pairs(global_desc, k=20, use_gpu=True):
    """k nearest neighbours of every image by cosine similarity of its global descriptor.

    global_desc: (N, D) float32 numpy array, L2-normalised.
    Returns an (N, k) array of neighbour indices (self excluded) and their similarities.
    """
    global_desc = np.ascontiguousarray(global_desc, dtype=np.float32)
    index = faiss.IndexFlatIP(global_desc.shape[1])
    if use_gpu:
        res = faiss.StandardGpuResources()
        index = faiss.index_cpu_to_gpu(res, 0, index)
    index.add(global_desc)
    sims, nns = index.search(global_desc, k + 1)
    return nns[:, 1:], sims[:, 1:]


def make_pairs_retrieval(impaths, modelname, backbone=None, k=20, refine_with_asmk=True):
    """Retrieval-based scene graph: every image is paired with its k best neighbours."""
    retriever = Retriever(modelname, backbone=backbone)
    if refine_with_asmk:
        scores = retriever(impaths)
        nns = np.argsort(-scores, axis=1)[:, 1:k + 1]
    else:
        with torch.no_grad():
            feats, ids = extract_local_features(retriever.model, impaths, retriever.imsize, tocpu=True,
                                                device=retriever.device)
        n = len(impaths)
        glob = torch.stack([feats[ids == i].mean(0) for i in range(n)])
        glob = torch.nn.functional.normalize(glob, dim=-1).numpy()
        nns, _ = knn_pairs(glob, k=k)
    pairs = set()
    for i, row in enumerate(nns):
        for j in row:
            if i != int(j):
                pairs.add((min(i, int(j)), max(i, int(j))))
    return sorted(pairs)


if __name__ == '__main__':
    parser = argparse.ArgumentParser('Retrieval: build the image-pair graph of a folder')
    parser.add_argument('--model', required=True, help='retrieval checkpoint (e.g. *_trainingfree.pth)')
    parser.add_argument('--images', required=True, help='image folder or text file listing images')
    parser.add_argument('--k', type=int, default=20)
    parser.add_argument('--out', default='pairs.txt')
    args = parser.parse_args()

    impaths = get_impaths_from_imdir_or_imlistfile(args.images)
    pairs = make_pairs_retrieval(impaths, args.model, k=args.k)
    with open(args.out, 'w') as f:
        for i, j in pairs:
            f.write(f'{impaths[i]} {impaths[j]}\n')
    print(f'{len(pairs)} pairs written to {args.out}')
