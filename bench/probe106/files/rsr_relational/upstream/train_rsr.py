# -*- coding: utf-8 -*-
"""
PyTorch re-implementation of "Temporal Relational Ranking for Stock Prediction"
(Feng et al., TOIS 2019): LSTM sequential embedding + temporal graph convolution over
sector / Wiki relations, trained with point-wise regression + pair-wise ranking loss.

Original TensorFlow code: https://github.com/fulifeng/Temporal_Relational_Stock_Ranking

    python train_rsr.py --market NASDAQ --relation wikidata --gpu 0
"""
import argparse
import copy
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from load_data import load_EOD_data, load_relation_data
from evaluator import evaluate

parser = argparse.ArgumentParser()
parser.add_argument("-p", "--path", default="../data/2013-01-01")
parser.add_argument("-m", "--market", default="NASDAQ", help="market name")
parser.add_argument("-t", "--tickers", help="fname for selected tickers")
parser.add_argument("-l", "--seq", type=int, default=16, help="length of historical sequence for feature")
parser.add_argument("-u", "--unit", type=int, default=64, help="number of hidden units in lstm")
parser.add_argument("-s", "--step", type=int, default=1, help="steps to make prediction")
parser.add_argument("-r", "--learning_rate", type=float, default=0.001, help="learning rate")
parser.add_argument("-a", "--alpha", type=float, default=1, help="alpha, the weight of ranking loss")
parser.add_argument("-g", "--gpu", type=int, default=0, help="use gpu")
parser.add_argument("-e", "--emb_file", type=str, default="NASDAQ_rank_lstm_seq-16_unit-64_2.csv.npy")
parser.add_argument("-rn", "--rel_name", type=str, default="wikidata", help="relation type: sector_industry or wikidata")
parser.add_argument("-ip", "--inner_prod", type=int, default=0)
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--seed", type=int, default=123456789)
args = parser.parse_args()

if args.tickers is None:
    args.tickers = args.market + "_tickers_qualify_dr-0.98_min-5_smooth.csv"

if args.gpu >= 0 and torch.cuda.is_available():
    torch.cuda.set_device(args.gpu)
    # every tensor created below lives on the GPU unless stated otherwise
    torch.set_default_tensor_type("torch.cuda.FloatTensor")
    USE_GPU = True
else:
    USE_GPU = False

random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)


class RankLSTM_Relational(nn.Module):
    def __init__(self, n_feat, units, rel_dim, inner_prod=False):
        super(RankLSTM_Relational, self).__init__()
        self.lstm = nn.LSTM(n_feat, units, batch_first=True)
        self.rel_weight = nn.Linear(rel_dim, 1)
        self.head_weight = nn.Linear(units, 1)
        self.tail_weight = nn.Linear(units, 1)
        self.fc = nn.Linear(units * 2, 1)
        self.inner_prod = inner_prod

    def forward(self, x, relation, rel_mask):
        # x: [N, seq, feat]; relation: [N, N, rel_dim]; rel_mask: [N, N]
        _, (h, _) = self.lstm(x)
        seq_emb = h[-1]  # [N, units]

        rel_w = self.rel_weight(relation).squeeze(-1)  # [N, N]
        if self.inner_prod:
            weight = torch.mm(seq_emb, seq_emb.t()) * rel_w
        else:
            head = self.head_weight(seq_emb)  # [N, 1]
            tail = self.tail_weight(seq_emb)  # [N, 1]
            weight = head + tail.t() + rel_w
        weight_masked = F.softmax(rel_mask + weight, dim=0)
        outputs_proped = torch.mm(weight_masked, seq_emb)

        out = self.fc(torch.cat([seq_emb, outputs_proped], dim=1))
        return F.leaky_relu(out)


def rank_loss(prediction, ground_truth, base_price, mask, alpha):
    return_ratio = torch.div(prediction - base_price, base_price)
    reg_loss = F.mse_loss(return_ratio * mask, ground_truth * mask)
    all_one = torch.ones(prediction.shape[0], 1)
    pre_pw_dif = return_ratio @ all_one.t() - all_one @ return_ratio.t()
    gt_pw_dif = all_one @ ground_truth.t() - ground_truth @ all_one.t()
    mask_pw = mask @ mask.t()
    r_loss = torch.mean(F.relu(pre_pw_dif * gt_pw_dif * mask_pw))
    loss = reg_loss + alpha * r_loss
    return loss, reg_loss, r_loss, return_ratio


class ReRaLSTM:
    def __init__(self, data_path, market_name, tickers_fname, relation_name, emb_fname, parameters, steps=1,
                 epochs=50, batch_size=None, flat=False, gpu=False, in_pro=False):
        self.data_path = data_path
        self.market_name = market_name
        self.tickers_fname = tickers_fname
        self.relation_name = relation_name
        self.tickers = np.genfromtxt(os.path.join(data_path, "..", tickers_fname), dtype=str, delimiter="\t",
                                     skip_header=False)
        print("#tickers selected:", len(self.tickers))
        self.eod_data, self.mask_data, self.gt_data, self.price_data = load_EOD_data(
            data_path, market_name, self.tickers, steps
        )

        # relation data
        rname_tail = {"sector_industry": "_industry_relation.npy", "wikidata": "_wiki_relation.npy"}
        self.rel_encoding, self.rel_mask = load_relation_data(
            os.path.join(self.data_path, "..", "relation", self.relation_name, self.market_name + rname_tail[self.relation_name])
        )
        print("relation encoding shape:", self.rel_encoding.shape)
        print("relation mask shape:", self.rel_mask.shape)

        self.embedding = np.load(os.path.join(self.data_path, "..", "pretrain", emb_fname))
        print("embedding shape:", self.embedding.shape)

        self.parameters = copy.copy(parameters)
        self.steps = steps
        self.epochs = epochs
        self.flat = flat
        self.inner_prod = in_pro
        self.batch_size = len(self.tickers) if batch_size is None else batch_size

        self.valid_index = 756
        self.test_index = 1008
        self.trade_dates = self.mask_data.shape[1]
        self.fea_dim = 5
        self.gpu = gpu

    def get_batch(self, offset=None):
        if offset is None:
            offset = random.randrange(0, self.valid_index)
        seq_len = self.parameters["seq"]
        mask_batch = self.mask_data[:, offset: offset + seq_len + self.steps]
        mask_batch = np.min(mask_batch, axis=1)
        return (
            self.eod_data[:, offset:offset + seq_len, :],
            np.expand_dims(mask_batch, axis=1),
            np.expand_dims(self.price_data[:, offset + seq_len - 1], axis=1),
            np.expand_dims(self.gt_data[:, offset + seq_len + self.steps - 1], axis=1),
        )

    def to_tensor(self, ary):
        t = Variable(torch.from_numpy(np.asarray(ary, dtype=np.float32)))
        return t.cuda() if self.gpu else t

    def train(self):
        model = RankLSTM_Relational(self.fea_dim, self.parameters["unit"], self.rel_encoding.shape[-1], self.inner_prod)
        if self.gpu:
            model = model.cuda()
        optimizer = torch.optim.Adam(model.parameters(), lr=self.parameters["lr"])

        relation = self.to_tensor(self.rel_encoding)
        rel_mask = torch.cuda.FloatTensor(self.rel_mask) if self.gpu else torch.FloatTensor(self.rel_mask)

        best_valid_perf = {"mse": np.inf, "mrrt": 0.0, "btl": 0.0}
        best_test_perf = {"mse": np.inf, "mrrt": 0.0, "btl": 0.0}
        best_valid_loss = np.inf
        best_state = None

        batch_offsets = np.arange(start=0, stop=self.valid_index, dtype=int)
        for epoch in range(self.epochs):
            t1 = time.time()
            np.random.shuffle(batch_offsets)
            tra_loss, tra_reg_loss, tra_rank_loss = 0.0, 0.0, 0.0
            model.train()
            for j in range(self.valid_index - self.parameters["seq"] - self.steps + 1):
                eod_batch, mask_batch, price_batch, gt_batch = self.get_batch(batch_offsets[j])
                optimizer.zero_grad()
                prediction = model(self.to_tensor(eod_batch), relation, rel_mask)
                cur_loss, cur_reg_loss, cur_rank_loss, _ = rank_loss(
                    prediction, self.to_tensor(gt_batch), self.to_tensor(price_batch), self.to_tensor(mask_batch),
                    self.parameters["alpha"],
                )
                cur_loss.backward()
                optimizer.step()
                tra_loss += cur_loss.item()
                tra_reg_loss += cur_reg_loss.item()
                tra_rank_loss += cur_rank_loss.item()
            n_batches = self.valid_index - self.parameters["seq"] - self.steps + 1
            print("Train Loss:", tra_loss / n_batches, tra_reg_loss / n_batches, tra_rank_loss / n_batches)

            val_loss, val_perf = self.evaluate_range(model, relation, rel_mask, self.valid_index, self.test_index)
            test_loss, test_perf = self.evaluate_range(model, relation, rel_mask, self.test_index, self.trade_dates)
            print("Valid loss:", val_loss, "Valid performance:", val_perf)
            print("Test loss:", test_loss, "Test performance:", test_perf)

            if val_loss < best_valid_loss:
                best_valid_loss = val_loss
                best_valid_perf = copy.copy(val_perf)
                best_test_perf = copy.copy(test_perf)
                best_state = copy.deepcopy(model.state_dict())
                print("Better valid loss:", best_valid_loss)
            t4 = time.time()
            print("epoch:", epoch, ("time: %.4f " % (t4 - t1)))
            if self.gpu:
                torch.cuda.empty_cache()

        print("\nBest Valid performance:", best_valid_perf)
        print("\tBest Test performance:", best_test_perf)
        torch.save(best_state, "rsr_%s_%s_best.pt" % (self.market_name, self.relation_name))
        return best_valid_perf, best_test_perf

    @torch.no_grad()
    def evaluate_range(self, model, relation, rel_mask, start, end):
        model.eval()
        seq = self.parameters["seq"]
        n = end - start
        pred = np.zeros([len(self.tickers), n], dtype=float)
        gt = np.zeros([len(self.tickers), n], dtype=float)
        mask = np.zeros([len(self.tickers), n], dtype=float)
        total_loss = 0.0
        for cur_offset in range(start - seq - self.steps + 1, end - seq - self.steps + 1):
            eod_batch, mask_batch, price_batch, gt_batch = self.get_batch(cur_offset)
            prediction = model(self.to_tensor(eod_batch), relation, rel_mask)
            cur_loss, _, _, cur_rr = rank_loss(
                prediction, self.to_tensor(gt_batch), self.to_tensor(price_batch), self.to_tensor(mask_batch),
                self.parameters["alpha"],
            )
            total_loss += cur_loss.item()
            col = cur_offset - (start - seq - self.steps + 1)
            pred[:, col] = cur_rr[:, 0].cpu().numpy()
            gt[:, col] = gt_batch[:, 0]
            mask[:, col] = mask_batch[:, 0]
        return total_loss / n, evaluate(pred, gt, mask)


if __name__ == "__main__":
    parameters = {"seq": int(args.seq), "unit": int(args.unit), "lr": float(args.learning_rate),
                  "alpha": float(args.alpha)}
    print("arguments:", args)
    print("parameters:", parameters)

    RR_LSTM = ReRaLSTM(
        data_path=args.path,
        market_name=args.market,
        tickers_fname=args.tickers,
        relation_name=args.rel_name,
        emb_fname=args.emb_file,
        parameters=parameters,
        steps=1,
        epochs=args.epochs,
        batch_size=None,
        gpu=USE_GPU,
        in_pro=args.inner_prod,
    )
    pred_all = RR_LSTM.train()
