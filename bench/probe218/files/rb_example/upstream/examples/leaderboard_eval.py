"""Evaluate a handful of RobustBench model-zoo entries with AutoAttack and with a quick
torchattacks PGD sanity check, then dump a small markdown table.

Usage:
    python examples/leaderboard_eval.py --models Carmon2019Unlabeled,Gowal2020Uncovering_28_10_extra \
        --n-ex 1000 --bs 250

Needs one GPU with >= 16 GB for the WRN-70-16 entries at bs=250.
"""
import argparse
import json
import time

import torch
import torchattacks
from autoattack import AutoAttack

from robustbench.data import load_cifar10, load_cifar100
from robustbench.eval import benchmark
from robustbench.utils import clean_accuracy, load_model


DEFAULT_MODELS = [
    "Standard",
    "Carmon2019Unlabeled",
    "Wong2020Fast",
    "Rebuffi2021Fixing_70_16_cutmix_extra",
]


def pgd_sanity_check(model, x, y, device, eps=8/255, bs=250):
    """PGD-10 accuracy must be >= AutoAttack accuracy; otherwise something is broken."""
    atk = torchattacks.PGD(model, eps=eps, alpha=2/255, steps=10, random_start=True)
    correct = 0
    for i in range(0, len(x), bs):
        xb = x[i:i + bs].cuda(non_blocking=True)
        yb = y[i:i + bs].cuda(non_blocking=True)
        adv = atk(xb, yb)
        with torch.no_grad():
            correct += (model(adv).argmax(1) == yb).sum().item()
    return correct / len(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=str, default=",".join(DEFAULT_MODELS))
    parser.add_argument("--dataset", type=str, default="cifar10", choices=["cifar10", "cifar100"])
    parser.add_argument("--threat-model", type=str, default="Linf")
    parser.add_argument("--eps", type=float, default=8/255)
    parser.add_argument("--n-ex", type=int, default=1000)
    parser.add_argument("--bs", type=int, default=250)
    parser.add_argument("--out", type=str, default="leaderboard_results.json")
    parser.add_argument("--model-dir", type=str, default="./models")
    args = parser.parse_args()

    device = torch.device("cuda:0")
    loader = load_cifar10 if args.dataset == "cifar10" else load_cifar100
    x_test, y_test = loader(n_examples=args.n_ex)

    results = {}
    for model_name in args.models.split(","):
        print("=" * 80)
        print(model_name)
        t0 = time.time()
        model = load_model(model_name, model_dir=args.model_dir, dataset=args.dataset,
                           threat_model=args.threat_model).to("cuda")
        model.eval()

        clean = clean_accuracy(model, x_test, y_test, batch_size=args.bs, device=device)
        pgd_acc = pgd_sanity_check(model, x_test, y_test, device, eps=args.eps, bs=args.bs)

        adversary = AutoAttack(model, norm=args.threat_model, eps=args.eps,
                               version='standard', device='cuda')
        x_adv = adversary.run_standard_evaluation(x_test, y_test, bs=args.bs)
        aa_acc = clean_accuracy(model, x_adv, y_test, batch_size=args.bs, device=device)

        assert pgd_acc + 1e-3 >= aa_acc, "PGD weaker than AA should never happen"

        # Cross-check with the official entry point.
        _, rb_acc = benchmark(model, n_examples=min(args.n_ex, 500), dataset=args.dataset,
                              threat_model=args.threat_model, eps=args.eps,
                              device=torch.device("cuda:0"), batch_size=args.bs)

        results[model_name] = {
            "clean": clean,
            "pgd10": pgd_acc,
            "autoattack": aa_acc,
            "robustbench_500": rb_acc,
            "seconds": time.time() - t0,
            "gpu": torch.cuda.get_device_name(device),
        }
        print(json.dumps(results[model_name], indent=2))

        del model, adversary, x_adv
        torch.cuda.empty_cache()

    print("| model | clean | PGD-10 | AA |")
    print("|---|---|---|---|")
    for name, r in results.items():
        print("| %s | %.2f | %.2f | %.2f |" % (name, 100 * r["clean"], 100 * r["pgd10"], 100 * r["autoattack"]))

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
