"""ALiPy experiment with a PyTorch MLP as the base learner.

ALiPy's ToolBox only needs an object with a scikit-learn style
fit / predict / predict_proba interface, so we wrap a small torch MLP.
Training runs on the GPU when one is available; the committee used by
QueryInstanceQBC is spread over all visible GPUs.

    python alipy_torch_mlp.py --dataset letter --n-folds 5 --n-queries 50
"""
import argparse
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import fetch_openml
from sklearn.preprocessing import StandardScaler, LabelEncoder

from alipy import ToolBox
from alipy.query_strategy import (QueryInstanceUncertainty, QueryInstanceRandom,
                                  QueryInstanceQBC, QueryInstanceGraphDensity)


class TorchMLPClassifier(BaseEstimator, ClassifierMixin):
    """sklearn-compatible MLP trained with Adam.

    Parameters
    ----------
    hidden : int
    epochs : int
    lr : float
    batch_size : int
    use_gpu : bool
        Train on cuda:`gpu_id` if CUDA is available.
    gpu_id : int
    """

    def __init__(self, hidden=256, epochs=30, lr=1e-3, batch_size=128, use_gpu=True, gpu_id=0,
                 weight_decay=1e-4, seed=0):
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.use_gpu = use_gpu
        self.gpu_id = gpu_id
        self.weight_decay = weight_decay
        self.seed = seed

    def _device(self):
        if self.use_gpu and torch.cuda.is_available():
            return torch.device("cuda:%d" % self.gpu_id)
        return torch.device("cpu")

    def _build(self, n_in, n_out):
        return nn.Sequential(
            nn.Linear(n_in, self.hidden), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(self.hidden, self.hidden), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(self.hidden, n_out))

    def fit(self, X, y):
        torch.manual_seed(self.seed)
        self.device_ = self._device()
        self.classes_ = np.unique(y)
        self._label_map = {c: i for i, c in enumerate(self.classes_)}
        y_idx = np.array([self._label_map[v] for v in y])
        self.model_ = self._build(X.shape[1], len(self.classes_)).to(self.device_)
        opt = torch.optim.Adam(self.model_.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        X_t = torch.as_tensor(X, dtype=torch.float32, device=self.device_)
        y_t = torch.as_tensor(y_idx, dtype=torch.long, device=self.device_)
        n = X_t.shape[0]
        self.model_.train()
        for ep in range(self.epochs):
            perm = torch.randperm(n, device=self.device_)
            for s in range(0, n, self.batch_size):
                idx = perm[s:s + self.batch_size]
                opt.zero_grad()
                loss = F.cross_entropy(self.model_(X_t[idx]), y_t[idx])
                loss.backward()
                opt.step()
        return self

    @torch.no_grad()
    def predict_proba(self, X):
        self.model_.eval()
        out = []
        for s in range(0, X.shape[0], 4096):
            xb = torch.as_tensor(X[s:s + 4096], dtype=torch.float32).to(self.device_)
            out.append(F.softmax(self.model_(xb), dim=1).cpu())
        return torch.cat(out).numpy()

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def __getstate__(self):
        # ALiPy deep-copies the model for every fold; keep weights on the CPU
        # in the pickled state so copies do not pile up on the GPU.
        state = self.__dict__.copy()
        if "model_" in state:
            state["model_"] = copy.deepcopy(self.model_).cpu()
        return state


def make_committee(n_members, **kw):
    n_gpu = max(torch.cuda.device_count(), 1)
    return [TorchMLPClassifier(gpu_id=i % n_gpu, seed=i, **kw) for i in range(n_members)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--n-folds", type=int, default=5)
    parser.add_argument("--n-queries", type=int, default=50)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--strategies", default="random,uncertainty,qbc,density")
    parser.add_argument("--save-dir", default="./alipy_results")
    parser.add_argument("--cpu", action="store_true", help="do not use CUDA even if present")
    args = parser.parse_args()

    data = fetch_openml(args.dataset, version=1, as_frame=False)
    X = StandardScaler().fit_transform(data.data.astype(np.float32))
    y = LabelEncoder().fit_transform(data.target)

    os.makedirs(args.save_dir, exist_ok=True)
    alibox = ToolBox(X=X, y=y, query_type='AllLabels', saving_path=args.save_dir)
    alibox.split_AL(test_ratio=0.3, initial_label_rate=0.02, split_count=args.n_folds)
    stopping_criterion = alibox.get_stopping_criterion('num_of_queries', args.n_queries)

    base = TorchMLPClassifier(use_gpu=not args.cpu)
    results = {}
    for strategy_name in args.strategies.split(","):
        results[strategy_name] = []
        for round_ in range(args.n_folds):
            train_idx, test_idx, label_ind, unlab_ind = alibox.get_split(round_)
            saver = alibox.get_stateio(round_)
            model = copy.deepcopy(base)

            if strategy_name == "random":
                strategy = QueryInstanceRandom(X, y)
            elif strategy_name == "uncertainty":
                strategy = QueryInstanceUncertainty(X, y, measure='entropy')
            elif strategy_name == "qbc":
                strategy = QueryInstanceQBC(X, y, disagreement='vote_entropy')
            elif strategy_name == "density":
                strategy = QueryInstanceGraphDensity(X, y, train_idx=train_idx)
            else:
                raise ValueError(strategy_name)

            model.fit(X=X[label_ind.index, :], y=y[label_ind.index])
            pred = model.predict(X[test_idx, :])
            accuracy = alibox.calc_performance_metric(y_true=y[test_idx], y_pred=pred,
                                                      performance_metric='accuracy_score')
            saver.set_initial_point(accuracy)

            while not stopping_criterion.is_stop():
                if strategy_name == "qbc":
                    committee = make_committee(3, use_gpu=not args.cpu, epochs=10)
                    select_ind = strategy.select(label_ind, unlab_ind, model=committee, batch_size=args.batch)
                elif strategy_name in ("uncertainty",):
                    select_ind = strategy.select(label_ind, unlab_ind, model=model, batch_size=args.batch)
                else:
                    select_ind = strategy.select(label_ind, unlab_ind, batch_size=args.batch)
                label_ind.update(select_ind)
                unlab_ind.difference_update(select_ind)

                model.fit(X=X[label_ind.index, :], y=y[label_ind.index])
                pred = model.predict(X[test_idx, :])
                accuracy = alibox.calc_performance_metric(y_true=y[test_idx], y_pred=pred,
                                                          performance_metric='accuracy_score')
                st = alibox.State(select_index=select_ind, performance=accuracy)
                saver.add_state(st)
                stopping_criterion.update_information(saver)

            stopping_criterion.reset()
            results[strategy_name].append(copy.deepcopy(saver))
            torch.cuda.empty_cache()

    analyser = alibox.get_experiment_analyser(x_axis='num_of_queries')
    for name, savers in results.items():
        analyser.add_method(method_name=name, method_results=savers)
    print(analyser)
    analyser.plot_learning_curves(title='%s (torch MLP)' % args.dataset, std_area=True,
                                  saving_path=os.path.join(args.save_dir, 'curves.png'))


if __name__ == "__main__":
    main()
