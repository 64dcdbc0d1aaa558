import argparse
import os
import time
import json
import numpy as np
import torch
from utils import get_dataset, get_net, get_strategy
from pprint import pprint

parser = argparse.ArgumentParser()
parser.add_argument('--seed', type=int, default=1, help="random seed")
parser.add_argument('--n_init_labeled', type=int, default=10000, help="number of init labeled samples")
parser.add_argument('--n_query', type=int, default=1000, help="number of queries per round")
parser.add_argument('--n_round', type=int, default=10, help="number of rounds")
parser.add_argument('--dataset_name', type=str, default="MNIST",
                    choices=["MNIST", "FashionMNIST", "SVHN", "CIFAR10"], help="dataset")
parser.add_argument('--strategy_name', type=str, default="EntropySampling",
                    choices=["RandomSampling",
                             "LeastConfidence",
                             "MarginSampling",
                             "EntropySampling",
                             "LeastConfidenceDropout",
                             "MarginSamplingDropout",
                             "EntropySamplingDropout",
                             "KMeansSampling",
                             "KCenterGreedy",
                             "BALDDropout",
                             "AdversarialBIM",
                             "AdversarialDeepFool"], help="query strategy")
parser.add_argument('--out_dir', type=str, default="results", help="where to dump per-round accuracies")
parser.add_argument('--no_cuda', action='store_true', default=False, help="force CPU even if a GPU is present")
parser.add_argument('--print_gpu', action='store_true', default=False, help="print the GPU model at start-up")
args = parser.parse_args()
pprint(vars(args))
print()

# fix random seed
np.random.seed(args.seed)
torch.manual_seed(args.seed)
torch.backends.cudnn.enabled = False

# device
use_cuda = torch.cuda.is_available() and not args.no_cuda
device = torch.device("cuda" if use_cuda else "cpu")
if use_cuda:
    torch.cuda.manual_seed_all(args.seed)
    if args.print_gpu:
        print("Running on", torch.cuda.get_device_name(0))
else:
    print("WARNING: CUDA not available, training on CPU will be slow")

dataset = get_dataset(args.dataset_name)                   # load dataset
net = get_net(args.dataset_name, device)                   # load network
strategy = get_strategy(args.strategy_name)(dataset, net)  # load strategy


def dump_results(accs, times, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"args": vars(args), "acc": accs, "round_time": times}, f, indent=2)


# start experiment
dataset.initialize_labels(args.n_init_labeled)
print(f"number of labeled pool: {args.n_init_labeled}")
print(f"number of unlabeled pool: {dataset.n_pool-args.n_init_labeled}")
print(f"number of testing pool: {dataset.n_test}")
print()

accs = []
times = []

# round 0 accuracy
print("Round 0")
t0 = time.time()
strategy.train()
preds = strategy.predict(dataset.get_test_data())
acc = dataset.cal_test_acc(preds)
accs.append(float(acc))
times.append(time.time() - t0)
print(f"Round 0 testing accuracy: {acc}")

for rd in range(1, args.n_round+1):
    print(f"Round {rd}")
    t0 = time.time()

    # query
    query_idxs = strategy.query(args.n_query)

    # update labels
    strategy.update(query_idxs)
    strategy.train()

    # calculate accuracy
    preds = strategy.predict(dataset.get_test_data())
    acc = dataset.cal_test_acc(preds)
    accs.append(float(acc))
    times.append(time.time() - t0)
    print(f"Round {rd} testing accuracy: {acc}  ({times[-1]:.1f}s)")

    # labeled / unlabeled bookkeeping
    n_labeled = int(dataset.labeled_idxs.sum())
    print(f"  labeled pool now {n_labeled} / {dataset.n_pool}")

out_path = os.path.join(args.out_dir, args.dataset_name,
                        f"{args.strategy_name}_seed{args.seed}.json")
dump_results(accs, times, out_path)
print("saved", out_path)
