"""Evaluate DeepDerm, HAM10000 and ModelDerm-style classifiers on the
Diverse Dermatology Images (DDI) dataset, stratified by Fitzpatrick skin type.

Usage:
    python eval_ddi.py --model_dir ./DDI-models --data_dir ./DDI --eval_dir ./results --use_gpu
"""
import argparse
import os
import json

import gdown
import numpy as np
import pandas as pd
import torch
import torchvision
from torch.utils.data import DataLoader
from tqdm import tqdm
from sklearn.metrics import roc_auc_score, accuracy_score, f1_score

from ddi_dataset import DDI_Dataset, test_transform


# google drive paths to our released models
MODEL_WEB_PATHS = {
    'HAM10000': 'https://drive.google.com/uc?id=1ToT8ifJ5lcWh8Ix19ifWlMcMz9UZXcmo',
    'DeepDerm': 'https://drive.google.com/uc?id=1OLt11htu9bMPgsE33vZuDiU5Xe4UqKVJ',
}

# thresholds chosen on the validation split of the original training data
MODEL_THRESHOLDS = {
    'HAM10000': 0.733,
    'DeepDerm': 0.687,
}


def load_model(model_name, save_dir="DDI-models", download=True):
    """Load the model and download if necessary. Saves model to provided save
    directory."""

    os.makedirs(save_dir, exist_ok=True)
    model_path = os.path.join(save_dir, f"{model_name.lower()}.pth")
    if download:
        if not os.path.exists(model_path):
            gdown.download(MODEL_WEB_PATHS[model_name], model_path)

    if model_name == "HAM10000":
        model = torchvision.models.inception_v3(init_weights=False, pretrained=False, transform_input=True)
        model.fc = torch.nn.Linear(2048, 7)
        model.AuxLogits.fc = torch.nn.Linear(768, 7)
        model.load_state_dict(torch.load(model_path, map_location=torch.device('cpu')))
    elif model_name == "DeepDerm":
        model = torchvision.models.inception_v3(init_weights=False, pretrained=False, transform_input=True)
        model.fc = torch.nn.Linear(2048, 2)
        model.AuxLogits.fc = torch.nn.Linear(768, 2)
        model.load_state_dict(torch.load(model_path))
    else:
        raise NotImplementedError(f"Model {model_name} not recognized.")

    model._ddi_name = model_name
    model._ddi_threshold = MODEL_THRESHOLDS[model_name]
    model._ddi_web_path = MODEL_WEB_PATHS[model_name]
    return model


def get_malignant_prob(model_name, probs):
    """HAM10000 is a 7-way classifier; collapse to malignant vs benign."""
    if model_name == "HAM10000":
        # akiec, bcc, mel are the malignant classes (indices 0, 1, 4)
        return probs[:, 0] + probs[:, 1] + probs[:, 4]
    return probs[:, 1]


def eval_model(model, dataset, use_gpu=False, show_plot=False):
    """Evaluate loaded model on provided image dataset. Assumes supplied model
    outputs (benign, malignant) logits."""

    device = torch.device("cuda" if use_gpu else "cpu")
    if use_gpu:
        model = model.cuda()
    model = model.eval()

    dataloader = DataLoader(dataset, batch_size=32, shuffle=False,
                            num_workers=0, pin_memory=use_gpu)

    paths, preds, targets, skin_tones, names = [], [], [], [], []
    with torch.no_grad():
        for i, (path, images, target, skin_tone) in enumerate(tqdm(dataloader)):
            images = images.to(device)
            logits = model(images)
            probs = torch.nn.functional.softmax(logits, dim=1)
            p_mal = get_malignant_prob(model._ddi_name, probs)
            preds.append(p_mal.cpu().numpy())
            targets.append(target.numpy())
            skin_tones.extend(list(skin_tone))
            paths.extend(list(path))

    preds = np.concatenate(preds)
    targets = np.concatenate(targets)

    eval_results = {
        'paths': paths,
        'preds': preds.tolist(),
        'targets': targets.tolist(),
        'skin_tones': skin_tones,
        'model_name': model._ddi_name,
        'threshold': model._ddi_threshold,
    }
    return eval_results


def summarize(eval_results):
    """ROC-AUC, accuracy and F1 overall and per Fitzpatrick group (I-II, III-IV, V-VI)."""
    df = pd.DataFrame({
        'pred': eval_results['preds'],
        'target': eval_results['targets'],
        'skin_tone': eval_results['skin_tones'],
    })
    thr = eval_results['threshold']
    rows = []
    for name, sub in [('all', df),
                      ('FST I-II', df[df.skin_tone == 12]),
                      ('FST III-IV', df[df.skin_tone == 34]),
                      ('FST V-VI', df[df.skin_tone == 56])]:
        if sub.target.nunique() < 2:
            continue
        hard = (sub.pred >= thr).astype(int)
        rows.append({
            'subset': name,
            'n': len(sub),
            'auc': roc_auc_score(sub.target, sub.pred),
            'accuracy': accuracy_score(sub.target, hard),
            'f1': f1_score(sub.target, hard),
        })
    return pd.DataFrame(rows)


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description="DDI evaluation")
    parser.add_argument('--model_dir', type=str, default="./DDI-models",
                        help="File path for where to save models.")
    parser.add_argument('--model', type=str, default="DeepDerm",
                        choices=["DeepDerm", "HAM10000"],
                        help="Model to evaluate.")
    parser.add_argument('--no_download', action='store_true', default=False,
                        help="Set to disable downloading models.")
    parser.add_argument('--data_dir', type=str, default="DDI",
                        help="Folder containing dataset.")
    parser.add_argument('--use_gpu', action='store_true', default=False,
                        help="Use GPU for evaluation.")
    parser.add_argument('--gpu', type=str, default='0',
                        help="Which GPU to use together with --use_gpu.")
    parser.add_argument('--eval_dir', type=str, default="DDI-results",
                        help="Folder to save evaluation results.")
    args = parser.parse_args()

    if args.use_gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
        print(f"Evaluating on GPU {args.gpu}: {torch.cuda.get_device_name(0)}")

    model = load_model(args.model, save_dir=args.model_dir, download=not args.no_download)
    dataset = DDI_Dataset(root=args.data_dir, transform=test_transform)
    eval_results = eval_model(model, dataset, use_gpu=args.use_gpu)

    os.makedirs(args.eval_dir, exist_ok=True)
    with open(os.path.join(args.eval_dir, f"{args.model}_results.json"), "w") as f:
        json.dump(eval_results, f)
    summary = summarize(eval_results)
    print(summary.to_string(index=False))
    summary.to_csv(os.path.join(args.eval_dir, f"{args.model}_summary.csv"), index=False)
