# Copyright (c) 2023-present, SUSTech-ML.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#
# Split conformal prediction on ImageNet with a pretrained ResNet-101, comparing
# THR / APS / RAPS / SAPS score functions and the split, class-wise and clustered
# predictors.  Logits are cached on disk so repeated runs only pay for calibration.

import argparse
import os
import time

import torch
import torchvision
import torchvision.datasets as dset
import torchvision.transforms as trn
from torch.utils.data import DataLoader, random_split

from torchcp.classification.predictor import SplitPredictor, ClassWisePredictor, ClusteredPredictor
from torchcp.classification.score import THR, APS, RAPS, SAPS, TOPK
from torchcp.classification.utils.metrics import Metrics
from torchcp.utils import fix_randomness

SCORES = {
    "THR": lambda a: THR(),
    "APS": lambda a: APS(score_type="softmax", randomized=True),
    "RAPS": lambda a: RAPS(penalty=a.raps_penalty, kreg=a.raps_kreg),
    "SAPS": lambda a: SAPS(weight=a.saps_weight),
    "TOPK": lambda a: TOPK(),
}
PREDICTORS = {"split": SplitPredictor, "classwise": ClassWisePredictor, "cluster": ClusteredPredictor}


def build_dataset(root, n_cal, seed):
    mean = (0.485, 0.456, 0.406)
    std = (0.229, 0.224, 0.225)
    transform = trn.Compose([trn.Resize(256), trn.CenterCrop(224), trn.ToTensor(), trn.Normalize(mean, std)])
    dataset = dset.ImageFolder(os.path.join(root, "val"), transform)
    n_test = len(dataset) - n_cal
    g = torch.Generator().manual_seed(seed)
    cal_dataset, test_dataset = random_split(dataset, [n_cal, n_test], generator=g)
    return cal_dataset, test_dataset


@torch.no_grad()
def cached_logits(model, loader, cache_path, device):
    if os.path.exists(cache_path):
        obj = torch.load(cache_path)
        return obj["logits"], obj["labels"]
    logits, labels = [], []
    for x, y in loader:
        logits.append(model(x.to(device)).float().cpu())
        labels.append(y)
    logits, labels = torch.cat(logits), torch.cat(labels)
    torch.save({"logits": logits, "labels": labels}, cache_path)
    return logits, labels


def main():
    parser = argparse.ArgumentParser(description="conformal prediction on ImageNet (torchcp)")
    parser.add_argument("--data_root", default=os.path.expanduser("~/data/imagenet"))
    parser.add_argument("--cache_dir", default=".cache/torchcp")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--n_cal", type=int, default=10000)
    parser.add_argument("--score", default="APS", choices=list(SCORES))
    parser.add_argument("--predictor", default="split", choices=list(PREDICTORS))
    parser.add_argument("--raps_penalty", type=float, default=0.001)
    parser.add_argument("--raps_kreg", type=int, default=5)
    parser.add_argument("--saps_weight", type=float, default=0.2)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    fix_randomness(seed=args.seed)
    os.makedirs(args.cache_dir, exist_ok=True)

    #######################################
    # Loading ImageNet dataset and a pytorch model
    #######################################
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model_name = "ResNet101"
    model = torchvision.models.resnet101(weights="IMAGENET1K_V1", progress=True)
    model.to(device)
    model.eval()

    cal_dataset, test_dataset = build_dataset(args.data_root, args.n_cal, args.seed)
    cal_loader = DataLoader(cal_dataset, batch_size=args.batch_size, shuffle=False, num_workers=8, pin_memory=True)
    test_loader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=False, num_workers=8, pin_memory=True)

    cal_logits, cal_labels = cached_logits(model, cal_loader, os.path.join(args.cache_dir, f"{model_name}_cal_{args.seed}.pt"), device)
    test_logits, test_labels = cached_logits(model, test_loader, os.path.join(args.cache_dir, f"{model_name}_test_{args.seed}.pt"), device)
    print(f"cached logits: cal {tuple(cal_logits.shape)}  test {tuple(test_logits.shape)}")

    #######################################
    # A standard process of conformal prediction
    #######################################
    score_function = SCORES[args.score](args)
    predictor = PREDICTORS[args.predictor](
        score_function=score_function, model=model, temperature=args.temperature, alpha=args.alpha, device="cuda"
    )
    print(f"Experiment--Data : ImageNet, Model : {model_name}, Score : {args.score}, "
          f"Predictor : {args.predictor}, Alpha : {args.alpha}")

    # full pipeline once, straight from images (slow path, sanity check)
    t0 = time.time()
    predictor.calibrate(cal_loader, args.alpha)
    torch.cuda.synchronize()
    print(f"calibration from images took {time.time() - t0:.1f}s")
    print(predictor.evaluate(test_loader))

    # repeated trials on cached logits (fast path)
    metrics = Metrics()
    covs, sizes = [], []
    for trial in range(args.trials):
        perm = torch.randperm(len(cal_logits) + len(test_logits), generator=torch.Generator().manual_seed(trial))
        all_logits = torch.cat([cal_logits, test_logits])[perm].cuda()
        all_labels = torch.cat([cal_labels, test_labels])[perm].cuda()
        c_log, t_log = all_logits[: args.n_cal], all_logits[args.n_cal:]
        c_lab, t_lab = all_labels[: args.n_cal], all_labels[args.n_cal:]

        predictor.calculate_threshold(c_log, c_lab, args.alpha)
        prediction_sets = predictor.predict_with_logits(t_log)
        cov = metrics("coverage_rate")(prediction_sets, t_lab)
        size = metrics("average_size")(prediction_sets, t_lab)
        covs.append(cov)
        sizes.append(size)
        print(f"trial {trial}: coverage {cov:.4f}  avg size {size:.3f}")

    covs, sizes = torch.tensor(covs), torch.tensor(sizes)
    print(f"coverage {covs.mean():.4f} +- {covs.std():.4f}   size {sizes.mean():.3f} +- {sizes.std():.3f}")


if __name__ == "__main__":
    main()
