#!/usr/bin/env python
"""
Train a ResNet-50 trunk + MLP embedder + classifier head on CUB-200-2011 with
MultiSimilarityLoss, using the pytorch-metric-learning trainers/testers/hooks.

Originally a notebook (TrainWithClassifierHook.ipynb); exported so that it can
be run on a cluster node:

    CUDA_VISIBLE_DEVICES=0,1 python train_with_classifier_cub200.py --dataset_root ~/datasets

Needs: pytorch-metric-learning[with-hooks] (record-keeper, faiss-gpu, tensorboard).
"""
import argparse
import logging
import os

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision import datasets, transforms

import pytorch_metric_learning
import pytorch_metric_learning.utils.logging_presets as logging_presets
from pytorch_metric_learning import losses, miners, samplers, testers, trainers
from pytorch_metric_learning.utils import common_functions as c_f
from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

logging.getLogger().setLevel(logging.INFO)
logging.info("VERSION %s" % pytorch_metric_learning.__version__)


# This is a basic multilayer perceptron
# This code is from https://github.com/KevinMusgrave/powerful-benchmarker
class MLP(nn.Module):
    # layer_sizes[0] is the dimension of the input
    # layer_sizes[-1] is the dimension of the output
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        layer_sizes = [int(x) for x in layer_sizes]
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(len(layer_sizes) - 1):
            input_size = layer_sizes[i]
            curr_size = layer_sizes[i + 1]
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=False))
            layer_list.append(nn.Linear(input_size, curr_size))
        self.net = nn.Sequential(*layer_list)
        self.last_linear = self.net[-1]

    def forward(self, x):
        return self.net(x)


def parse_args():
    parser = argparse.ArgumentParser(description="PML TrainWithClassifier on CUB200")
    parser.add_argument("--dataset_root", type=str, default="~/datasets")
    parser.add_argument("--experiment_dir", type=str, default="example_saved_models")
    parser.add_argument("--logs_dir", type=str, default="example_logs")
    parser.add_argument("--tensorboard_dir", type=str, default="example_tensorboard")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--num_epochs", type=int, default=60)
    parser.add_argument("--embedding_size", type=int, default=128)
    parser.add_argument("--trunk_lr", type=float, default=1e-5)
    parser.add_argument("--embedder_lr", type=float, default=1e-4)
    parser.add_argument("--classifier_lr", type=float, default=1e-4)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no_data_parallel", action="store_true",
                        help="do not wrap trunk/embedder in nn.DataParallel")
    return parser.parse_args()


def get_datasets(root):
    train_transform = transforms.Compose(
        [
            transforms.Resize(256),
            transforms.RandomResizedCrop(scale=(0.16, 1), ratio=(0.75, 1.33), size=227),
            transforms.RandomHorizontalFlip(0.5),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ]
    )
    val_transform = transforms.Compose(
        [
            transforms.Resize(256),
            transforms.CenterCrop(227),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ]
    )
    images_dir = os.path.join(os.path.expanduser(root), "CUB_200_2011", "images")
    full = datasets.ImageFolder(images_dir)
    targets = np.array(full.targets)
    train_idx = np.where(targets < 100)[0]
    val_idx = np.where(targets >= 100)[0]

    class _Subset(torch.utils.data.Dataset):
        def __init__(self, base, idx, transform):
            self.base, self.idx, self.transform = base, idx, transform
            self.targets = targets[idx]

        def __len__(self):
            return len(self.idx)

        def __getitem__(self, i):
            img, label = self.base[self.idx[i]]
            return self.transform(img), label

    return _Subset(full, train_idx, train_transform), _Subset(full, val_idx, val_transform)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    device = torch.device("cuda")

    # Set trunk model and replace the softmax layer with an identity function
    trunk = torchvision.models.resnet50(pretrained=True)
    trunk_output_size = trunk.fc.in_features
    trunk.fc = c_f.Identity() if hasattr(c_f, "Identity") else nn.Identity()
    if args.no_data_parallel:
        trunk = trunk.to(device)
    else:
        trunk = torch.nn.DataParallel(trunk.to(device))

    # Set embedder model. This takes in the output of the trunk and outputs 128 dimensional embeddings
    embedder = MLP([trunk_output_size, args.embedding_size])
    if args.no_data_parallel:
        embedder = embedder.to(device)
    else:
        embedder = torch.nn.DataParallel(embedder.to(device))

    # Set the classifier. The classifier will take the embeddings and output a 50 dimensional vector.
    # (Our training set will consist of the first 50 classes of the CIFAR100 dataset.)
    # We'll specify the classification loss further down in the code.
    classifier = MLP([args.embedding_size, 100]).to(device)

    # Set optimizers
    trunk_optimizer = torch.optim.Adam(trunk.parameters(), lr=args.trunk_lr, weight_decay=0.0001)
    embedder_optimizer = torch.optim.Adam(embedder.parameters(), lr=args.embedder_lr, weight_decay=0.0001)
    classifier_optimizer = torch.optim.Adam(classifier.parameters(), lr=args.classifier_lr, weight_decay=0.0001)

    train_dataset, val_dataset = get_datasets(args.dataset_root)

    # Set the loss function
    loss = losses.MultiSimilarityLoss(alpha=2, beta=50, base=0.5)

    # Set the classification loss:
    classification_loss = torch.nn.CrossEntropyLoss()

    # Set the mining function
    miner = miners.MultiSimilarityMiner(epsilon=0.1)

    # Set the dataloader sampler
    sampler = samplers.MPerClassSampler(
        train_dataset.targets, m=4, length_before_new_iter=len(train_dataset)
    )

    # Package the above stuff into dictionaries.
    models = {"trunk": trunk, "embedder": embedder, "classifier": classifier}
    optimizers = {
        "trunk_optimizer": trunk_optimizer,
        "embedder_optimizer": embedder_optimizer,
        "classifier_optimizer": classifier_optimizer,
    }
    loss_funcs = {"metric_loss": loss, "classifier_loss": classification_loss}
    mining_funcs = {"tuple_miner": miner}

    # We can specify loss weights if we want to. This is optional
    loss_weights = {"metric_loss": 1, "classifier_loss": 0.5}

    record_keeper, _, _ = logging_presets.get_record_keeper(args.logs_dir, args.tensorboard_dir)
    hooks = logging_presets.get_hook_container(record_keeper)
    dataset_dict = {"val": val_dataset}
    model_folder = args.experiment_dir

    # AccuracyCalculator uses faiss for the k-nn search; with faiss-gpu installed
    # the index is moved to all visible GPUs automatically.
    accuracy_calculator = AccuracyCalculator(
        include=("precision_at_1", "r_precision", "mean_average_precision_at_r"),
        k="max_bin_count",
        device=torch.device("cuda:0"),
    )

    # Create the tester
    tester = testers.GlobalEmbeddingSpaceTester(
        end_of_testing_hook=hooks.end_of_testing_hook,
        dataloader_num_workers=args.num_workers,
        accuracy_calculator=accuracy_calculator,
        data_device=device,
    )

    end_of_epoch_hook = hooks.end_of_epoch_hook(
        tester, dataset_dict, model_folder, test_interval=1, patience=1
    )

    trainer = trainers.TrainWithClassifier(
        models,
        optimizers,
        args.batch_size,
        loss_funcs,
        train_dataset,
        mining_funcs=mining_funcs,
        sampler=sampler,
        dataloader_num_workers=args.num_workers,
        loss_weights=loss_weights,
        end_of_iteration_hook=hooks.end_of_iteration_hook,
        end_of_epoch_hook=end_of_epoch_hook,
    )

    logging.info("training on %d GPU(s)" % torch.cuda.device_count())
    trainer.train(num_epochs=args.num_epochs)

    # final evaluation of the best checkpoint
    best_epoch, best_suffix = c_f.latest_version(model_folder, "trunk_*.pth", best=True)
    if best_suffix is not None:
        c_f.load_dict_of_models(
            {"trunk": trunk, "embedder": embedder}, best_suffix, model_folder, device, log_if_successful=True
        )
        all_accuracies = tester.test(dataset_dict, best_epoch, trunk, embedder)
        logging.info("best epoch %d: %s" % (best_epoch, all_accuracies["val"]))


if __name__ == "__main__":
    main()
