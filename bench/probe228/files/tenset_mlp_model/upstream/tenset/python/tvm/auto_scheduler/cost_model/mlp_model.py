# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.

"""Cost model based on a multi-layer perceptron (MLP) over per-store features with segment sum.

Each schedule is a variable-length list of buffer-store feature vectors; the network encodes every
vector, sums them per schedule ("segment sum") and regresses the normalized throughput.
Trained with a LambdaRank loss so that only the ranking of candidates inside a task matters.
"""
import copy
import io
import logging
import pickle
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

from tvm.auto_scheduler.dataset import Dataset, LearningTask
from tvm.auto_scheduler.feature import (
    get_per_store_features_from_measure_pairs,
    get_per_store_features_from_states,
)
from tvm.auto_scheduler.measure_record import RecordReader

from .cost_model import PythonBasedModel
from .xgb_model import get_workload_embedding

logger = logging.getLogger("auto_scheduler")


class SegmentDataLoader:
    """Batches (segment_sizes, flattened features, labels) and moves them to `device`."""

    def __init__(
        self,
        dataset,
        batch_size,
        device,
        use_workload_embedding=True,
        fea_norm_vec=None,
        shuffle=False,
    ):
        self.device = device
        self.shuffle = shuffle
        self.number = len(dataset)
        self.batch_size = batch_size

        self.segment_sizes = torch.empty((self.number,), dtype=torch.int32)
        self.labels = torch.empty((self.number,), dtype=torch.float32)

        # Flatten features
        flatten_features = []
        ct = 0
        for task in dataset.features:
            throughputs = dataset.throughputs[task]
            self.labels[ct: ct + len(throughputs)] = torch.tensor(throughputs)
            task_embedding = None
            if use_workload_embedding:
                task_embedding = np.zeros((10,), dtype=np.float32)
                task_embedding[:9] = get_workload_embedding(task.workload_key)

            for row in dataset.features[task]:
                self.segment_sizes[ct] = len(row)
                if task_embedding is not None:
                    tmp = np.tile(task_embedding, (len(row), 1))
                    flatten_features.extend(np.concatenate([row, tmp], axis=1))
                else:
                    flatten_features.extend(row)
                ct += 1

        max_seg_len = self.segment_sizes.max()
        self.feature_offsets = (
            torch.cumsum(self.segment_sizes, 0, dtype=torch.int32) - self.segment_sizes
        )
        flatten_features = np.array(flatten_features, dtype=np.float32)
        self.features = torch.tensor(flatten_features)
        if fea_norm_vec is not None:
            self.normalize(fea_norm_vec)

        self.iter_order = self.pointer = None

    def normalize(self, norm_vector=None):
        if norm_vector is None:
            norm_vector = torch.ones((self.features.shape[1],))
            for i in range(self.features.shape[1]):
                max_val = self.features[:, i].max().item()
                if max_val > 0:
                    norm_vector[i] = max_val
        self.features /= norm_vector

        return norm_vector

    def __iter__(self):
        if self.shuffle:
            self.iter_order = torch.randperm(self.number)
        else:
            self.iter_order = torch.arange(self.number)
        self.pointer = 0

        return self

    def __next__(self):
        if self.pointer >= self.number:
            raise StopIteration

        batch_indices = self.iter_order[self.pointer: self.pointer + self.batch_size]
        self.pointer += self.batch_size
        return self._fetch_indices(batch_indices)

    def _fetch_indices(self, indices):
        segment_sizes = self.segment_sizes[indices]

        feature_offsets = self.feature_offsets[indices]
        feature_indices = torch.empty((segment_sizes.sum(),), dtype=torch.int32)
        ct = 0
        for offset, seg_size in zip(feature_offsets.numpy(), segment_sizes.numpy()):
            feature_indices[ct: ct + seg_size] = torch.arange(offset, offset + seg_size, 1)
            ct += seg_size

        features = self.features[feature_indices]
        labels = self.labels[indices]
        return (x.to(self.device, non_blocking=True) for x in (segment_sizes, features, labels))

    def __len__(self):
        return self.number


class SegmentSumMLPModule(nn.Module):
    def __init__(self, in_dim, hidden_dim, out_dim, use_norm=False, add_sigmoid=False):
        super().__init__()

        self.segment_encoder = nn.Sequential(
            nn.Linear(in_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
        )

        self.add_sigmoid = add_sigmoid

        if use_norm:
            self.norm = nn.BatchNorm1d(hidden_dim)
        else:
            self.norm = torch.nn.Identity()

        self.l0 = nn.Sequential(
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
        )
        self.l1 = nn.Sequential(
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.Linear(hidden_dim, out_dim),
        )

    def freeze_for_fine_tuning(self):
        for x in self.segment_encoder.parameters():
            x.requires_grad_(False)

    def forward(self, segment_sizes, features, params=None):
        n_seg = segment_sizes.shape[0]
        device = features.device

        segment_sizes = segment_sizes.long()

        features = self.segment_encoder(features)
        segment_indices = torch.repeat_interleave(
            torch.arange(n_seg, device=device), segment_sizes
        )

        n_dim = features.shape[1]
        segment_sum = torch.scatter_add(
            torch.zeros((n_seg, n_dim), dtype=features.dtype, device=device),
            0,
            segment_indices.view(-1, 1).expand(-1, n_dim),
            features,
        )
        output = self.norm(segment_sum)
        output = self.l0(output) + output
        output = self.l1(output) + output
        output = self.decoder(output).squeeze()

        if self.add_sigmoid:
            output = torch.sigmoid(output)

        return output


def make_net(params):
    if params["type"] == "SegmentSumMLP":
        return SegmentSumMLPModule(
            params["in_dim"], params["hidden_dim"], params["out_dim"],
            add_sigmoid=params.get("add_sigmoid", False),
        )
    else:
        raise ValueError("Invalid type: " + params["type"])


def moving_average(average, update):
    if average is None:
        return update
    else:
        return average * 0.95 + update * 0.05


class MLPModelInternal:
    def __init__(self, device=None, few_shot_learning="base_only", use_workload_embedding=True,
                 loss_type="lambdaRankLoss"):
        if device is None:
            if torch.cuda.device_count():
                device = "cuda:0"
            else:
                device = "cpu"
        logger.info("MLP cost model on %s", device)

        # Common parameters
        self.net_params = {
            "type": "SegmentSumMLP",
            "in_dim": 164 + (10 if use_workload_embedding else 0),
            "hidden_dim": 256,
            "out_dim": 1,
        }

        self.loss_func = torch.nn.MSELoss()
        self.net_params["add_sigmoid"] = True
        if loss_type == "rmse":
            self.loss_func = torch.nn.MSELoss()
        elif loss_type == "rankNetLoss":
            self.loss_func = RankNetLoss()
            self.net_params["add_sigmoid"] = False
        elif loss_type == "lambdaRankLoss":
            self.loss_func = LambdaRankLoss()
            self.net_params["add_sigmoid"] = False

        self.n_epoch = 150
        self.lr = 7e-4
        self.batch_size = 512
        self.infer_batch_size = 4096
        self.wd = 1e-6
        self.device = device
        self.print_per_epoches = 5

        self.few_shot_learning = few_shot_learning
        self.use_workload_embedding = use_workload_embedding
        self.fea_norm_vec = None

        # Hold models for different tasks
        self.base_model = None
        self.local_model = {}

    def fit_base(self, train_set, valid_set=None, valid_train_set=None):
        if self.few_shot_learning == "local_only":
            self.base_model = None
        else:
            self.base_model = self._fit_a_model(train_set, valid_set, valid_train_set)

    def fit_local(self, train_set, valid_set=None):
        if self.few_shot_learning == "base_only":
            return
        elif self.few_shot_learning == "local_only_mix_task":
            local_model = self._fit_a_model(train_set, valid_set)
            for task in train_set.tasks():
                self.local_model[task] = local_model
        else:
            raise ValueError("Invalid few_shot_learning: " + self.few_shot_learning)

    def predict(self, dataset):
        ret = {}
        for task, features in dataset.features.items():
            model = self.local_model.get(task, self.base_model)
            if model is None:
                ret[task] = np.random.uniform(0, 1, (len(features),))
                continue
            preds = self._predict_a_task(model, task, features)
            ret[task] = preds
        return ret

    def _fit_a_model(self, train_set, valid_set=None, valid_train_set=None, n_epoch=None):
        logger.info("=" * 60 + "\nFit a net. Train size: %d", len(train_set))

        train_loader = SegmentDataLoader(
            train_set, self.batch_size, self.device, self.use_workload_embedding, shuffle=True
        )

        # Normalize features
        if self.fea_norm_vec is None:
            self.fea_norm_vec = train_loader.normalize()
        else:
            train_loader.normalize(self.fea_norm_vec)

        if valid_set:
            valid_loader = SegmentDataLoader(valid_set, self.infer_batch_size, self.device,
                                             self.use_workload_embedding, fea_norm_vec=self.fea_norm_vec)

        n_epoch = n_epoch or self.n_epoch
        early_stop = n_epoch // 6

        net = make_net(self.net_params).to(self.device)
        optimizer = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.wd)
        lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=n_epoch // 3, gamma=1)

        train_loss = None
        best_epoch = None
        best_train_loss = 1e10
        for epoch in range(n_epoch):
            tic = time.time()

            # train
            net.train()
            for batch, (segment_sizes, features, labels) in enumerate(train_loader):
                optimizer.zero_grad()
                loss = self.loss_func(net(segment_sizes, features), labels)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                optimizer.step()

                train_loss = moving_average(train_loss, loss.item())
            lr_scheduler.step()

            train_time = time.time() - tic

            if epoch % self.print_per_epoches == 0 or epoch == n_epoch - 1:
                if valid_set and valid_loader:
                    valid_loss = self._validate(net, valid_loader)
                else:
                    valid_loss = 0.0

                if self.loss_func == "rmse":
                    loss_msg = "Train RMSE: %.4f\tValid RMSE: %.4f" % (
                        np.sqrt(train_loss), np.sqrt(valid_loss))
                else:
                    loss_msg = "Train Loss: %.4f\tValid Loss: %.4f" % (train_loss, valid_loss)

                logger.info("Epoch: %d\tBatch: %d\t%s\tTrain Speed: %.0f",
                            epoch, batch, loss_msg, len(train_loader) / train_time)

            # Early stop
            if train_loss < best_train_loss:
                best_train_loss = train_loss
                best_epoch = epoch
            elif epoch - best_epoch >= early_stop:
                logger.info("Early stop. Best epoch: %d", best_epoch)
                break

        return net

    def _validate(self, model, valid_loader):
        model.eval()
        valid_losses = []

        for segment_sizes, features, labels in valid_loader:
            preds = model(segment_sizes, features)
            valid_losses.append(self.loss_func(preds, labels).item())

        return np.mean(valid_losses)

    def _predict_a_dataset(self, model, dataset):
        ret = {}
        for task, features in dataset.features.items():
            ret[task] = self._predict_a_task(model, task, features)
        return ret

    def _predict_a_task(self, model, task, features):
        if model is None:
            return np.zeros(len(features), dtype=np.float32)

        tmp_set = Dataset.create_one_task(task, features, np.zeros((len(features),)))

        preds = []
        for segment_sizes, features, labels in SegmentDataLoader(
                tmp_set, self.infer_batch_size, self.device,
                self.use_workload_embedding, fea_norm_vec=self.fea_norm_vec,
        ):
            preds.append(model(segment_sizes, features))
        return torch.cat(preds).detach().cpu().numpy()

    def load(self, filename):
        if self.device == "cpu":
            self.base_model = CPU_Unpickler(open(filename, "rb")).load()
        else:
            base_model = pickle.load(open(filename, "rb"))
            self.base_model = base_model.cuda() if torch.cuda.device_count() else base_model

    def save(self, filename):
        base_model = self.base_model.cpu() if self.base_model is not None else None
        with open(filename, "wb") as f:
            pickle.dump(base_model, f)


class CPU_Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "torch.storage" and name == "_load_from_bytes":
            return lambda b: torch.load(io.BytesIO(b), map_location="cpu")
        else:
            return super().find_class(module, name)


class RankNetLoss(torch.nn.Module):
    def forward(self, preds, labels):
        preds_diff = preds[:, None] - preds[None, :]
        labels_diff = (labels[:, None] > labels[None, :]).float()
        return torch.nn.functional.binary_cross_entropy_with_logits(preds_diff, labels_diff)


class LambdaRankLoss(torch.nn.Module):
    def lamdbaRank_scheme(self, G, D, *args):
        return torch.abs(torch.pow(D[:, :, None], -1.) - torch.pow(D[:, None, :], -1.)) * torch.abs(
            G[:, :, None] - G[:, None, :])

    def forward(self, preds, labels, k=None, eps=1e-10, mu=10., sigma=1., device=None):
        if device is None:
            device = "cuda:0" if torch.cuda.device_count() else "cpu"
        preds = preds[None, :]
        labels = labels[None, :]
        y_pred_sorted, indices_pred = preds.sort(descending=True, dim=-1)
        y_true_sorted, _ = labels.sort(descending=True, dim=-1)

        true_sorted_by_preds = torch.gather(labels, dim=1, index=indices_pred)
        true_diffs = true_sorted_by_preds[:, :, None] - true_sorted_by_preds[:, None, :]
        padded_pairs_mask = torch.isfinite(true_diffs)
        padded_pairs_mask = padded_pairs_mask & (true_diffs > 0)
        ndcg_at_k_mask = torch.zeros((preds.shape[1], preds.shape[1]), dtype=torch.bool, device=device)
        ndcg_at_k_mask[:k, :k] = 1

        true_sorted_by_preds.clamp_(min=0.)
        y_true_sorted.clamp_(min=0.)

        pos_idxs = torch.arange(1, preds.shape[1] + 1).to(device)
        D = torch.log2(1. + pos_idxs.float())[None, :]
        maxDCGs = torch.sum(((torch.pow(2, y_true_sorted) - 1) / D)[:, :k], dim=-1).clamp(min=eps)
        G = (torch.pow(2, true_sorted_by_preds) - 1) / maxDCGs[:, None]

        weights = self.lamdbaRank_scheme(G, D, mu, true_sorted_by_preds)

        scores_diffs = (y_pred_sorted[:, :, None] - y_pred_sorted[:, None, :]).clamp(min=-1e8, max=1e8)
        scores_diffs[torch.isnan(scores_diffs)] = 0.
        weighted_probas = (torch.sigmoid(sigma * scores_diffs).clamp(min=eps) ** weights).clamp(min=eps)
        losses = torch.log2(weighted_probas)
        masked_losses = losses[padded_pairs_mask & ndcg_at_k_mask]
        loss = -torch.sum(masked_losses)
        return loss


class MLPModel(PythonBasedModel):
    """The wrapper of MLPModelInternal. So we can use it in end-to-end search."""

    def __init__(self, few_shot_learning="base_only", disable_update=False):
        super().__init__()

        self.disable_update = disable_update
        self.model = MLPModelInternal(few_shot_learning=few_shot_learning)
        self.dataset = Dataset()

    def update(self, inputs, results):
        if self.disable_update or len(inputs) <= 0:
            return
        tic = time.time()
        self.dataset.update_from_measure_pairs(inputs, results)
        self.model.fit_base(self.dataset)
        logger.info("MLPModel Training time: %.2f s", time.time() - tic)

    def predict(self, task, states):
        features = get_per_store_features_from_states(states, task)
        if self.model is not None:
            learning_task = LearningTask(task.workload_key, str(task.target))
            eval_dataset = Dataset.create_one_task(learning_task, features, None)
            ret = self.model.predict(eval_dataset)[learning_task]
        else:
            ret = np.random.uniform(0, 1, (len(states),))

        # Predict 0 for invalid states that failed to be lowered.
        for idx, feature in enumerate(features):
            if feature.min() == feature.max() == 0:
                ret[idx] = float('-inf')

        return ret

    def update_from_file(self, file_name, n_lines=None):
        inputs, results = RecordReader(file_name).read_lines(n_lines)
        logger.info("MLPModel: Loaded %s measurement records from %s", len(inputs), file_name)
        self.update(inputs, results)

    def save(self, file_name: str):
        self.model.save(file_name)

    def load(self, file_name: str):
        if self.model is None:
            self.model = MLPModelInternal()
        self.model.load(file_name)
        self.num_warmup_sample = -1
