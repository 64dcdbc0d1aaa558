# coding: utf-8
# Neural Cognitive Diagnosis (NCDM) on the a0910 split of ASSISTments, with EduCDM.
#
#   python run_ncdm.py --device cuda:0 --epoch 5
#
import argparse
import json
import logging
import os

import numpy as np
import pandas as pd
import torch
from torch.utils.data import TensorDataset, DataLoader

from EduCDM import NCDM


def parse_args():
    parser = argparse.ArgumentParser(description="NCDM on a0910")
    parser.add_argument("--data_dir", type=str, default="../../data/a0910")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epoch", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--device", type=str, default="cuda:0", help="cuda:N or cpu")
    parser.add_argument("--save", type=str, default="ncdm.snapshot")
    parser.add_argument("--seed", type=int, default=2022)
    return parser.parse_args()


def transform(user, item, item2knowledge, score, batch_size, knowledge_n):
    knowledge_emb = torch.zeros((len(item), knowledge_n))
    for idx in range(len(item)):
        knowledge_emb[idx][np.array(item2knowledge[item[idx]]) - 1] = 1.0

    data_set = TensorDataset(
        torch.tensor(user, dtype=torch.int64) - 1,  # (1, user_n) to (0, user_n-1)
        torch.tensor(item, dtype=torch.int64) - 1,  # (1, item_n) to (0, item_n-1)
        knowledge_emb,
        torch.tensor(score, dtype=torch.float32)
    )
    return DataLoader(data_set, batch_size=batch_size, shuffle=True)


def load_split(data_dir):
    train_data = pd.read_csv(os.path.join(data_dir, "train.csv"))
    valid_data = pd.read_csv(os.path.join(data_dir, "valid.csv"))
    test_data = pd.read_csv(os.path.join(data_dir, "test.csv"))
    df_item = pd.read_csv(os.path.join(data_dir, "item.csv"))
    item2knowledge = {}
    knowledge_set = set()
    for i, s in df_item.iterrows():
        item_id, knowledge_codes = s['item_id'], list(set(eval(s['knowledge_code'])))
        item2knowledge[item_id] = knowledge_codes
        knowledge_set.update(knowledge_codes)
    return train_data, valid_data, test_data, item2knowledge, knowledge_set


def main():
    args = parse_args()
    logging.getLogger().setLevel(logging.INFO)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        logging.warning("CUDA is not available, falling back to CPU")
        args.device = "cpu"
    if args.device.startswith("cuda"):
        torch.cuda.manual_seed_all(args.seed)
        logging.info("training on %s (%s)" % (args.device, torch.cuda.get_device_name(args.device)))

    train_data, valid_data, test_data, item2knowledge, knowledge_set = load_split(args.data_dir)
    user_n = np.max([np.max(train_data['user_id']), np.max(valid_data['user_id']), np.max(test_data['user_id'])])
    item_n = np.max([np.max(train_data['item_id']), np.max(valid_data['item_id']), np.max(test_data['item_id'])])
    knowledge_n = np.max(list(knowledge_set))
    logging.info("users=%d items=%d knowledge=%d" % (user_n, item_n, knowledge_n))

    train_set, valid_set, test_set = [
        transform(data["user_id"], data["item_id"], item2knowledge, data["score"], args.batch_size, knowledge_n)
        for data in [train_data, valid_data, test_data]
    ]

    cdm = NCDM(knowledge_n, item_n, user_n)
    cdm.train(train_set, valid_set, epoch=args.epoch, device=args.device, lr=args.lr)
    cdm.save(args.save)

    cdm.load(args.save)
    auc, accuracy = cdm.eval(test_set, device=args.device)
    print("auc: %.6f, accuracy: %.6f" % (auc, accuracy))

    with open("ncdm_result.json", "w") as f:
        json.dump({"auc": auc, "accuracy": accuracy, "device": args.device}, f)


if __name__ == "__main__":
    main()
