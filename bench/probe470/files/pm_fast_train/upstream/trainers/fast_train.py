"""Fast CIFAR-10 training (adapted from tysam-code/hlb-CIFAR10, "speedyresnet").

Trains a small ResNet-like network to ~94% test accuracy in a few seconds on a
single A100, which makes it practical to train the dozens of reference models
that RMIA/LiRA-style attacks need. Everything is kept on the GPU in fp16.
"""

import copy
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# Sets up the hyperparameters. Most of them were found by a coarse grid search.
batchsize = 1024
bias_scaler = 64
# To replicate the ~95.79%-accuracy-in-110-seconds runs, you can change the base_depth from 64->128, train_epochs from 12.1->90, ['ema'] epochs 10->80, cutmix_size 3->10, and cutmix_epochs 6->80
hyp = {
    "opt": {
        "bias_lr": 1.525 * bias_scaler / 512,
        "non_bias_lr": 1.525 / 512,
        "bias_decay": 6.687e-4 * batchsize / bias_scaler,
        "non_bias_decay": 6.687e-4 * batchsize,
        "scaling_factor": 1.0 / 9,
        "percent_start": 0.23,
        "loss_scale_scaler": 1.0 / 32,
    },
    "net": {
        "whitening": {
            "kernel_size": 2,
            "num_examples": 50000,
        },
        "batch_norm_momentum": 0.4,
        "conv_norm_pow": 2.6,
        "cutmix_size": 3,
        "cutmix_epochs": 6,
        "pad_amount": 2,
        "base_depth": 64,
    },
    "misc": {
        "ema": {
            "epochs": 10,
            "decay_base": 0.95,
            "decay_pow": 3.0,
            "every_n_steps": 5,
        },
        "train_epochs": 12.1,
        "device": "cuda",
    },
}

scaler = 2.0
depths = {
    "init": round(scaler**-1 * hyp["net"]["base_depth"]),
    "block1": round(scaler**0 * hyp["net"]["base_depth"]),
    "block2": round(scaler**2 * hyp["net"]["base_depth"]),
    "block3": round(scaler**3 * hyp["net"]["base_depth"]),
    "num_classes": 10,
}


class BatchNorm(nn.BatchNorm2d):
    def __init__(self, num_features, momentum, eps=1e-12, weight=False, bias=True):
        super().__init__(num_features, eps=eps, momentum=1 - momentum)
        self.weight.requires_grad = weight
        self.bias.requires_grad = bias


class Conv(nn.Conv2d):
    def __init__(self, channels_in, channels_out, kernel_size=3, padding="same", bias=False, norm=False):
        super().__init__(channels_in, channels_out, kernel_size=kernel_size, padding=padding, bias=bias)
        self.kwargs = {"norm": norm}

    def forward(self, x):
        if self.training and self.kwargs["norm"]:
            with torch.no_grad():
                self.weight.data = self.weight.data / (
                    self.weight.data.norm(p=hyp["net"]["conv_norm_pow"], dim=(2, 3), keepdim=True) + 1e-10
                )
        return super().forward(x)


class ConvGroup(nn.Module):
    def __init__(self, channels_in, channels_out, norm):
        super().__init__()
        self.conv1 = Conv(channels_in, channels_out, norm=norm)
        self.pool1 = nn.MaxPool2d(2)
        self.norm1 = BatchNorm(channels_out, hyp["net"]["batch_norm_momentum"])
        self.conv2 = Conv(channels_out, channels_out, norm=norm)
        self.norm2 = BatchNorm(channels_out, hyp["net"]["batch_norm_momentum"])
        self.activ = nn.GELU()

    def forward(self, x):
        x = self.conv1(x)
        x = self.pool1(x)
        x = self.norm1(x)
        x = self.activ(x)
        residual = x
        x = self.conv2(x)
        x = self.norm2(x)
        x = self.activ(x)
        x = x + residual
        return x


class TemperatureScaler(nn.Module):
    def __init__(self, init_val):
        super().__init__()
        self.scaler = torch.tensor(init_val)

    def forward(self, x):
        x.float()  # save precision for the gradients in the backwards pass
        return x.mul(self.scaler)


class FastGlobalMaxPooling(nn.Module):
    def forward(self, x):
        # Previously was chained torch.max calls.
        # requires less time than AdaptiveMax2dPooling -- about ~.3s for the entire run, in fact (which is pretty significant! :O :D :O :O <3 <3 <3 <3)
        return torch.amax(x, dim=(2, 3))  # Global maximum pooling


class SpeedyResNet(nn.Module):
    def __init__(self, network_dict):
        super().__init__()
        self.net_dict = network_dict

    def forward(self, x):
        if not self.training:
            x = torch.cat((x, torch.flip(x, (-1,))))
        x = self.net_dict["initial_block"]["whiten"](x)
        x = self.net_dict["initial_block"]["activation"](x)
        x = self.net_dict["conv_group_1"](x)
        x = self.net_dict["conv_group_2"](x)
        x = self.net_dict["conv_group_3"](x)
        x = self.net_dict["pooling"](x)
        x = self.net_dict["linear"](x)
        x = self.net_dict["temperature"](x)
        if not self.training:
            # Average the predictions from the lr-flipped inputs during eval
            orig, flipped = x.split(x.shape[0] // 2, dim=0)
            x = 0.5 * orig + 0.5 * flipped
        return x


def make_net(num_classes=10):
    whiten_conv_depth = 3 * hyp["net"]["whitening"]["kernel_size"] ** 2
    network_dict = nn.ModuleDict(
        {
            "initial_block": nn.ModuleDict(
                {
                    "whiten": Conv(3, whiten_conv_depth, kernel_size=hyp["net"]["whitening"]["kernel_size"], padding=0),
                    "activation": nn.GELU(),
                }
            ),
            "conv_group_1": ConvGroup(2 * whiten_conv_depth, depths["block1"], norm=False),
            "conv_group_2": ConvGroup(depths["block1"], depths["block2"], norm=False),
            "conv_group_3": ConvGroup(depths["block2"], depths["block3"], norm=False),
            "pooling": FastGlobalMaxPooling(),
            "linear": nn.Linear(depths["block3"], num_classes, bias=False),
            "temperature": TemperatureScaler(hyp["opt"]["scaling_factor"]),
        }
    )

    net = SpeedyResNet(network_dict)
    net = net.to(hyp["misc"]["device"])
    net = net.to(memory_format=torch.channels_last)  # to appropriately use tensor cores/avoid thrash while training
    net.train()
    net.half()  # Convert network to half before initializing the initial whitening layer.

    return net


def get_patches(x, patch_shape):
    c, (h, w) = x.shape[1], patch_shape
    return x.unfold(2, h, 1).unfold(3, w, 1).transpose(1, 3).reshape(-1, c, h, w).float()


def get_whitening_parameters(patches):
    n, c, h, w = patches.shape
    patches_flat = patches.view(n, -1)
    est_patch_covariance = (patches_flat.T @ patches_flat) / n
    eigenvalues, eigenvectors = torch.linalg.eigh(est_patch_covariance, UPLO="U")
    return eigenvalues.flip(0).view(-1, 1, 1, 1), eigenvectors.T.reshape(c * h * w, c, h, w).flip(0)


def init_whitening_conv(layer, train_set, num_examples=None, pad_amount=None, freeze=True, whiten_splits=None):
    if pad_amount is None:
        pad_amount = hyp["net"]["pad_amount"]
    if num_examples is None:
        num_examples = hyp["net"]["whitening"]["num_examples"]
    if whiten_splits is None:
        whiten_splits = 5000  # Sets the batch size for the whitening split

    # Compute the whitening parameters in fp32 on the host for numerical stability
    data = train_set[:num_examples].float().cpu()
    eigenvalue_list, eigenvector_list = [], []
    for i in range(0, len(data), whiten_splits):
        eigenvalues, eigenvectors = get_whitening_parameters(
            get_patches(data[i:i + whiten_splits], patch_shape=layer.weight.data.shape[2:])
        )
        eigenvalue_list.append(eigenvalues)
        eigenvector_list.append(eigenvectors)

    eigenvalues = torch.stack(eigenvalue_list, dim=0).mean(0)
    eigenvectors = torch.stack(eigenvector_list, dim=0).mean(0)
    eps = 1e-12
    set_whitening_conv(layer, eigenvalues.to(dtype=layer.weight.dtype), eigenvectors.to(dtype=layer.weight.dtype), freeze=freeze)
    data = data[:1]  # free memory


def set_whitening_conv(conv_layer, eigenvalues, eigenvectors, eps=1e-2, freeze=True):
    shape = conv_layer.weight.data.shape
    eigenvectors_sliced = (eigenvectors / torch.sqrt(eigenvalues + eps))[-shape[0]:, :, :, :]
    conv_layer.weight.data = torch.cat((eigenvectors_sliced, -eigenvectors_sliced), dim=0).to(conv_layer.weight.device)
    conv_layer.weight.requires_grad = not freeze


def batch_crop(inputs, crop_size):
    crop_mask_batch = torch.ones_like(inputs, dtype=torch.bool)
    border = (inputs.shape[-1] - crop_size) // 2
    crop_mask_batch[:, :, :border, :] = False
    crop_mask_batch[:, :, -border:, :] = False
    crop_mask_batch[:, :, :, :border] = False
    crop_mask_batch[:, :, :, -border:] = False
    return inputs.masked_select(crop_mask_batch).view(inputs.shape[0], inputs.shape[1], crop_size, crop_size)


def batch_flip_lr(batch_images, flip_chance=0.5):
    return torch.where(torch.rand_like(batch_images[:, 0, 0, 0].view(-1, 1, 1, 1)) < flip_chance, torch.flip(batch_images, (-1,)), batch_images)


loss_fn = nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none")


def fit_model(train_images, train_targets, test_images=None, test_targets=None, epochs=None, logger=None):
    """Trains one speedyresnet model and returns it on the host (fp32)."""
    device = hyp["misc"]["device"]
    epochs = epochs or math.ceil(hyp["misc"]["train_epochs"])
    train_images = train_images.to(device).half()
    train_targets = train_targets.to(device)

    net = make_net()
    init_whitening_conv(net.net_dict["initial_block"]["whiten"], train_images)

    non_bias_params = [p for n, p in net.named_parameters() if "bias" not in n and p.requires_grad]
    bias_params = [p for n, p in net.named_parameters() if "bias" in n and p.requires_grad]
    opt = torch.optim.SGD(non_bias_params, lr=hyp["opt"]["non_bias_lr"], momentum=0.85, nesterov=True, weight_decay=hyp["opt"]["non_bias_decay"])
    opt_bias = torch.optim.SGD(bias_params, lr=hyp["opt"]["bias_lr"], momentum=0.85, nesterov=True, weight_decay=hyp["opt"]["bias_decay"])

    num_steps = epochs * (len(train_images) // batchsize)
    lr_sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=hyp["opt"]["non_bias_lr"], total_steps=num_steps, pct_start=hyp["opt"]["percent_start"], anneal_strategy="linear", cycle_momentum=False)
    lr_sched_bias = torch.optim.lr_scheduler.OneCycleLR(opt_bias, max_lr=hyp["opt"]["bias_lr"], total_steps=num_steps, pct_start=hyp["opt"]["percent_start"], anneal_strategy="linear", cycle_momentum=False)

    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    total_time_seconds = 0.0
    loss_scale = hyp["opt"]["loss_scale_scaler"]

    for epoch in range(epochs):
        torch.cuda.synchronize()
        starter.record()
        net.train()
        perm = torch.randperm(len(train_images), device=device)
        for step in range(len(train_images) // batchsize):
            idx = perm[step * batchsize:(step + 1) * batchsize]
            inputs = batch_flip_lr(train_images[idx])
            inputs = inputs.to(memory_format=torch.channels_last)
            targets = train_targets[idx]
            outputs = net(inputs)
            loss = loss_fn(outputs, targets).mul(loss_scale).sum().div(loss_scale)
            loss.backward()
            opt.step()
            opt_bias.step()
            lr_sched.step()
            lr_sched_bias.step()
            opt.zero_grad(set_to_none=True)
            opt_bias.zero_grad(set_to_none=True)
        ender.record()
        ender.synchronize()
        total_time_seconds += 1e-3 * starter.elapsed_time(ender)
        if logger is not None:
            logger.info(f"speedyresnet epoch {epoch}: {total_time_seconds:.2f}s elapsed (device time)")

    if test_images is not None:
        net.eval()
        with torch.no_grad():
            preds = torch.cat([
                net(test_images[i:i + 2000].to(device).half()).argmax(-1).cpu()
                for i in range(0, len(test_images), 2000)
            ])
        acc = (preds == test_targets.cpu()).float().mean().item()
        if logger is not None:
            logger.info(f"speedyresnet test accuracy {acc:.4f}")

    return net.float().to("cpu")
