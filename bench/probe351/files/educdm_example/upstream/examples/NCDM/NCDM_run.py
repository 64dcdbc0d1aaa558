# coding: utf-8
# 2021/4/1 @ WangFei
# Script version of examples/NCDM/NCDM.ipynb: train NCDM on the a0910 subset of ASSISTments 2009-2010.
import argparse
import logging

import numpy as np
import pandas as pd
import torch
from torch.utils.data import TensorDataset, DataLoader

from EduCDM import NCDM, KaNCD, GDIRT

logging.getLogger().setLevel(logging.INFO)


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
    return DataLoader(data_set, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True)


def strip_knowledge(loader):
    """Re-wrap a (user, item, knowledge, score) loader as (user, item, score) for IRT."""
    user, item, _, score = loader.dataset.tensors
    return DataLoader(TensorDataset(user, item, score), batch_size=loader.batch_size, shuffle=False)


def main(args):
    train_data = pd.read_csv("../../data/a0910/train.csv")
    valid_data = pd.read_csv("../../data/a0910/valid.csv")
    test_data = pd.read_csv("../../data/a0910/test.csv")
    df_item = pd.read_csv("../../data/a0910/item.csv")
    item2knowledge = {}
    knowledge_set = set()
    for i, s in df_item.iterrows():
        item_id, knowledge_codes = s['item_id'], list(set(eval(s['knowledge_code'])))
        item2knowledge[item_id] = knowledge_codes
        knowledge_set.update(knowledge_codes)

    user_n = np.max(train_data['user_id'])
    item_n = np.max([np.max(train_data['item_id']), np.max(valid_data['item_id']), np.max(test_data['item_id'])])
    knowledge_n = np.max(list(knowledge_set))

    train_set, valid_set, test_set = [
        transform(data["user_id"], data["item_id"], item2knowledge, data["score"], args.batch_size, knowledge_n)
        for data in [train_data, valid_data, test_data]
    ]

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        logging.warning("CUDA requested but not available, falling back to CPU")
        args.device = "cpu"

    results = {}
    for name in args.models.split(","):
        if name == "ncdm":
            cdm = NCDM(knowledge_n, item_n, user_n)
            cdm.train(train_set, valid_set, epoch=args.epoch, device=args.device)
        elif name == "kancd":
            cdm = KaNCD(exer_n=item_n, student_n=user_n, knowledge_n=knowledge_n, mf_type="gmf", dim=20)
            cdm.train(train_set, valid_set, epoch_n=args.epoch, device=args.device, lr=0.002)
        elif name == "irt":
            # GD-IRT ignores the knowledge vector; its loader only needs (user, item, score)
            cdm = GDIRT(user_n, item_n, value_range=4.0, a_range=1)
            cdm.train(strip_knowledge(train_set), strip_knowledge(valid_set), epoch=args.epoch, device=args.device)
        else:
            raise ValueError(name)
        snapshot = "%s.snapshot" % name
        cdm.save(snapshot)
        cdm.load(snapshot)
        if name == "irt":
            auc, accuracy = cdm.eval(strip_knowledge(test_set), device=args.device)
        else:
            auc, accuracy = cdm.eval(test_set, device=args.device)
        results[name] = (auc, accuracy)
        print("%s auc: %.6f, accuracy: %.6f" % (name, auc, accuracy))

        if name == "ncdm":
            proficiency = cdm.diagnose(list(range(min(10, user_n))), device=args.device)
            print("knowledge proficiency of the first students:\n", np.round(proficiency, 3))

    print(pd.DataFrame(results, index=["auc", "accuracy"]).T)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epoch", type=int, default=3)
    parser.add_argument("--models", type=str, default="ncdm,kancd,irt")
    parser.add_argument("--device", type=str, default="cuda:0",
                        help='torch device for NCDM, e.g. "cuda:0" or "cpu"')
    main(parser.parse_args())
