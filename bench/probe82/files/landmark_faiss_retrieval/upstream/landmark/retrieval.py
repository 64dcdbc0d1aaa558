"""Google Landmark Retrieval 2021 - embedding extraction + kNN re-ranking.

Embeddings: DOLG-style EfficientNet/ResNeSt backbones with GeM pooling and an ArcFace head
(the head is only used in training). Retrieval: exact inner-product search for the private
index (~76k images) and IVF-PQ over the 1.5M-image GLDv2 train set for the re-ranking step.
"""
import argparse
import os

import faiss
import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T
from tqdm import tqdm

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


class GeM(nn.Module):
    def __init__(self, p=3.0, eps=1e-6, p_trainable=True):
        super().__init__()
        self.p = nn.Parameter(torch.ones(1) * p) if p_trainable else p
        self.eps = eps

    def forward(self, x):
        return F.avg_pool2d(x.clamp(min=self.eps).pow(self.p), (x.size(-2), x.size(-1))).pow(1.0 / self.p)


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class LandmarkNet(nn.Module):
    def __init__(self, backbone, embedding_size=512, pretrained=False):
        super().__init__()
        self.backbone = timm.create_model(backbone, pretrained=pretrained, num_classes=0, global_pool="")
        self.pool = GeM()
        self.neck = nn.Sequential(
            nn.Linear(self.backbone.num_features, embedding_size, bias=True),
            nn.BatchNorm1d(embedding_size),
            Mish(),
        )

    def forward(self, x):
        x = self.backbone(x)
        x = self.pool(x).flatten(1)
        return self.neck(x)


class ImageDataset(Dataset):
    def __init__(self, paths, size):
        self.paths = paths
        self.tf = T.Compose([
            T.Resize((size, size)),
            T.ToTensor(),
            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.tf(Image.open(self.paths[i]).convert("RGB"))


@torch.no_grad()
@torch.cuda.amp.autocast()
def extract(model, loader, scales=(0.75, 1.0, 1.25)):
    feats = []
    for images in tqdm(loader, desc="extract"):
        images = images.cuda()
        emb = 0
        for s in scales:
            x = images if s == 1.0 else F.interpolate(images, scale_factor=s, mode="bilinear", align_corners=False)
            emb = emb + F.normalize(model(x).float(), dim=1)
        feats.append(F.normalize(emb, dim=1).cpu().numpy())
    return np.concatenate(feats).astype(np.float32)


def load_model(backbone, ckpt, embedding_size=512):
    model = LandmarkNet(backbone, embedding_size)
    state = torch.load(ckpt, map_location="cpu")
    state = state.get("model", state)
    state = {k: v for k, v in state.items() if not k.startswith("head.")}
    model.load_state_dict(state, strict=True)
    return model.cuda().eval()


def exact_index(db):
    dim = db.shape[1]
    if faiss.get_num_gpus() > 0:
        res = faiss.StandardGpuResources()
        cfg = faiss.GpuIndexFlatConfig()
        cfg.useFloat16 = True
        cfg.device = 0
        index = faiss.GpuIndexFlatIP(res, dim, cfg)
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(db)
    return index


def ivfpq_index(db, nlist=4096, m=64, nprobe=64):
    dim = db.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFPQ(quantizer, dim, nlist, m, 8, faiss.METRIC_INNER_PRODUCT)
    co = faiss.GpuMultipleClonerOptions()
    co.useFloat16 = True
    co.shard = True
    index = faiss.index_cpu_to_all_gpus(index, co=co)
    sample = db[np.random.RandomState(0).choice(len(db), min(len(db), 500_000), replace=False)]
    index.train(sample)
    index.add(db)
    faiss.GpuParameterSpace().set_index_parameter(index, "nprobe", nprobe)
    return index


def alpha_query_expansion(q_emb, db_emb, index, k=3, alpha=3.0):
    """alpha-QE (Radenovic et al.): replace each query by a similarity-weighted mean of itself and its top-k."""
    sims, nbrs = index.search(q_emb, k)
    weights = np.clip(sims, 0, None) ** alpha
    expanded = q_emb + (weights[..., None] * db_emb[nbrs]).sum(1)
    return expanded / np.linalg.norm(expanded, axis=1, keepdims=True)


def database_augmentation(db_emb, k=2, chunk=65536):
    """DBA: average every database vector with its k nearest database neighbours (incl. itself)."""
    index = exact_index(db_emb)
    out = np.empty_like(db_emb)
    for s in range(0, len(db_emb), chunk):
        sims, nbrs = index.search(db_emb[s:s + chunk], k)
        w = np.clip(sims, 0, None)[..., None]
        v = (w * db_emb[nbrs]).sum(1)
        out[s:s + chunk] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def rerank(q_emb, idx_emb, train_emb, train_labels, topk=100, alpha=0.5):
    """Discount index neighbours that are also close to many train landmarks (non-landmark suppression)."""
    index = exact_index(idx_emb)
    sims, nbrs = index.search(q_emb, topk)
    tr_index = ivfpq_index(train_emb)
    tr_sims, _ = tr_index.search(idx_emb, 10)
    penalty = tr_sims.mean(1)
    sims = sims - alpha * penalty[nbrs]
    order = np.argsort(-sims, axis=1)
    return np.take_along_axis(nbrs, order, 1), np.take_along_axis(sims, order, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backbone", default="tf_efficientnet_b6_ns")
    p.add_argument("--ckpt", required=True)
    p.add_argument("--size", type=int, default=640)
    p.add_argument("--data", default="../input/landmark-retrieval-2021")
    p.add_argument("--train-emb", default="../input/gldv2-train-embeddings/b6_640.npy")
    args = p.parse_args()

    test = pd.read_csv(os.path.join(args.data, "test.csv"))
    index = pd.read_csv(os.path.join(args.data, "index.csv"))
    to_path = lambda split, i: os.path.join(args.data, split, i[0], i[1], i[2], f"{i}.jpg")  # noqa: E731
    model = load_model(args.backbone, args.ckpt)
    q_loader = DataLoader(ImageDataset([to_path("test", i) for i in test.id], args.size), batch_size=32, num_workers=4)
    i_loader = DataLoader(ImageDataset([to_path("index", i) for i in index.id], args.size), batch_size=32, num_workers=4)
    q_emb = extract(model, q_loader)
    i_emb = extract(model, i_loader)
    del model
    torch.cuda.empty_cache()

    i_emb = database_augmentation(i_emb, k=2)
    q_emb = alpha_query_expansion(q_emb, i_emb, exact_index(i_emb), k=3)
    train_emb = np.load(args.train_emb).astype(np.float32)
    nbrs, _ = rerank(q_emb, i_emb, train_emb, None)
    test["images"] = [" ".join(index.id.values[n]) for n in nbrs]
    test[["id", "images"]].to_csv("submission.csv", index=False)


if __name__ == "__main__":
    main()
