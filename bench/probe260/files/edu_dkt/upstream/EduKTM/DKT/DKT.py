# coding: utf-8
# 2021/4/23 @ zengxiaonan

import logging

import numpy as np
import torch
import tqdm
from torch import nn
from torch.autograd import Variable
from sklearn.metrics import roc_auc_score
from EduKTM import KTM


class Net(nn.Module):
    def __init__(self, num_questions, hidden_size, num_layers):
        super(Net, self).__init__()
        self.hidden_dim = hidden_size
        self.layer_dim = num_layers
        self.rnn = nn.RNN(num_questions * 2, hidden_size, num_layers, batch_first=True, nonlinearity='tanh')
        self.fc = nn.Linear(self.hidden_dim, num_questions)

    def forward(self, x):
        h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim, device=x.device))
        out, _ = self.rnn(x, h0)
        res = torch.sigmoid(self.fc(out))
        return res


def process_raw_pred(raw_question_matrix, raw_pred, num_questions: int) -> tuple:
    questions = torch.nonzero(raw_question_matrix)[1:, 1] % num_questions
    length = questions.shape[0]
    pred = raw_pred[: length]
    pred = pred.gather(1, questions.view(-1, 1)).flatten()
    truth = torch.nonzero(raw_question_matrix)[1:, 1] // num_questions
    return pred, truth


class DKT(KTM):
    def __init__(self, num_questions, hidden_size, num_layers):
        super(DKT, self).__init__()
        self.num_questions = num_questions
        self.dkt_model = Net(num_questions, hidden_size, num_layers)

    def train(self, train_data, test_data=None, *, epoch: int, device="cpu", lr=0.002) -> ...:
        """
        Args:
            train_data: DataLoader yielding one-hot interaction tensors of shape (batch, seq_len, 2 * num_questions)
            test_data: same format, optional
            epoch: number of epochs
            device: "cpu" or "cuda" / "cuda:N"
            lr: learning rate of Adam
        """
        loss_function = nn.BCELoss()
        self.dkt_model = self.dkt_model.to(device)
        optimizer = torch.optim.Adam(self.dkt_model.parameters(), lr)

        for e in range(epoch):
            all_pred, all_target = torch.Tensor([]).to(device), torch.Tensor([]).to(device)
            self.dkt_model.train()
            for batch in tqdm.tqdm(train_data, "Epoch %s" % e):
                batch = batch.to(device)
                integrated_pred = self.dkt_model(batch)
                batch_size = batch.shape[0]
                for student in range(batch_size):
                    pred, truth = process_raw_pred(batch[student], integrated_pred[student], self.num_questions)
                    all_pred = torch.cat([all_pred, pred])
                    all_target = torch.cat([all_target, truth.float()])

            loss = loss_function(all_pred, all_target)
            # back propagation
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            print("[Epoch %d] LogisticLoss: %.6f" % (e, loss))

            if test_data is not None:
                auc = self.eval(test_data, device=device)
                print("[Epoch %d] auc: %.6f" % (e, auc))

    def eval(self, test_data, device="cpu") -> float:
        self.dkt_model = self.dkt_model.to(device)
        self.dkt_model.eval()
        y_pred = torch.Tensor([]).to(device)
        y_truth = torch.Tensor([]).to(device)
        with torch.no_grad():
            for batch in tqdm.tqdm(test_data, "evaluating"):
                batch = batch.to(device)
                integrated_pred = self.dkt_model(batch)
                batch_size = batch.shape[0]
                for student in range(batch_size):
                    pred, truth = process_raw_pred(batch[student], integrated_pred[student], self.num_questions)
                    y_pred = torch.cat([y_pred, pred])
                    y_truth = torch.cat([y_truth, truth.float()])

        return roc_auc_score(y_truth.cpu().detach().numpy(), y_pred.cpu().detach().numpy())

    def save(self, filepath):
        torch.save(self.dkt_model.state_dict(), filepath)
        logging.info("save parameters to %s" % filepath)

    def load(self, filepath, device="cpu"):
        self.dkt_model.load_state_dict(torch.load(filepath, map_location=device))
        logging.info("load parameters from %s" % filepath)
