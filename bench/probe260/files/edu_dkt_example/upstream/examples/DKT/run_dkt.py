# coding: utf-8
# Train / evaluate the EduKTM DKT model on ASSISTments 2009-2010 (skill builder, corrected).
#
#   python prepare_dataset.py          # writes ../../data/2009_skill_builder_data_corrected/*.npy
#   python run_dkt.py --epoch 10
#
import argparse
import logging
import os

import numpy as np
import torch
import torch.utils.data as Data

from EduKTM import DKT

NUM_QUESTIONS = 123
BATCH_SIZE = 64
HIDDEN_SIZE = 10
NUM_LAYERS = 1

logging.getLogger().setLevel(logging.INFO)


def get_data_loader(data_path, batch_size, shuffle=False):
    data = torch.FloatTensor(np.load(data_path))
    data_loader = Data.DataLoader(data, batch_size=batch_size, shuffle=shuffle)
    return data_loader


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="../../data/2009_skill_builder_data_corrected")
    parser.add_argument("--epoch", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--hidden_size", type=int, default=HIDDEN_SIZE)
    parser.add_argument("--num_layers", type=int, default=NUM_LAYERS)
    parser.add_argument("--batch_size", type=int, default=BATCH_SIZE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--params", default="dkt.params", help="where to save the trained parameters")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    train_loader = get_data_loader(os.path.join(args.data_dir, "train_data.npy"), args.batch_size, True)
    test_loader = get_data_loader(os.path.join(args.data_dir, "test_data.npy"), args.batch_size, False)

    dkt = DKT(NUM_QUESTIONS, args.hidden_size, args.num_layers)
    # the per-student loop in DKT.train is slow on CPU; the GPU makes it bearable
    dkt.train(train_loader, test_loader, epoch=args.epoch, device="cuda", lr=args.lr)
    dkt.save(args.params)

    dkt.load(args.params, device="cuda")
    auc = dkt.eval(test_loader, device="cuda")
    print("auc: %.6f" % auc)


if __name__ == "__main__":
    main()
