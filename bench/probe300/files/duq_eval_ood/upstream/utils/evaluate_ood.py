import numpy as np
import torch
import torch.nn.functional as F

from sklearn.metrics import roc_auc_score

from utils.datasets import (
    get_CIFAR10,
    get_SVHN,
    get_FashionMNIST,
    get_MNIST,
    get_notMNIST,
)


def prepare_ood_datasets(true_dataset, ood_dataset):
    # Preprocess OoD dataset same as true dataset
    ood_dataset.transform = true_dataset.transform

    datasets = [true_dataset, ood_dataset]

    anomaly_targets = torch.cat(
        (torch.zeros(len(true_dataset)), torch.ones(len(ood_dataset)))
    )

    concat_datasets = torch.utils.data.ConcatDataset(datasets)

    dataloader = torch.utils.data.DataLoader(
        concat_datasets, batch_size=500, shuffle=False, num_workers=4, pin_memory=False
    )

    return dataloader, anomaly_targets


def loop_over_dataloader(model, dataloader):
    model.eval()

    with torch.no_grad():
        scores = []
        accuracies = []
        for data, target in dataloader:
            data = data.cuda()
            target = target.cuda()

            output = model(data)
            kernel_distance, pred = output.max(1)

            accuracy = pred.eq(target)
            accuracies.append(accuracy.cpu().numpy())

            scores.append(-kernel_distance.cpu().numpy())

    scores = np.concatenate(scores)
    accuracies = np.concatenate(accuracies)

    return scores, accuracies


def get_auroc_ood(true_dataset, ood_dataset, model):
    dataloader, anomaly_targets = prepare_ood_datasets(true_dataset, ood_dataset)

    scores, accuracies = loop_over_dataloader(model, dataloader)

    accuracy = np.mean(accuracies[: len(true_dataset)])
    roc_auc = roc_auc_score(anomaly_targets, scores)

    return accuracy, roc_auc


def get_auroc_classification(dataset, model):
    dataloader = torch.utils.data.DataLoader(
        dataset, batch_size=500, shuffle=False, num_workers=4, pin_memory=False
    )

    scores, accuracies = loop_over_dataloader(model, dataloader)

    accuracy = np.mean(accuracies)
    roc_auc = roc_auc_score(1 - accuracies, scores)

    return accuracy, roc_auc


def get_cifar_svhn_ood(model):
    _, _, _, cifar_test_dataset = get_CIFAR10()
    _, _, _, svhn_test_dataset = get_SVHN()

    return get_auroc_ood(cifar_test_dataset, svhn_test_dataset, model)


def get_fashionmnist_mnist_ood(model):
    _, _, _, fashionmnist_test_dataset = get_FashionMNIST()
    _, _, _, mnist_test_dataset = get_MNIST()

    return get_auroc_ood(fashionmnist_test_dataset, mnist_test_dataset, model)


def get_fashionmnist_notmnist_ood(model):
    _, _, _, fashionmnist_test_dataset = get_FashionMNIST()
    _, _, _, notmnist_test_dataset = get_notMNIST()

    return get_auroc_ood(fashionmnist_test_dataset, notmnist_test_dataset, model)


# --------------------------------------------------------------------------------------
# Helpers used by the ensemble baseline (5 x ResNet-18 softmax models) in the DUQ paper.
# --------------------------------------------------------------------------------------


def ensemble_entropy_scores(models, dataloader):
    """Return (negative) predictive entropy of the ensemble mean and per-sample accuracy."""
    for m in models:
        m.eval()

    scores, accuracies = [], []
    with torch.no_grad():
        for data, target in dataloader:
            data, target = data.cuda(), target.cuda()
            probs = torch.stack([F.softmax(m(data), dim=1) for m in models]).mean(0)
            entropy = -(probs * torch.log(probs + 1e-10)).sum(1)
            accuracies.append(probs.argmax(1).eq(target).cpu().numpy())
            scores.append(entropy.cpu().numpy())

    return np.concatenate(scores), np.concatenate(accuracies)


def get_ensemble_auroc_ood(true_dataset, ood_dataset, models):
    dataloader, anomaly_targets = prepare_ood_datasets(true_dataset, ood_dataset)
    scores, accuracies = ensemble_entropy_scores(models, dataloader)
    accuracy = np.mean(accuracies[: len(true_dataset)])
    roc_auc = roc_auc_score(anomaly_targets, scores)
    return accuracy, roc_auc


def kernel_distance_histogram(model, dataset, bins=50):
    """Histogram of max kernel values, used for the figure comparing in/out distribution."""
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=500, shuffle=False)
    vals = []
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        for data, _ in dataloader:
            vals.append(model(data.to(device)).max(1)[0].cpu())
    vals = torch.cat(vals).numpy()
    hist, edges = np.histogram(vals, bins=bins, range=(0.0, 1.0))
    return hist, edges
