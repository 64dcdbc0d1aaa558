#!/usr/bin/env python
# coding: utf-8

# # Quantus getting started (MNIST, LeNet)
#
# This script trains a LeNet on MNIST, explains a test batch with Captum
# (Saliency, IntegratedGradients) through Quantus, and scores the
# explanations with one metric of each Quantus category: robustness
# (Max-Sensitivity), faithfulness (Faithfulness Correlation), complexity
# (Sparseness) and randomisation (Random Logit).
#
# Converted from the getting-started notebook; runs end to end in ~6 min on
# one GPU, the robustness metric dominates.

import gc
import os
import warnings

import numpy as np
import pandas as pd
import torch
import torchvision
import captum
from captum.attr import Saliency, IntegratedGradients

import quantus

warnings.filterwarnings("ignore", category=UserWarning)

SEED = 42
np.random.seed(SEED)
torch.manual_seed(SEED)
torch.cuda.manual_seed(SEED)

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print(f"quantus {quantus.__version__}, captum {captum.__version__}, device {device}")


# ## 1) Preliminaries
#
# ### 1.1 Load datasets

transformer = torchvision.transforms.Compose([torchvision.transforms.ToTensor()])
train_set = torchvision.datasets.MNIST(root="./sample_data", train=True, transform=transformer, download=True)
test_set = torchvision.datasets.MNIST(root="./sample_data", train=False, transform=transformer, download=True)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=128, shuffle=True, pin_memory=True)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=200, pin_memory=True)


# ### 1.2 Train a LeNet model

class LeNet(torch.nn.Module):
    """Network architecture from: https://github.com/ChawDoe/LeNet5-MNIST-PyTorch."""

    def __init__(self):
        super().__init__()
        self.conv_1 = torch.nn.Conv2d(1, 6, 5)
        self.pool_1 = torch.nn.MaxPool2d(2, 2)
        self.relu_1 = torch.nn.ReLU()
        self.conv_2 = torch.nn.Conv2d(6, 16, 5)
        self.pool_2 = torch.nn.MaxPool2d(2, 2)
        self.relu_2 = torch.nn.ReLU()
        self.fc_1 = torch.nn.Linear(256, 120)
        self.relu_3 = torch.nn.ReLU()
        self.fc_2 = torch.nn.Linear(120, 84)
        self.relu_4 = torch.nn.ReLU()
        self.fc_3 = torch.nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool_1(self.relu_1(self.conv_1(x)))
        x = self.pool_2(self.relu_2(self.conv_2(x)))
        x = x.view(x.shape[0], -1)
        x = self.relu_3(self.fc_1(x))
        x = self.relu_4(self.fc_2(x))
        x = self.fc_3(x)
        return x


model = LeNet()
learning_rate = 0.001
epochs = 20
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
criterion = torch.nn.CrossEntropyLoss(reduction="mean")


def train_model(model, train_data, test_data, device, epochs, criterion, optimizer, evaluate=False):
    """Train torch model."""
    model.train()

    for epoch in range(epochs):
        for images, labels in train_data:
            images, labels = images.to(device), labels.to(device)

            optimizer.zero_grad()
            logits = model(images)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()

        # Evaluate model!
        if evaluate:
            predictions, labels = evaluate_model(model, test_data, device)
            test_acc = np.mean(np.argmax(predictions.cpu().numpy(), axis=1) == labels.cpu().numpy())
            print(f"Epoch {epoch + 1}/{epochs} - test accuracy: {(100 * test_acc):.2f}% and CE loss {loss.item():.2f}")

    return model


def evaluate_model(model, data, device):
    """Evaluate torch model."""
    model.eval()
    logits = torch.Tensor().to(device)
    targets = torch.LongTensor().to(device)

    with torch.no_grad():
        for images, labels in data:
            images, labels = images.to(device), labels.to(device)
            logits = torch.cat([logits, model(images)])
            targets = torch.cat([targets, labels])

    return torch.nn.functional.softmax(logits, dim=1), targets


path_model_weights = "./tutorials/assets/mnist"
if os.path.isfile(path_model_weights):
    model.load_state_dict(torch.load(path_model_weights, map_location=device))
    model = model.to(device)
else:
    model = train_model(
        model=model.to(device),
        train_data=train_loader,
        test_data=test_loader,
        device=device,
        epochs=epochs,
        criterion=criterion,
        optimizer=optimizer,
        evaluate=True,
    )
    os.makedirs(os.path.dirname(path_model_weights), exist_ok=True)
    torch.save(model.state_dict(), path_model_weights)

predictions, labels = evaluate_model(model, test_loader, device)
test_acc = np.mean(np.argmax(predictions.cpu().numpy(), axis=1) == labels.cpu().numpy())
print(f"Model test accuracy: {(100 * test_acc):.2f}%")


# ### 1.3 Load gradient-based explanations

x_batch, y_batch = next(iter(test_loader))
x_batch, y_batch = x_batch.to(device), y_batch.to(device)

# Generate normalised Saliency and Integrated Gradients attributions of the
# first batch of the test set.
a_batch_saliency = quantus.normalise_func.normalise_by_negative(
    Saliency(model).attribute(inputs=x_batch, target=y_batch, abs=True).sum(axis=1).cpu().numpy()
)
a_batch_intgrad = quantus.normalise_func.normalise_by_negative(
    IntegratedGradients(model)
    .attribute(inputs=x_batch, target=y_batch, baselines=torch.zeros_like(x_batch))
    .sum(axis=1)
    .cpu()
    .numpy()
)

# Save x_batch and y_batch as numpy arrays that will be used to call metric
# instances.
x_batch, y_batch = x_batch.cpu().numpy(), y_batch.cpu().numpy()

# Quickly assert some explanations properties.
assert [isinstance(obj, np.ndarray) for obj in [x_batch, y_batch, a_batch_saliency, a_batch_intgrad]]


# ## 2) Quantitative evaluation using Quantus
#
# ### 2.1 One metric at a time

max_sensitivity = quantus.MaxSensitivity(
    nr_samples=10,
    lower_bound=0.2,
    norm_numerator=quantus.norm_func.fro_norm,
    norm_denominator=quantus.norm_func.fro_norm,
    perturb_func=quantus.perturb_func.uniform_noise,
    similarity_func=quantus.similarity_func.difference,
    abs=True,
    normalise=True,
    disable_warnings=True,
)

scores_intgrad = max_sensitivity(
    model=model,
    x_batch=x_batch,
    y_batch=y_batch,
    a_batch=a_batch_intgrad,
    device=device,
    explain_func=quantus.explain,
    explain_func_kwargs={"method": "IntegratedGradients"},
)
print(f"Max-Sensitivity (IntegratedGradients): {np.mean(scores_intgrad):.4f}")


# ### 2.2 Several metrics and methods with quantus.evaluate

metrics = {
    "Robustness": quantus.MaxSensitivity(
        nr_samples=10,
        lower_bound=0.2,
        norm_numerator=quantus.norm_func.fro_norm,
        norm_denominator=quantus.norm_func.fro_norm,
        perturb_func=quantus.perturb_func.uniform_noise,
        similarity_func=quantus.similarity_func.difference,
        abs=True,
        normalise=True,
        disable_warnings=True,
    ),
    "Faithfulness": quantus.FaithfulnessCorrelation(
        nr_runs=10,
        subset_size=224,
        perturb_baseline="black",
        perturb_func=quantus.perturb_func.baseline_replacement_by_indices,
        similarity_func=quantus.similarity_func.correlation_pearson,
        abs=True,
        normalise=True,
        return_aggregate=True,
        disable_warnings=True,
    ),
    "Complexity": quantus.Sparseness(
        abs=True,
        normalise=True,
        disable_warnings=True,
    ),
    "Randomisation": quantus.RandomLogit(
        num_classes=10,
        similarity_func=quantus.similarity_func.ssim,
        abs=True,
        normalise=True,
        disable_warnings=True,
    ),
}

xai_methods = {
    "Saliency": a_batch_saliency,
    "IntegratedGradients": a_batch_intgrad,
}

results = quantus.evaluate(
    metrics=metrics,
    xai_methods=xai_methods,
    model=model,
    x_batch=x_batch,
    y_batch=y_batch,
    agg_func=np.mean,
    progress=True,
    call_kwargs={"0": {"device": device, "softmax": False}},
)

df = pd.DataFrame(results)
print(df)
df.to_csv("quantus_mnist_results.csv")

# Release what the metric instances held on the device before the
# (optional) sensitivity sweep below.
del metrics
gc.collect()
torch.cuda.empty_cache()


# ### 2.3 Sensitivity of Faithfulness Correlation to the baseline

baselines = ["black", "white", "uniform", "mean"]
scores = {}
for baseline in baselines:
    metric = quantus.FaithfulnessCorrelation(
        nr_runs=10,
        subset_size=224,
        perturb_baseline=baseline,
        perturb_func=quantus.perturb_func.baseline_replacement_by_indices,
        similarity_func=quantus.similarity_func.correlation_pearson,
        abs=True,
        normalise=True,
        return_aggregate=True,
        disable_warnings=True,
    )
    scores[baseline] = metric(
        model=model,
        x_batch=x_batch,
        y_batch=y_batch,
        a_batch=a_batch_saliency,
        device=device,
    )[0]
print(pd.Series(scores, name="FaithfulnessCorrelation(Saliency)"))
