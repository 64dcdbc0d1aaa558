"""
Utils to replicate IHDP experiments with catenets (PyTorch backend).
"""
# Author: Alicia Curth
import csv
import os
import random
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from sklearn import clone

from catenets.datasets import load
from catenets.experiment_utils.base import eval_root_mse
from catenets.models.torch import (
    DragonNet,
    FlexTENet,
    SNet,
    TARNet,
    TLearner,
    SLearner,
    DRLearner,
    RALearner,
)
from catenets.models.torch.base import DEVICE

RESULT_DIR = Path("results/experiments_benchmarking/ihdp/")
EXP_DIR = Path("experiments/experiments_benchmarks_NeurIPS21/")
SEP = "_"

PARAMS_DEPTH = {"n_layers_r": 3, "n_layers_out": 2}
PARAMS_DEPTH_2 = {
    "n_layers_r": 3,
    "n_layers_out": 2,
    "n_layers_r_t": 3,
    "n_layers_out_t": 2,
}

ALL_MODELS = {
    "TLearner": TLearner(n_unit_in=25, binary_y=False, n_layers_out=2),
    "SLearner": SLearner(n_unit_in=25, binary_y=False, n_layers_out=2),
    "TARNet": TARNet(n_unit_in=25, binary_y=False, **PARAMS_DEPTH),
    "CFRNet_0.01": TARNet(
        n_unit_in=25, binary_y=False, penalty_disc=0.01, **PARAMS_DEPTH
    ),
    "CFRNet_0.001": TARNet(
        n_unit_in=25, binary_y=False, penalty_disc=0.001, **PARAMS_DEPTH
    ),
    "DragonNet": DragonNet(n_unit_in=25, binary_y=False, **PARAMS_DEPTH),
    "DRLearner": DRLearner(n_unit_in=25, binary_y=False, **PARAMS_DEPTH_2),
    "RALearner": RALearner(n_unit_in=25, binary_y=False, **PARAMS_DEPTH_2),
    "SNet": SNet(n_unit_in=25, binary_y=False),
    "FlexTENet": FlexTENet(n_unit_in=25, binary_y=False),
}


def enable_reproducible_results(seed: int = 42) -> None:
    """Seed every random number generator the experiments touch."""
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def do_ihdp_experiments(
    n_exp: Union[int, list] = 100,
    n_reps: int = 5,
    file_name: str = "ihdp_all",
    model_params: Optional[dict] = None,
    models: Optional[dict] = None,
    setting: str = "original",
    save_models: bool = False,
) -> None:
    if models is None:
        models = ALL_MODELS
    elif isinstance(models, (list, str)):
        models = {name: ALL_MODELS[name] for name in models}

    if (setting == "original") or (setting == "C"):
        setting = "C"
    elif (setting == "modified") or (setting == "D"):
        setting = "D"
    else:
        raise ValueError(
            "Setting should be one of original or modified. You passed {}.".format(
                setting
            )
        )

    # get file to write in
    if not os.path.isdir(RESULT_DIR):
        os.makedirs(RESULT_DIR)

    out_file = open(RESULT_DIR / (file_name + SEP + setting + ".csv"), "w", buffering=1)
    writer = csv.writer(out_file)
    header = (
        ["exp", "run", "cate_var_in", "cate_var_out", "y_var_in"]
        + [name + "_in" for name in models.keys()]
        + [name + "_out" for name in models.keys()]
    )
    writer.writerow(header)

    # get data
    data_train, data_test = load("ihdp", exp=n_exp, rescale=True)
    print(f"Running IHDP experiments on {DEVICE}")

    if isinstance(n_exp, int):
        experiment_loop = list(range(1, n_exp + 1))
    elif isinstance(n_exp, list):
        experiment_loop = n_exp
    else:
        raise ValueError("n_exp should be either an integer or a list of integers.")

    for i_exp in experiment_loop:
        # get data
        data_exp = (
            data_train[i_exp - 1] if isinstance(data_train, list) else data_train
        )
        data_exp_test = (
            data_test[i_exp - 1] if isinstance(data_test, list) else data_test
        )

        X, y, w, cate_true_in, X_t, cate_true_out = prepare_ihdp_pairnet_data(
            data_exp, data_exp_test, setting=setting
        )

        # compute some stats
        cate_var_in = np.var(cate_true_in)
        cate_var_out = np.var(cate_true_out)
        y_var_in = np.var(y)

        for k in range(n_reps):
            enable_reproducible_results(k)
            pehe_in = []
            pehe_out = []

            for model_name, estimator in models.items():
                print(f"Experiment {i_exp}, run {k}, with {model_name}")
                estimator_temp = clone(estimator)
                estimator_temp.set_params(seed=k)
                if model_params is not None:
                    estimator_temp.set_params(**model_params)

                # fit estimator
                estimator_temp.fit(X=X, y=y, w=w)

                cate_pred_in = (
                    estimator_temp.predict(X, return_po=False).detach().cpu().numpy()
                )
                cate_pred_out = (
                    estimator_temp.predict(X_t, return_po=False).detach().cpu().numpy()
                )

                pehe_in.append(eval_root_mse(cate_pred_in, cate_true_in))
                pehe_out.append(eval_root_mse(cate_pred_out, cate_true_out))

                if save_models:
                    ckpt = RESULT_DIR / f"{model_name}{SEP}{i_exp}{SEP}{k}.pt"
                    torch.save(estimator_temp.state_dict(), ckpt)

            writer.writerow(
                [i_exp, k, cate_var_in, cate_var_out, y_var_in] + pehe_in + pehe_out
            )

    out_file.close()


def prepare_ihdp_pairnet_data(data_train, data_test, setting="C"):
    X, y, w, mu0, mu1 = (
        data_train["X"],
        data_train["y"],
        data_train["w"],
        data_train["mu0"],
        data_train["mu1"],
    )
    X_t, mu0_t, mu1_t = data_test["X"], data_test["mu0"], data_test["mu1"]

    if setting == "D":
        y[w == 1] = y[w == 1] + mu0[w == 1]
        mu1 = mu0 + mu1
        mu1_t = mu0_t + mu1_t

    cate_true_in = mu1 - mu0
    cate_true_out = mu1_t - mu0_t

    return X, y, w, cate_true_in, X_t, cate_true_out


def load_saved_model(model_name: str, i_exp: int, k: int):
    """Reload a model saved by ``do_ihdp_experiments(save_models=True)``."""
    estimator = clone(ALL_MODELS[model_name])
    ckpt = RESULT_DIR / f"{model_name}{SEP}{i_exp}{SEP}{k}.pt"
    estimator.load_state_dict(torch.load(ckpt, map_location=DEVICE))
    return estimator.to(DEVICE)


if __name__ == "__main__":
    do_ihdp_experiments(n_exp=10, n_reps=3, setting="original")
