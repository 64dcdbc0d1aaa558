"""
Fine-tune a DINO ViT for image retrieval with open-metric-learning, in plain PyTorch
(no Lightning), then validate it with query/gallery retrieval metrics.

    python examples/train_val_retrieval.py --dataset-root data/CARS196 --epochs 5 --amp
"""
import argparse
import random
import time

import numpy as np
import torch
from torch.optim import Adam
from torch.utils.data import DataLoader

from oml import datasets as d
from oml.const import CATEGORIES_COLUMN
from oml.inference import inference
from oml.losses import TripletLossWithMiner
from oml.metrics import calc_retrieval_metrics_rr
from oml.miners import AllTripletsMiner
from oml.models import ViTExtractor
from oml.registry import get_transforms_for_pretrained
from oml.retrieval import AdaptiveThresholding, RetrievalResults
from oml.samplers import BalanceSampler
from oml.utils import get_mock_images_dataset

device = "cuda" if torch.cuda.is_available() else "cpu"

# matmuls in the ViT are fine in TF32; metrics are computed in fp32 anyway
torch.backends.cuda.matmul.allow_tf32 = True


def set_global_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset-root", type=str, default="")
    parser.add_argument("--weights", type=str, default="vits16_dino")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--n-labels", type=int, default=8)
    parser.add_argument("--n-instances", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--compile", action="store_true", help="torch.compile the extractor")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--num-workers", type=int, default=8)
    return parser.parse_args()


def get_datasets(dataset_root, transform):
    if dataset_root:
        df = d.read_df(dataset_root, "df.csv")
        df_train = df[df["split"] == "train"].reset_index(drop=True)
        df_val = df[df["split"] == "validation"].reset_index(drop=True)
    else:
        df_train, df_val = get_mock_images_dataset(global_paths=True)
    train = d.ImageLabeledDataset(df_train, transform=transform, dataset_root=dataset_root or None)
    val = d.ImageQueryGalleryLabeledDataset(df_val, transform=transform, dataset_root=dataset_root or None)
    return train, val


def training(model, train, optimizer, criterion, scaler, args):
    model.train()
    sampler = BalanceSampler(train.get_labels(), n_labels=args.n_labels, n_instances=args.n_instances)
    loader = DataLoader(
        train,
        batch_sampler=sampler,
        num_workers=args.num_workers,
        pin_memory=True,
        pin_memory_device="cuda",
    )
    torch.cuda.reset_peak_memory_stats()
    start = time.time()
    for step, batch in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            embeddings = model(batch["input_tensors"].to(device, non_blocking=True))
            loss = criterion(embeddings, batch["labels"].to(device, non_blocking=True))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if step % 10 == 0:
            print(step, criterion.last_logs)
    torch.cuda.synchronize()
    print(
        "epoch time {:.1f}s, peak memory {:.2f} GB".format(
            time.time() - start, torch.cuda.max_memory_allocated() / 2**30
        )
    )


@torch.no_grad()
def validation(model, val, args):
    model.eval()
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    embeddings = inference(model, val, batch_size=64, num_workers=args.num_workers, use_fp16=args.amp)
    end_evt.record()
    torch.cuda.synchronize()  # wait for the events before reading them
    print("inference: {:.1f} img/s".format(len(val) / (start_evt.elapsed_time(end_evt) / 1000)))
    rr = RetrievalResults.from_embeddings(embeddings, val, n_items=10)
    rr = AdaptiveThresholding(n_std=2).process(rr)
    metrics = calc_retrieval_metrics_rr(rr, map_top_k=(5,), cmc_top_k=(1, 5))
    if CATEGORIES_COLUMN in val.df:
        print("categories:", val.df[CATEGORIES_COLUMN].nunique())
    print(metrics)
    return metrics


def main():
    args = parse_args()
    set_global_seed(args.seed)
    model = ViTExtractor.from_pretrained(args.weights).to(device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if torch.cuda.device_count() > 1:
        # quick multi-GPU: replicate the extractor on every visible card
        model = torch.nn.DataParallel(model)
    transform, _ = get_transforms_for_pretrained(args.weights)
    train, val = get_datasets(args.dataset_root, transform)

    optimizer = Adam(model.parameters(), lr=args.lr)
    criterion = TripletLossWithMiner(0.1, AllTripletsMiner(), need_logs=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    for epoch in range(args.epochs):
        print(f"epoch {epoch}")
        training(model, train, optimizer, criterion, scaler, args)
        validation(model, val, args)

    torch.save(model.state_dict(), "extractor_finetuned.pth")


if __name__ == "__main__":
    main()
