import argparse
import os
import pickle
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Categorical

from laplace import Laplace
from laplace.curvature import AsdlGGN, AsdlEF, AsdlHessian, BackPackGGN, BackPackEF
from laplace.utils import LargestMagnitudeSubnetMask

import utils.data_utils as du
import utils.utils as util
from utils.test import test
from baselines.swag.swag import fit_swag_and_precompute_bn_params
from baselines.bbb.models import make_bbb_model

warnings.filterwarnings("ignore")


BACKENDS = {
    "asdl_ggn": AsdlGGN,
    "asdl_ef": AsdlEF,
    "asdl_hessian": AsdlHessian,
    "backpack_ggn": BackPackGGN,
    "backpack_ef": BackPackEF,
}


def main(args):
    # set device and random seed
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    args.prior_precision = (
        args.prior_precision if type(args.prior_precision) is str else float(args.prior_precision)
    )
    util.set_seed(args.seed)

    # load in-distribution data
    in_data_loaders, ids, no_loss_acc = du.get_in_distribution_data_loaders(args, args.device)
    train_loader, val_loader, in_test_loader = in_data_loaders

    # fit models
    mixture_components = fit_models(args, train_loader, val_loader, no_loss_acc)

    # evaluate models
    metrics = evaluate_models(args, mixture_components, in_test_loader, ids, no_loss_acc)

    # save results
    save_results(args, metrics)


def fit_models(args, train_loader, val_loader, no_loss_acc):
    """ load pre-trained weights, fit inference methods, and tune hyperparameters """

    mixture_components = list()
    for model_idx in range(args.nr_components):
        model = util.load_pretrained_model(args, model_idx, args.n_classes, args.device)

        if args.method in ["laplace", "mola"]:
            if type(args.prior_precision) is str:  # file path
                prior_precision = torch.load(args.prior_precision, map_location=args.device)
            elif type(args.prior_precision) is float:
                prior_precision = args.prior_precision
            else:
                raise ValueError("prior precision has to be either float or string (file path)")
            Backend = BACKENDS[args.backend]
            optional_args = dict()

            if args.subset_of_weights == "last_layer":
                optional_args["last_layer_name"] = args.last_layer_name
            elif args.subset_of_weights == "subnetwork":
                subnetwork_mask = LargestMagnitudeSubnetMask(model, n_params_subnet=args.n_params_subnet)
                optional_args["subnetwork_indices"] = subnetwork_mask.select().type(torch.cuda.LongTensor)

            print("Fitting Laplace approximation...")
            torch.cuda.synchronize()
            t0 = time.time()

            model = Laplace(
                model,
                args.likelihood,
                subset_of_weights=args.subset_of_weights,
                hessian_structure=args.hessian_structure,
                prior_precision=prior_precision,
                temperature=args.temperature,
                backend=Backend,
                **optional_args,
            )
            model.fit(train_loader if not args.fit_on_val else val_loader)

            torch.cuda.synchronize(args.device)
            print(f"Laplace fit took {time.time() - t0:.1f}s "
                  f"(peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)")

            if (args.optimize_prior_precision is not None) and (args.method == "laplace"):
                if (type(prior_precision) is float) and (args.prior_structure != "scalar"):
                    n = model.n_params if args.prior_structure == "all" else model.n_layers
                    prior_precision = prior_precision * torch.ones(n, device=args.device)

                print("Optimizing prior precision for Laplace approximation...")

                verbose_prior = args.prior_structure == "scalar"
                model.optimize_prior_precision(
                    method=args.optimize_prior_precision,
                    init_prior_prec=prior_precision,
                    val_loader=val_loader,
                    pred_type=args.pred_type,
                    link_approx=args.link_approx,
                    n_samples=args.n_samples,
                    verbose=verbose_prior,
                )

        elif args.method in ["swag", "multi-swag"]:
            print("Fitting SWAG...")

            model = fit_swag_and_precompute_bn_params(
                model,
                args.device,
                train_loader,
                args.swag_n_snapshots,
                args.swag_lr,
                args.swag_c_epochs,
                args.swag_c_batches,
                args.data_parallel,
                args.n_samples,
                args.swag_bn_update_subset,
            )

        elif (args.method == "map" or args.method == "ensemble") and args.likelihood == "classification" and args.use_temperature_scaling:
            print("Fitting temperature scaling model on validation data...")
            all_y_prob = [model(d[0].to(args.device)).detach().cpu() for d in val_loader]
            all_y_prob = torch.cat(all_y_prob, dim=0)
            all_y_true = torch.cat([d[1] for d in val_loader], dim=0)

            temperature_scaling_model = util.TemperatureScaling(all_y_prob, all_y_true)
            model = util.TemperatureScaledModel(model, temperature_scaling_model.optimize())

        if args.likelihood == "regression" and args.sigma_noise is None:
            print("Optimizing noise standard deviation on validation data...")
            args.sigma_noise = util.optimize_noise_standard_deviation(model, val_loader, args.device)

        mixture_components.append(model)

        # the Kronecker factors of the big models do not fit twice on a 16GB card
        torch.cuda.empty_cache()

    return mixture_components


def evaluate_models(args, mixture_components, in_test_loader, ids, no_loss_acc):
    """ evaluate the models and return relevant evaluation metrics """

    metrics = []
    for i, id in enumerate(ids):
        # load test data
        test_loader = in_test_loader if i == 0 else du.get_ood_test_loader(args, id)

        use_no_loss_acc = no_loss_acc if i > 0 else False

        # make model predictions and compute some metrics
        test_output, test_time = util.timing(
            lambda: test(
                mixture_components,
                test_loader,
                args.method,
                pred_type=args.pred_type,
                link_approx=args.link_approx,
                n_samples=args.n_samples,
                device=args.device,
                no_loss_acc=use_no_loss_acc,
                likelihood=args.likelihood,
                sigma_noise=args.sigma_noise,
            )
        )
        some_metrics, all_y_prob, all_y_var = test_output
        some_metrics["test_time"] = test_time

        if i == 0:
            all_y_prob_in = all_y_prob.clone()

        # compute more metrics
        more_metrics = compute_metrics(
            i, id, all_y_prob, test_loader, all_y_prob_in, all_y_var, args
        )
        metrics.append({**some_metrics, **more_metrics})
        print(
            ", ".join([f"{k}: {v:.4f}" for k, v in metrics[-1].items() if isinstance(v, float)])
        )

    return metrics


def compute_metrics(i, id, all_y_prob, test_loader, all_y_prob_in, all_y_var, args):
    """ compute evaluation metrics """

    metrics = {}

    # compute Brier, ECE and MCE for distribution shift and WILDS benchmarks
    if args.benchmark in ["R-MNIST", "R-FMNIST", "CIFAR-10-C", "ImageNet-C"]:
        print(f"{args.benchmark} with distribution shift intensity {i}")
        labels = torch.cat([data[1] for data in test_loader])
        metrics["brier"] = util.get_brier_score(all_y_prob, labels)
        metrics["ece"], metrics["mce"] = util.get_calib(all_y_prob, labels)

    # compute AUROC and FPR95 for OOD benchmarks
    if args.benchmark in ["MNIST-OOD", "FMNIST-OOD", "CIFAR-10-OOD"]:
        print(f"{args.benchmark} - dataset: {id}")
        if i > 0:
            # compute other metrics
            metrics["auroc"] = util.get_auroc(all_y_prob_in, all_y_prob)
            metrics["fpr95"], _ = util.get_fpr95(all_y_prob_in, all_y_prob)

    # compute regression calibration
    if args.benchmark == "WILDS-poverty":
        print(f"{args.benchmark} with distribution shift intensity {i}")
        labels = torch.cat([data[1] for data in test_loader])
        metrics["calib_regression"] = util.get_calib_regression(
            all_y_prob.numpy(), all_y_var.sqrt().numpy(), labels.numpy()
        )

    return metrics


def save_results(args, metrics):
    """ save the computed metrics """

    res_dir = f"./results/{args.benchmark}/"
    if not os.path.exists(res_dir):
        os.makedirs(res_dir)

    method_str = args.method
    if args.method in ["laplace", "mola"]:
        method_str += f"_{args.subset_of_weights}_{args.hessian_structure}_{args.backend}"
    if args.run_name is not None:
        method_str = args.run_name
    res_path = os.path.join(res_dir, f"{method_str}_seed{args.seed}.npy")
    print(f"Saving results to {res_path}...")
    np.save(res_path, metrics)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark", type=str,
                        choices=["R-MNIST", "R-FMNIST", "CIFAR-10-C", "ImageNet-C",
                                 "MNIST-OOD", "FMNIST-OOD", "CIFAR-10-OOD", "WILDS-poverty"],
                        default="CIFAR-10-C")
    parser.add_argument("--method", type=str, default="laplace",
                        choices=["map", "ensemble", "laplace", "mola", "swag", "multi-swag", "bbb", "csghmc"])
    parser.add_argument("--pred_type", type=str, default="glm", choices=["nn", "glm"])
    parser.add_argument("--link_approx", type=str, default="probit", choices=["mc", "probit", "bridge"])
    parser.add_argument("--n_samples", type=int, default=100)
    parser.add_argument("--likelihood", type=str, default="classification", choices=["classification", "regression"])
    parser.add_argument("--subset_of_weights", type=str, default="last_layer",
                        choices=["last_layer", "subnetwork", "all"])
    parser.add_argument("--n_params_subnet", type=int, default=1000)
    parser.add_argument("--hessian_structure", type=str, default="kron", choices=["diag", "kron", "full"])
    parser.add_argument("--backend", type=str, default="asdl_ggn", choices=list(BACKENDS.keys()))
    parser.add_argument("--last_layer_name", type=str, default=None)
    parser.add_argument("--prior_precision", default=1.0,
                        help="either prior precision or file path to load it from")
    parser.add_argument("--optimize_prior_precision", default=None, choices=["marglik", "gridsearch"])
    parser.add_argument("--prior_structure", type=str, default="scalar", choices=["scalar", "layerwise", "all"])
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--fit_on_val", action="store_true")
    parser.add_argument("--use_temperature_scaling", default=False, action="store_true")
    parser.add_argument("--sigma_noise", type=float, default=None)
    parser.add_argument("--models_root", type=str, default="./models")
    parser.add_argument("--model_seed", type=int, default=None)
    parser.add_argument("--nr_components", type=int, default=1)
    parser.add_argument("--data_root", type=str, default="./data")
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--data_parallel", action="store_true",
                        help="if True, use torch.nn.DataParallel on all visible GPUs")
    parser.add_argument("--swag_n_snapshots", type=int, default=40)
    parser.add_argument("--swag_lr", type=float, default=1e-2)
    parser.add_argument("--swag_c_epochs", type=int, default=1)
    parser.add_argument("--swag_c_batches", type=int, default=None)
    parser.add_argument("--swag_bn_update_subset", type=float, default=1.0)
    parser.add_argument("--run_name", type=str, default=None)
    parser.add_argument("--seed", type=int, default=711)
    parser.add_argument("--model", type=str, default="WRN16-4",
                        choices=["MLP", "LeNet", "WRN16-4", "WRN16-4-fixup", "WRN50-2"])
    parser.add_argument("--config", default=None, nargs="+",
                        help="YAML config file path(s) overriding the command line")

    args = parser.parse_args()
    args_dict = vars(args)

    if args.config is not None:
        import yaml
        for config in args.config:
            with open(config, "r") as f:
                args_dict.update(yaml.load(f, Loader=yaml.FullLoader))

    if args.benchmark in ["R-MNIST", "MNIST-OOD", "R-FMNIST", "FMNIST-OOD", "CIFAR-10-C", "CIFAR-10-OOD"]:
        args.n_classes = 10
    elif args.benchmark == "ImageNet-C":
        args.n_classes = 1000
    else:
        args.n_classes = 1
    if args.data_parallel and torch.cuda.device_count() < 2:
        print("--data_parallel ignored: fewer than two GPUs visible")
        args.data_parallel = False

    main(args)
