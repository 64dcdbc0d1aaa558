"""
Evaluate an EigenPlaces model (from torch.hub or from a local .pth) on a VPR test set
laid out as <folder>/database/*.jpg and <folder>/queries/*.jpg, with UTM coordinates in the
file names (@utm_east@utm_north@...).

Example:
    python eval.py --backbone ResNet50 --fc_output_dim 2048 --test_set_folder /data/sf_xl/processed/test
"""

import sys
import time
import argparse
import logging
import multiprocessing
from datetime import datetime

import faiss
import numpy as np
import torch
from torch.utils.data import DataLoader
from torch.utils.data.dataset import Subset
from tqdm import tqdm

import commons
from datasets.test_dataset import TestDataset

RECALL_VALUES = [1, 5, 10, 20]


def parse_arguments():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--backbone", type=str, default="ResNet50",
                        choices=["VGG16", "ResNet18", "ResNet50", "ResNet101", "ResNet152"])
    parser.add_argument("--fc_output_dim", type=int, default=2048,
                        help="Output dimension of final fully connected layer")
    parser.add_argument("--resume_model", type=str, default="torchhub",
                        help="'torchhub' to download the trained weights, or a path to a .pth file")
    parser.add_argument("--test_set_folder", type=str, required=True)
    parser.add_argument("--infer_batch_size", type=int, default=32)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--positive_dist_threshold", type=int, default=25)
    parser.add_argument("--image_size", type=int, nargs=2, default=[512, 512])
    parser.add_argument("--measure_latency", action="store_true",
                        help="also report the mean forward time of a single image")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save_dir", type=str, default="default")
    return parser.parse_args()


def load_model(args):
    if args.resume_model == "torchhub":
        model = torch.hub.load("gmberton/eigenplaces", "get_trained_model",
                               backbone=args.backbone, fc_output_dim=args.fc_output_dim)
    else:
        from eigenplaces_model import eigenplaces_network
        model = eigenplaces_network.GeoLocalizationNet_(args.backbone, args.fc_output_dim)
        logging.info(f"Loading model from {args.resume_model}")
        state_dict = torch.load(args.resume_model, map_location="cpu")
        model.load_state_dict(state_dict)
    return model


@torch.inference_mode()
def compute_all_descriptors(args, model, eval_ds):
    all_descriptors = np.empty((len(eval_ds), args.fc_output_dim), dtype="float32")

    database_ds = Subset(eval_ds, list(range(eval_ds.database_num)))
    queries_ds = Subset(eval_ds, list(range(eval_ds.database_num, eval_ds.database_num + eval_ds.queries_num)))
    for subset, bs in [(database_ds, args.infer_batch_size), (queries_ds, 1)]:
        dl = DataLoader(subset, batch_size=bs, num_workers=args.num_workers, shuffle=False)
        for images, indices in tqdm(dl, ncols=100):
            descriptors = model(images.to(args.device))
            all_descriptors[indices.numpy(), :] = descriptors.cpu().numpy()
    return all_descriptors


def compute_recalls(eval_ds, all_descriptors):
    queries_descriptors = all_descriptors[eval_ds.database_num:]
    database_descriptors = all_descriptors[:eval_ds.database_num]

    faiss_index = faiss.IndexFlatL2(all_descriptors.shape[1])
    faiss_index.add(database_descriptors)
    _, predictions = faiss_index.search(queries_descriptors, max(RECALL_VALUES))

    positives_per_query = eval_ds.get_positives()
    recalls = np.zeros(len(RECALL_VALUES))
    for query_index, preds in enumerate(predictions):
        for i, n in enumerate(RECALL_VALUES):
            if np.any(np.in1d(preds[:n], positives_per_query[query_index])):
                recalls[i:] += 1
                break
    recalls = recalls / eval_ds.queries_num * 100
    return recalls


@torch.inference_mode()
def measure_latency(args, model, n_warmup=10, n_runs=50):
    x = torch.rand(1, 3, *args.image_size, device=args.device)
    for _ in range(n_warmup):
        model(x)
    timings = []
    for _ in range(n_runs):
        start = time.perf_counter()
        model(x)
        if args.device == "cuda":
            torch.cuda.synchronize()
        timings.append(time.perf_counter() - start)
    return 1000 * float(np.mean(timings)), 1000 * float(np.std(timings))


def main():
    args = parse_arguments()
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    start_time = datetime.now()
    args.output_folder = f"logs/{args.save_dir}/{start_time.strftime('%Y-%m-%d_%H-%M-%S')}"
    commons.make_deterministic(args.seed)
    commons.setup_logging(args.output_folder, console="info")
    logging.info(" ".join(sys.argv))
    logging.info(f"Arguments: {args}")
    logging.info(f"The outputs are being saved in {args.output_folder}")
    logging.info(f"Running on {args.device} with {multiprocessing.cpu_count()} CPUs")

    model = load_model(args)
    model = model.to(args.device).eval()

    test_ds = TestDataset(args.test_set_folder, queries_folder="queries",
                          positive_dist_threshold=args.positive_dist_threshold,
                          image_size=args.image_size)
    logging.info(f"Testing on {test_ds}")

    all_descriptors = compute_all_descriptors(args, model, test_ds)
    recalls = compute_recalls(test_ds, all_descriptors)
    recalls_str = ", ".join([f"R@{val}: {rec:.1f}" for val, rec in zip(RECALL_VALUES, recalls)])
    logging.info(f"{test_ds}: {recalls_str}")

    if args.measure_latency:
        mean_ms, std_ms = measure_latency(args, model)
        logging.info(f"Latency for a {args.image_size[0]}x{args.image_size[1]} image: "
                     f"{mean_ms:.2f} +- {std_ms:.2f} ms")

    logging.info(f"Done in {str(datetime.now() - start_time)[:-7]}")


if __name__ == "__main__":
    main()
