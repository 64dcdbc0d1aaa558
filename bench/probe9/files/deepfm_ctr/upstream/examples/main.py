"""DeepFM / Wide&Deep / FM on Criteo or Avazu (pytorch-fm layout, single file)."""
import argparse
import math
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import tqdm
from sklearn.metrics import roc_auc_score, log_loss
from torch.utils.data import DataLoader, Dataset


# ----------------------------------------------------------------------------- datasets
class CriteoTSV(Dataset):
    """Criteo display-ads TSV, already bucketised: label, 13 int fields, 26 categorical fields (hashed ids)."""

    NUM_INT, NUM_CAT = 13, 26

    def __init__(self, path, min_threshold=10, nrows=None):
        df = pd.read_csv(path, sep='\t', header=None, nrows=nrows)
        self.targets = df[0].values.astype(np.float32)
        fields = df.iloc[:, 1:].fillna(-1).values
        ints = fields[:, :self.NUM_INT].astype(np.float64)
        ints = np.where(ints > 2, np.floor(np.log(np.maximum(ints, 1)) ** 2), ints).astype(np.int64) + 1
        cats = fields[:, self.NUM_INT:]
        encoded = [ints[:, i] for i in range(self.NUM_INT)]
        self.field_dims = [int(c.max()) + 1 for c in encoded]
        for j in range(self.NUM_CAT):
            values, counts = np.unique(cats[:, j].astype(str), return_counts=True)
            keep = {v: k + 1 for k, v in enumerate(values[counts >= min_threshold])}
            col = np.array([keep.get(str(v), 0) for v in cats[:, j]], dtype=np.int64)
            encoded.append(col)
            self.field_dims.append(len(keep) + 1)
        self.items = np.stack(encoded, axis=1)
        self.field_dims = np.array(self.field_dims, dtype=np.int64)

    def __len__(self):
        return self.targets.shape[0]

    def __getitem__(self, index):
        return self.items[index], self.targets[index]


# ----------------------------------------------------------------------------- layers
class FeaturesLinear(nn.Module):
    def __init__(self, field_dims, output_dim=1):
        super().__init__()
        self.fc = nn.Embedding(int(sum(field_dims)), output_dim)
        self.bias = nn.Parameter(torch.zeros((output_dim,)))
        self.register_buffer('offsets', torch.as_tensor(np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)))

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        return torch.sum(self.fc(x), dim=1) + self.bias


class FeaturesEmbedding(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(int(sum(field_dims)), embed_dim)
        self.register_buffer('offsets', torch.as_tensor(np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)))
        nn.init.xavier_uniform_(self.embedding.weight.data)

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        return self.embedding(x)


@torch.jit.script
def fm_interaction(x: torch.Tensor) -> torch.Tensor:
    square_of_sum = torch.sum(x, dim=1) ** 2
    sum_of_square = torch.sum(x ** 2, dim=1)
    return 0.5 * torch.sum(square_of_sum - sum_of_square, dim=1, keepdim=True)


class MultiLayerPerceptron(nn.Module):
    def __init__(self, input_dim, embed_dims, dropout, output_layer=True):
        super().__init__()
        layers = []
        for embed_dim in embed_dims:
            layers.append(nn.Linear(input_dim, embed_dim))
            layers.append(nn.BatchNorm1d(embed_dim))
            layers.append(nn.ReLU())
            layers.append(nn.Dropout(p=dropout))
            input_dim = embed_dim
        if output_layer:
            layers.append(nn.Linear(input_dim, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


class DeepFactorizationMachineModel(nn.Module):
    """Guo et al., DeepFM: A Factorization-Machine based Neural Network for CTR Prediction, 2017."""

    def __init__(self, field_dims, embed_dim, mlp_dims, dropout):
        super().__init__()
        self.linear = FeaturesLinear(field_dims)
        self.embedding = FeaturesEmbedding(field_dims, embed_dim)
        self.embed_output_dim = len(field_dims) * embed_dim
        self.mlp = MultiLayerPerceptron(self.embed_output_dim, mlp_dims, dropout)

    def forward(self, x):
        embed_x = self.embedding(x)
        x = self.linear(x) + fm_interaction(embed_x) + self.mlp(embed_x.view(-1, self.embed_output_dim))
        return torch.sigmoid(x.squeeze(1))


class WideAndDeepModel(nn.Module):
    """Cheng et al., Wide & Deep Learning for Recommender Systems, 2016."""

    def __init__(self, field_dims, embed_dim, mlp_dims, dropout):
        super().__init__()
        self.linear = FeaturesLinear(field_dims)
        self.embedding = FeaturesEmbedding(field_dims, embed_dim)
        self.embed_output_dim = len(field_dims) * embed_dim
        self.mlp = MultiLayerPerceptron(self.embed_output_dim, mlp_dims, dropout)

    def forward(self, x):
        embed_x = self.embedding(x)
        x = self.linear(x) + self.mlp(embed_x.view(-1, self.embed_output_dim))
        return torch.sigmoid(x.squeeze(1))


def get_model(name, dataset):
    field_dims = dataset.field_dims
    if name == 'dfm':
        return DeepFactorizationMachineModel(field_dims, embed_dim=16, mlp_dims=(400, 400, 400), dropout=0.2)
    if name == 'wd':
        return WideAndDeepModel(field_dims, embed_dim=16, mlp_dims=(400, 400, 400), dropout=0.2)
    raise ValueError('unknown model name: ' + name)


# ----------------------------------------------------------------------------- training
class EarlyStopper(object):
    def __init__(self, num_trials, save_path):
        self.num_trials = num_trials
        self.trial_counter = 0
        self.best_accuracy = 0
        self.save_path = save_path

    def is_continuable(self, model, accuracy):
        if accuracy > self.best_accuracy:
            self.best_accuracy = accuracy
            self.trial_counter = 0
            torch.save(model, self.save_path)
            return True
        elif self.trial_counter + 1 < self.num_trials:
            self.trial_counter += 1
            return True
        return False


def train(model, optimizer, data_loader, criterion, device, log_interval=100):
    model.train()
    total_loss = 0
    tk0 = tqdm.tqdm(data_loader, smoothing=0, mininterval=1.0)
    for i, (fields, target) in enumerate(tk0):
        fields, target = fields.to(device, non_blocking=True), target.to(device, non_blocking=True)
        y = model(fields)
        loss = criterion(y, target.float())
        model.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        if (i + 1) % log_interval == 0:
            tk0.set_postfix(loss=total_loss / log_interval)
            total_loss = 0


def test(model, data_loader, device):
    model.eval()
    targets, predicts = list(), list()
    with torch.no_grad():
        for fields, target in tqdm.tqdm(data_loader, smoothing=0, mininterval=1.0):
            fields, target = fields.to(device), target.to(device)
            y = model(fields)
            targets.extend(target.tolist())
            predicts.extend(y.tolist())
    return roc_auc_score(targets, predicts), log_loss(targets, predicts)


def main(dataset_path, model_name, epoch, learning_rate, batch_size, weight_decay, device, save_dir):
    device = torch.device(device)
    dataset = CriteoTSV(dataset_path)
    train_length = int(len(dataset) * 0.8)
    valid_length = int(len(dataset) * 0.1)
    test_length = len(dataset) - train_length - valid_length
    train_dataset, valid_dataset, test_dataset = torch.utils.data.random_split(
        dataset, (train_length, valid_length, test_length))
    train_data_loader = DataLoader(train_dataset, batch_size=batch_size, num_workers=8, pin_memory=True)
    valid_data_loader = DataLoader(valid_dataset, batch_size=batch_size, num_workers=8)
    test_data_loader = DataLoader(test_dataset, batch_size=batch_size, num_workers=8)

    model = get_model(model_name, dataset).to(device)
    if torch.cuda.device_count() > 1:
        print('using', torch.cuda.device_count(), 'GPUs with DataParallel')
        model = nn.DataParallel(model)
    criterion = torch.nn.BCELoss()
    optimizer = torch.optim.Adam(params=model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    early_stopper = EarlyStopper(num_trials=2, save_path=f'{save_dir}/{model_name}.pt')
    for epoch_i in range(epoch):
        start = time.time()
        train(model, optimizer, train_data_loader, criterion, device)
        auc, logloss = test(model, valid_data_loader, device)
        print('epoch:', epoch_i, 'validation: auc:', auc, 'logloss:', logloss, f'({time.time() - start:.0f}s)')
        if not early_stopper.is_continuable(model, auc):
            print(f'validation: best auc: {early_stopper.best_accuracy}')
            break
    auc, logloss = test(model, test_data_loader, device)
    print(f'test auc: {auc}  test logloss: {logloss}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset_path', help='criteo/train.txt')
    parser.add_argument('--model_name', default='dfm', choices=['dfm', 'wd'])
    parser.add_argument('--epoch', type=int, default=100)
    parser.add_argument('--learning_rate', type=float, default=0.001)
    parser.add_argument('--batch_size', type=int, default=2048)
    parser.add_argument('--weight_decay', type=float, default=1e-6)
    parser.add_argument('--device', default='cuda:0')
    parser.add_argument('--save_dir', default='chkpt')
    args = parser.parse_args()
    os.makedirs(args.save_dir, exist_ok=True)
    main(args.dataset_path, args.model_name, args.epoch, args.learning_rate, args.batch_size,
         args.weight_decay, args.device, args.save_dir)
