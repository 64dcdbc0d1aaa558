"""Truncated Monte-Carlo (TMC) and Gradient (G) Shapley for torch models.

PyTorch re-implementation of Ghorbani & Zou, "Data Shapley: Equitable
Valuation of Data for Machine Learning" (ICML 2019).  The original code
trains sklearn / TF models; here every marginal-contribution evaluation
fits a small torch model, so the permutations are farmed out to one worker
process per GPU.
"""
import os
import pickle
import time
import warnings

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

from dshap.models import return_model
from dshap.metrics import compute_metric

warnings.filterwarnings("ignore", category=UserWarning)


def _default_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


class DShap(object):

    def __init__(self, X, y, X_test, y_test, num_test, sources=None,
                 sample_weight=None, directory=None, problem='classification',
                 model_family='logistic', metric='accuracy', seed=None,
                 overwrite=False, device=None, n_workers=None, **kwargs):
        """
        Args:
            X: Data covariates
            y: Data labels
            X_test: Test+Held-out covariates
            y_test: Test+Held-out labels
            sources: An array or dictionary assiging each point to its group.
                If None, evey points gets its individual value.
            num_test: Number of data points used for evaluation metric.
            directory: Directory to save results and figures.
            problem: "Classification" or "Regression"(Not implemented yet.)
            model_family: The model family used for learning algorithm
            metric: Evaluation metric
            seed: Random seed. When running parallel monte-carlo samples,
                we initialize each with a different seed to prevent getting
                same permutations.
            device: torch device for the learning algorithm ("cuda", "cuda:1", "cpu").
            n_workers: number of TMC worker processes, one per visible GPU by default.
            **kwargs: Arguments of the model
        """
        if seed is not None:
            np.random.seed(seed)
            torch.manual_seed(seed)
        self.problem = problem
        self.model_family = model_family
        self.metric = metric
        self.directory = directory
        self.hidden_units = kwargs.get('hidden_layer_sizes', [])
        self.device = device or _default_device()
        if n_workers is None:
            n_workers = max(1, torch.cuda.device_count())
        self.n_workers = n_workers
        if self.model_family == 'logistic':
            self.hidden_units = []
        if self.directory is not None:
            if overwrite and os.path.exists(directory):
                for f in os.listdir(directory):
                    os.remove(os.path.join(directory, f))
            if not os.path.exists(directory):
                os.makedirs(directory)
                os.makedirs(os.path.join(directory, 'weights'))
                os.makedirs(os.path.join(directory, 'plots'))
        self._initialize_instance(X, y, X_test, y_test, num_test, sources, sample_weight)
        if len(set(self.y)) > 2:
            assert self.metric != 'f1', 'Invalid metric for multiclass!'
            assert self.metric != 'auc', 'Invalid metric for multiclass!'
        is_regression = (np.mean(self.y//1 == self.y) != 1)
        is_regression = is_regression or isinstance(self.y[0], np.float32)
        self.is_regression = is_regression or isinstance(self.y[0], np.float64)
        if self.is_regression:
            warnings.warn("Regression problem is no implemented.")
        self.model = return_model(self.model_family, device=self.device, **kwargs)
        self.random_score = self.init_score(self.metric)

    def _initialize_instance(self, X, y, X_test, y_test, num_test, sources=None, sample_weight=None):
        """Loads or creates sets of data."""
        if sources is None:
            sources = {i: np.array([i]) for i in range(len(X))}
        elif not isinstance(sources, dict):
            sources = {i: np.where(sources == i)[0] for i in set(sources)}
        self.sources = sources
        self.X_heldout, self.y_heldout = X_test[:-num_test], y_test[:-num_test]
        self.X_test, self.y_test = X_test[-num_test:], y_test[-num_test:]
        self.X, self.y = X, y
        self.sample_weight = sample_weight
        self.mem_tmc = np.zeros((0, self.X.shape[0]))
        self.mem_g = np.zeros((0, self.X.shape[0]))
        self.idxs_tmc = np.zeros((0, self.X.shape[0]), int)
        self.idxs_g = np.zeros((0, self.X.shape[0]), int)
        self.vals_loo = None

    def init_score(self, metric):
        """ Gives the value of an initial untrained model."""
        if metric == 'accuracy':
            hist = np.bincount(self.y_test).astype(float)/len(self.y_test)
            return np.max(hist)
        if metric == 'f1':
            rnd_f1s = []
            for _ in range(1000):
                rnd_y = np.random.permutation(self.y)
                rnd_f1s.append(compute_metric('f1', self.y_test, rnd_y[:len(self.y_test)]))
            return np.mean(rnd_f1s)
        if metric == 'auc':
            return 0.5
        random_scores = []
        for _ in range(100):
            rnd_y = np.random.permutation(self.y)
            if self.sample_weight is None:
                self.model.fit(self.X, rnd_y)
            else:
                self.model.fit(self.X, rnd_y, sample_weight=self.sample_weight)
            random_scores.append(self.value(self.model, metric))
        return np.mean(random_scores)

    def value(self, model, metric=None, X=None, y=None):
        """Computes the values of the given model."""
        if metric is None:
            metric = self.metric
        if X is None:
            X = self.X_test
        if y is None:
            y = self.y_test
        return compute_metric(metric, y, model.predict(X))

    def run(self, save_every, err, tolerance=0.01, g_run=True, loo_run=True):
        """Calculates data sources(points) values.

        Args:
            save_every: save marginal contrivbutions every n iterations.
            err: stopping criteria.
            tolerance: Truncation tolerance. If None, it's computed.
            g_run: If True, computes G-Shapley values.
            loo_run: If True, computes and saves leave-one-out scores.
        """
        if loo_run:
            try:
                len(self.vals_loo)
            except TypeError:
                self.vals_loo = self._calculate_loo_vals(sources=self.sources)
                self.save_results(overwrite=True)
        print('LOO values calculated!')
        tmc_run = True
        g_run = g_run and self.model_family not in ['logistic', 'NN']
        while tmc_run or g_run:
            if g_run:
                if error(self.mem_g) < err:
                    g_run = False
                else:
                    self._g_shap(save_every, sources=self.sources)
                    self.vals_g = np.mean(self.mem_g, 0)
            if tmc_run:
                if error(self.mem_tmc) < err:
                    tmc_run = False
                else:
                    self._tmc_shap_parallel(save_every, tolerance=tolerance, sources=self.sources)
                    self.vals_tmc = np.mean(self.mem_tmc, 0)
            if self.directory is not None:
                self.save_results()

    def _tmc_shap_parallel(self, iterations, tolerance=None, sources=None):
        """Runs `iterations` TMC permutations split across worker processes."""
        per_worker = int(np.ceil(iterations / self.n_workers))
        ctx = mp.get_context('spawn')
        queue = ctx.SimpleQueue()
        procs = []
        for rank in range(self.n_workers):
            p = ctx.Process(target=_tmc_worker,
                            args=(rank, self.n_workers, per_worker, tolerance, self._state_for_worker(), queue))
            p.start()
            procs.append(p)
        for _ in procs:
            marginals, idxs = queue.get()
            self.mem_tmc = np.concatenate([self.mem_tmc, marginals])
            self.idxs_tmc = np.concatenate([self.idxs_tmc, idxs])
        for p in procs:
            p.join()

    def _state_for_worker(self):
        return dict(X=self.X, y=self.y, X_test=self.X_test, y_test=self.y_test,
                    X_heldout=self.X_heldout, y_heldout=self.y_heldout, sources=self.sources,
                    sample_weight=self.sample_weight, model_family=self.model_family,
                    metric=self.metric, hidden_units=self.hidden_units, random_score=self.random_score)

    def _calculate_loo_vals(self, sources=None, metric=None):
        """Calculated leave-one-out values for the given metric."""
        if metric is None:
            metric = self.metric
        if sources is None:
            sources = {i: np.array([i]) for i in range(len(self.X))}
        elif not isinstance(sources, dict):
            sources = {i: np.where(sources == i)[0] for i in set(sources)}
        print('Starting LOO score calculations!')
        if self.sample_weight is None:
            self.model.fit(self.X, self.y)
        else:
            self.model.fit(self.X, self.y, sample_weight=self.sample_weight)
        baseline_value = self.value(self.model, metric=metric)
        vals_loo = np.zeros(len(self.X))
        for i in sources.keys():
            X_batch = np.delete(self.X, sources[i], axis=0)
            y_batch = np.delete(self.y, sources[i], axis=0)
            self.model.fit(X_batch, y_batch)
            removed_value = self.value(self.model, metric=metric)
            vals_loo[sources[i]] = (baseline_value - removed_value)
            vals_loo[sources[i]] /= len(sources[i])
            torch.cuda.empty_cache()
        return vals_loo

    def _g_shap(self, iterations, err=None, learning_rate=None, sources=None):
        raise NotImplementedError("G-Shapley needs an sklearn-style partial_fit model; see dshap/gshap.py")

    def save_results(self, overwrite=False):
        """Saves results computed so far."""
        if self.directory is None:
            return
        loo_dir = os.path.join(self.directory, 'loo.pkl')
        if not os.path.exists(loo_dir) or overwrite:
            pickle.dump({'loo': self.vals_loo}, open(loo_dir, 'wb'))
        tmc_dir = os.path.join(self.directory, 'mem_tmc.pkl')
        pickle.dump({'mem_tmc': self.mem_tmc, 'idxs_tmc': self.idxs_tmc}, open(tmc_dir, 'wb'))


def _tmc_worker(rank, world_size, iterations, tolerance, state, queue):
    """One TMC worker: pinned to GPU `rank`, runs `iterations` permutations."""
    n_gpus = torch.cuda.device_count()
    if n_gpus > 0:
        torch.cuda.set_device(rank % n_gpus)
        device = torch.device('cuda', rank % n_gpus)
    else:
        device = torch.device('cpu')
    np.random.seed(os.getpid() + int(time.time()) % 1000)
    torch.manual_seed(np.random.randint(1 << 31))
    model = return_model(state['model_family'], device=device,
                         hidden_layer_sizes=state['hidden_units'])
    X, y = state['X'], state['y']
    sources = state['sources']
    marginals_all, idxs_all = [], []
    for iteration in range(iterations):
        if rank == 0 and 10 * (iteration + 1) / iterations % 1 == 0:
            print('{} out of {} TMC_Shapley iterations.'.format(iteration + 1, iterations))
        idxs = np.random.permutation(len(sources))
        marginal_contribs = np.zeros(len(X))
        X_batch = np.zeros((0,) + tuple(X.shape[1:]))
        y_batch = np.zeros(0, int)
        truncation_counter = 0
        new_score = state['random_score']
        mean_score = np.mean(state.get('mean_score', new_score))
        for n, idx in enumerate(idxs):
            old_score = new_score
            X_batch = np.concatenate([X_batch, X[sources[idx]]])
            y_batch = np.concatenate([y_batch, y[sources[idx]]])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if len(set(y_batch)) == len(set(state['y_test'])):
                    model.fit(X_batch, y_batch)
                    new_score = compute_metric(state['metric'], state['y_test'], model.predict(state['X_test']))
            marginal_contribs[sources[idx]] = (new_score - old_score)
            marginal_contribs[sources[idx]] /= len(sources[idx])
            distance_to_full_score = np.abs(new_score - mean_score)
            if distance_to_full_score <= tolerance * mean_score:
                truncation_counter += 1
                if truncation_counter > 5:
                    break
            else:
                truncation_counter = 0
        marginals_all.append(marginal_contribs.reshape(1, -1))
        idxs_all.append(idxs.reshape(1, -1))
    torch.cuda.synchronize()
    queue.put((np.concatenate(marginals_all), np.concatenate(idxs_all)))


def error(mem, n_points=100):
    if len(mem) < n_points:
        return 1.0
    all_vals = (np.cumsum(mem, 0)/np.reshape(np.arange(1, len(mem)+1), (-1, 1)))[-n_points:]
    errors = np.mean(np.abs(all_vals[-n_points:] - all_vals[-1:])/(np.abs(all_vals[-1:]) + 1e-12), -1)
    return np.max(errors)
