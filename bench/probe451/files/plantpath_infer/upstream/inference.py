"""
Inference for Plant Pathology 2021: averages the 5 fold models (optionally several backbones)
with flip TTA and writes submission.csv in the space-separated multi-label format.
"""
import argparse
import glob
import os

import numpy as np
import pandas as pd
import timm
import torch
import yaml
from torch.utils.data import DataLoader
from tqdm import tqdm

from src.dataset import PlantTestDataset, get_transforms, LABELS
from src.utils import to_namespace

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def load_models(cfg, weights_dir):
    models = []
    for path in sorted(glob.glob(os.path.join(weights_dir, f'{cfg.model.name}_fold*_best.pth'))):
        model = timm.create_model(cfg.model.name, pretrained=False, num_classes=len(LABELS))
        state = torch.load(path, map_location='cuda')
        model.load_state_dict(state['model'])
        model.to(device).eval()
        models.append(model)
        print(f'loaded {os.path.basename(path)} (fold F1 {state["f1"]:.4f})')
    return models


@torch.no_grad()
def predict(models, loader, tta=4):
    all_preds = []
    for images in tqdm(loader):
        images = images.to(device)
        preds = torch.zeros(images.size(0), len(LABELS), device=device)
        with torch.cuda.amp.autocast():
            for model in models:
                views = [images, images.flip(-1), images.flip(-2), images.flip(-1).flip(-2)][:tta]
                for v in views:
                    preds += torch.sigmoid(model(v)).float()
        preds /= len(models) * min(tta, 4)
        all_preds.append(preds.cpu().numpy())
    return np.concatenate(all_preds)


def decode(preds, threshold):
    labels = []
    for p in preds:
        chosen = [LABELS[i] for i in np.where(p > threshold)[0]]
        if not chosen:
            chosen = [LABELS[int(np.argmax(p))]]
        if 'healthy' in chosen and len(chosen) > 1:
            chosen.remove('healthy')
        labels.append(' '.join(chosen))
    return labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--configs', nargs='+', default=['configs/effnet_b4_ns.yaml'])
    parser.add_argument('--weights', nargs='+', default=['./output/effnet_b4_ns_512'])
    parser.add_argument('--test_dir', default='../input/plant-pathology-2021-fgvc8/test_images')
    parser.add_argument('--out', default='submission.csv')
    args = parser.parse_args()

    test_files = sorted(os.listdir(args.test_dir))
    ensemble = np.zeros((len(test_files), len(LABELS)), dtype=np.float32)
    threshold = 0.4
    for cfg_path, wdir in zip(args.configs, args.weights):
        with open(cfg_path) as f:
            cfg = to_namespace(yaml.safe_load(f))
        threshold = cfg.train.threshold
        ds = PlantTestDataset(test_files, args.test_dir, transforms=get_transforms(cfg, 'valid'))
        loader = DataLoader(ds, batch_size=cfg.inference.batch_size, shuffle=False,
                            num_workers=4, pin_memory=True)
        models = load_models(cfg, wdir)
        ensemble += predict(models, loader, tta=cfg.inference.tta)
        del models
        torch.cuda.empty_cache()
    ensemble /= len(args.configs)

    sub = pd.DataFrame({'image': test_files, 'labels': decode(ensemble, threshold)})
    sub.to_csv(args.out, index=False)
    print(sub.head())


if __name__ == '__main__':
    main()
