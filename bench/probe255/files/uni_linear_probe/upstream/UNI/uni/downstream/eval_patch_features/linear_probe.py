"""
Linear probe evaluation of frozen patch embeddings.

Follows the protocol of the UNI paper: L2-regularised multinomial logistic regression,
cost C = (feat_dim * n_classes) / 100, fit with L-BFGS for at most 1000 iterations.
The solver runs on the GPU in torch (sklearn's lbfgs is ~40x slower on 100k x 1024 features).
"""
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
from sklearn.preprocessing import StandardScaler

from .metrics import get_eval_metrics

# RAPIDS cuML is an optional drop-in for sklearn on CUDA machines
try:
    from cuml.linear_model import LogisticRegression as cuLogisticRegression
    HAS_CUML = True
except ImportError:
    HAS_CUML = False


class LogisticRegression:
    """Minimal torch port of sklearn's LogisticRegression(multi_class='multinomial', solver='lbfgs')."""

    def __init__(self, C: float = 1.0, max_iter: int = 1000, verbose: bool = True, random_state: int = 0, **kwargs):
        self.C = C
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state
        self.loss_func = torch.nn.CrossEntropyLoss(reduction="mean")
        self.logreg = None

    def compute_loss(self, feats, labels):
        loss = self.loss_func(self.logreg(feats), labels)
        wreg = 0.5 * self.logreg.weight.pow(2).sum()
        return loss.mean() + (1.0 / self.C) * wreg

    def predict_proba(self, feats):
        assert self.logreg is not None, "Need to fit first before predicting probs"
        with torch.no_grad():
            return self.logreg(feats.cuda()).softmax(dim=-1).cpu()

    def predict(self, feats):
        return self.predict_proba(feats).argmax(dim=1)

    def fit(self, feats, labels):
        feat_dim = feats.shape[1]
        num_classes = len(torch.unique(labels))
        torch.manual_seed(self.random_state)
        self.logreg = nn.Linear(feat_dim, num_classes).cuda()
        feats, labels = feats.cuda(), labels.cuda()
        opt = torch.optim.LBFGS(self.logreg.parameters(), lr=1, max_iter=self.max_iter, line_search_fn="strong_wolfe")

        def loss_closure():
            opt.zero_grad()
            loss = self.compute_loss(feats, labels)
            loss.backward()
            return loss

        start = time.time()
        opt.step(loss_closure)
        if self.verbose:
            final_loss = self.compute_loss(feats, labels).item()
            print(f"(Before Training) Loss: {final_loss:.3f}, took {time.time() - start:.1f}s")


def eval_linear_probe(
    train_feats: torch.Tensor,
    train_labels: torch.Tensor,
    valid_feats: Optional[torch.Tensor],
    valid_labels: Optional[torch.Tensor],
    test_feats: torch.Tensor,
    test_labels: torch.Tensor,
    max_iter: int = 1000,
    combine_trainval: bool = True,
    use_sklearn: bool = False,
    prefix: str = "lin_",
    verbose: bool = True,
):
    """
    Wrapper function that calls "train_linear_probe" and "test_linear_probe".

    Returns:
        results: A dictionary containing the eval metrics.
        dump: A dictionary containing the logits, probs and targets of the test set.
    """
    if verbose:
        print("Linear Probe Evaluation: Train shape", train_feats.shape)
        if valid_feats is not None:
            print("Linear Probe Evaluation: Valid shape", valid_feats.shape)
        print("Linear Probe Evaluation: Test shape", test_feats.shape)

    start = time.time()
    classifier = train_linear_probe(
        train_feats,
        train_labels,
        valid_feats,
        valid_labels,
        max_iter=max_iter,
        combine_trainval=combine_trainval,
        use_sklearn=use_sklearn,
        verbose=verbose,
    )
    results, dump = test_linear_probe(classifier, test_feats, test_labels, prefix=prefix, verbose=verbose)
    classifier.logreg = classifier.logreg.to(torch.device("cpu"))
    dump["logreg"] = classifier.logreg.state_dict()
    del classifier
    torch.cuda.empty_cache()
    if verbose:
        print(f"Linear Probe Evaluation: Time taken {time.time() - start:.2f}")

    return results, dump


def train_linear_probe(
    train_feats,
    train_labels,
    valid_feats,
    valid_labels,
    max_iter=1000,
    combine_trainval=True,
    use_sklearn=False,
    verbose=True,
):
    """
    Args:
        train_feats (torch.Tensor): Training features of shape (N_train, feat_dim).
        train_labels (torch.Tensor): Training labels of shape (N_train,).
        valid_feats (torch.Tensor): Validation features of shape (N_valid, feat_dim).
        valid_labels (torch.Tensor): Validation labels of shape (N_valid,).
        max_iter (int, optional): Maximum number of iterations for training. Defaults to 1000.
        combine_trainval (bool, optional): Whether to combine training and validation sets. Defaults to True.
        use_sklearn (bool, optional): Whether to use sklearn's LogisticRegression (cuML when available). Defaults to False.
        verbose (bool, optional): Whether to print verbose output. Defaults to True.

    Returns:
        tuple: A tuple containing the trained classifier.
    """
    NUM_C = len(set(train_labels.cpu().numpy()))
    cost = (train_feats.shape[1] * NUM_C) / 100
    if verbose:
        print(f"Linear Probe Evaluation (Train Time): Best cost = {cost:.3f}")

    # train final classifier
    if combine_trainval and (valid_feats is not None):
        trainval_feats = torch.cat([train_feats, valid_feats], dim=0)
        trainval_labels = torch.cat([train_labels, valid_labels], dim=0)
        if verbose:
            print(
                "Linear Probe Evaluation (Train Time): Combining train and validation sets for final training. Trainval Shape: ",
                trainval_feats.shape,
            )

        final_classifier = _fit_logreg(trainval_feats, trainval_labels, cost, verbose, max_iter, use_sklearn)
    else:
        if verbose:
            print(
                "Linear Probe Evaluation (Train Time): Using only train set for evaluation. Train Shape: ",
                train_feats.shape,
            )
        final_classifier = _fit_logreg(train_feats, train_labels, cost, verbose, max_iter, use_sklearn)

    return final_classifier


def test_linear_probe(
    linear_classifier: LogisticRegression,
    test_feats: torch.Tensor,
    test_labels: torch.Tensor,
    num_classes: Optional[int] = None,
    prefix: str = "lin_",
    verbose: bool = True,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """
    Evaluate the linear probe on the test set.
    """
    if verbose:
        print(f"Linear Probe Evaluation (Test Time): Test Shape {test_feats.shape}")

    # evaluate
    NUM_C = len(set(test_labels.cpu().numpy())) if num_classes is None else num_classes

    if NUM_C == 2:
        probs_all = linear_classifier.predict_proba(test_feats)[:, 1].detach().cpu().numpy()
        roc_kwargs = {}
    else:
        probs_all = linear_classifier.predict_proba(test_feats).detach().cpu().numpy()
        roc_kwargs = {"multi_class": "ovo", "average": "macro"}

    preds_all = linear_classifier.predict(test_feats).cpu().numpy()
    targets_all = test_labels.detach().cpu().numpy()
    eval_metrics = get_eval_metrics(targets_all, preds_all, probs_all, True, prefix, roc_kwargs)
    dump = {"preds_all": preds_all, "probs_all": probs_all, "targets_all": targets_all}

    return eval_metrics, dump


def _fit_logreg(feats, labels, cost, verbose=False, max_iter=100, use_sklearn=False) -> LogisticRegression:
    """
    Initialize and fit a `LogisticRegression` classifier for input features and labels.
    Default settings follow the UNI paper (L-BFGS, C = d*K/100).
    """
    if use_sklearn and HAS_CUML:
        classifier = cuLogisticRegression(C=cost, max_iter=max_iter, verbose=verbose)
    elif use_sklearn:
        from sklearn.linear_model import LogisticRegression as skLogisticRegression
        classifier = skLogisticRegression(C=cost, max_iter=max_iter, verbose=verbose, random_state=0)
    else:
        classifier = LogisticRegression(C=cost, max_iter=max_iter, verbose=verbose, random_state=0)
    classifier.fit(feats, labels)
    return classifier
