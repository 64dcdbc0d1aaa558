"""Landmark recognition inference: ensemble of sub-center ArcFace models + kNN re-ranking
against the GLDv2 train set (the "private" recognition pipeline).

    python predict.py --data-dir /raid/GLDv2 --model-dir ./weights --sub-csv submission.csv
"""
import argparse
import gc
import os

import cv2
import faiss
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from dataset import get_transforms
from models import Effnet_Landmark, ResNest101_Landmark, RexNet20_Landmark

device = torch.device('cuda')
batch_size = 64
num_workers = 8
TOPK = 5
CLS_TOP_K = 5

MODELS = [
    ('b7ns_final_256_400k', 'tf_efficientnet_b7_ns', 256, Effnet_Landmark),
    ('b6ns_final_256_400k', 'tf_efficientnet_b6_ns', 256, Effnet_Landmark),
    ('nest101_final_256_400k', 'nest101', 256, ResNest101_Landmark),
    ('rex20_final_256_400k', 'rex20', 256, RexNet20_Landmark),
]


class LandmarkDataset(Dataset):
    def __init__(self, csv, split, mode, transform=None):
        self.csv = csv.reset_index()
        self.split = split
        self.mode = mode
        self.transform = transform

    def __len__(self):
        return self.csv.shape[0]

    def __getitem__(self, index):
        row = self.csv.iloc[index]
        image = cv2.imread(row.filepath)[:, :, ::-1]
        if self.transform is not None:
            res = self.transform(image=image)
            image = res['image'].astype(np.float32)
        else:
            image = image.astype(np.float32)
        image = image.transpose(2, 0, 1)
        if self.mode == 'test':
            return torch.tensor(image)
        return torch.tensor(image), torch.tensor(row.landmark_id)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data-dir', type=str, default='/raid/GLDv2')
    parser.add_argument('--model-dir', type=str, default='./weights')
    parser.add_argument('--sub-csv', type=str, default='submission.csv')
    parser.add_argument('--knn', type=str, default='torch', choices=['torch', 'faiss'],
                        help='kNN backend: chunked torch.mm on the GPU, or a faiss GPU index')
    parser.add_argument('--fp16', action='store_true', help='extract features with autocast')
    return parser.parse_args()


def load_model(kernel_type, enet_type, model_class, model_dir, out_dim):
    model = model_class(enet_type, out_dim=out_dim, load_pretrained=False)
    model_file = os.path.join(model_dir, f'{kernel_type}_fold0_final.pth')
    checkpoint = torch.load(model_file, map_location='cuda:0')
    state_dict = checkpoint['model_state_dict']
    state_dict = {k[7:] if k.startswith('module.') else k: state_dict[k] for k in state_dict.keys()}
    model.load_state_dict(state_dict, strict=True)
    model.eval()
    model.to(device)
    del checkpoint, state_dict
    return model


@torch.no_grad()
def extract_embeddings(model, loader, fp16=False):
    feats = []
    logits_list = []
    for img in tqdm(loader):
        img = img.to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=fp16):
            feat_b5 = model.extract(img)
            feat = F.normalize(model.swish(model.feat(feat_b5)))
            logits_m = model.metric_classify(feat)
        feats.append(feat.float().detach().cpu())
        logits_list.append(logits_m.float().softmax(1).topk(CLS_TOP_K, 1)[0].cpu())
    return torch.cat(feats), torch.cat(logits_list)


def knn_torch(query, gallery, k, chunk=1024):
    """Cosine kNN with the gallery resident on the GPU, queries streamed in chunks."""
    gallery = gallery.cuda().half()
    sims, idxs = [], []
    for s in range(0, query.shape[0], chunk):
        q = query[s:s + chunk].cuda().half()
        sim = torch.mm(q, gallery.t())
        v, i = sim.topk(k, dim=1)
        sims.append(v.float().cpu())
        idxs.append(i.cpu())
        del sim
    torch.cuda.empty_cache()  # drop the fp16 gallery copy before the next model
    return torch.cat(sims).numpy(), torch.cat(idxs).numpy()


def knn_faiss(query, gallery, k):
    res = faiss.StandardGpuResources()
    index = faiss.GpuIndexFlatIP(res, gallery.shape[1])
    index.add(gallery.numpy().astype(np.float32))
    sims, idxs = index.search(query.numpy().astype(np.float32), k)
    del index, res
    return sims, idxs


def main():
    args = parse_args()

    df = pd.read_csv(os.path.join(args.data_dir, 'train.csv'))
    df['filepath'] = df['id'].apply(lambda x: os.path.join(args.data_dir, 'train', x[0], x[1], x[2], f'{x}.jpg'))
    df_sub = pd.read_csv(os.path.join(args.data_dir, 'sample_submission.csv'))
    df_test = df_sub[['id']].copy()
    df_test['filepath'] = df_test['id'].apply(lambda x: os.path.join(args.data_dir, 'test', x[0], x[1], x[2], f'{x}.jpg'))
    landmark_id2idx = {landmark_id: idx for idx, landmark_id in enumerate(sorted(df['landmark_id'].unique()))}
    idx2landmark_id = {idx: landmark_id for landmark_id, idx in landmark_id2idx.items()}
    out_dim = len(landmark_id2idx)

    print('num GPUs:', torch.cuda.device_count(), torch.cuda.get_device_name(0))

    _, transforms_val = get_transforms(256)
    dataset_train = LandmarkDataset(df, 'train', 'test', transform=transforms_val)
    dataset_test = LandmarkDataset(df_test, 'test', 'test', transform=transforms_val)
    train_loader = DataLoader(dataset_train, batch_size=batch_size, num_workers=num_workers, pin_memory=True)
    test_loader = DataLoader(dataset_test, batch_size=batch_size, num_workers=num_workers, pin_memory=True)

    PRODS = []
    PREDS = []
    PRODS_M = []
    PREDS_M = []
    for kernel_type, enet_type, image_size, model_class in MODELS:
        model = load_model(kernel_type, enet_type, model_class, args.model_dir, out_dim)

        feats_train, _ = extract_embeddings(model, train_loader, args.fp16)
        feats_test, logits_test = extract_embeddings(model, test_loader, args.fp16)

        if args.knn == 'faiss':
            sims, idxs = knn_faiss(feats_test, feats_train, TOPK)
        else:
            sims, idxs = knn_torch(feats_test, feats_train, TOPK)

        PRODS.append(sims)
        PREDS.append(df['landmark_id'].values[idxs])
        PRODS_M.append(logits_test.numpy())

        del model, feats_train, feats_test
        gc.collect()
        torch.cuda.empty_cache()

    PRODS = np.concatenate(PRODS, 1)
    PREDS = np.concatenate(PREDS, 1)
    PRODS_M = np.mean(np.stack(PRODS_M), 0)

    # voting over the kNN results of every model
    pred_ids, pred_confs = [], []
    for i in range(PRODS.shape[0]):
        tmp = {}
        for pred, prod in zip(PREDS[i], PRODS[i]):
            tmp[pred] = tmp.get(pred, 0) + prod
        best = max(tmp.items(), key=lambda kv: kv[1])
        pred_ids.append(best[0])
        pred_confs.append(best[1] / len(MODELS))

    df_test['landmarks'] = [f'{pid} {conf:.6f}' for pid, conf in zip(pred_ids, pred_confs)]
    df_test[['id', 'landmarks']].to_csv(args.sub_csv, index=False)
    print('written', args.sub_csv, 'peak GPU memory %.1f GB' % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == '__main__':
    main()
