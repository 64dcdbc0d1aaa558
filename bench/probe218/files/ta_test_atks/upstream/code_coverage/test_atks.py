import os
import sys

import pytest
import torch
import torch.nn as nn

# Importing the local torchattacks rather than the installed one
sys.path.insert(0, '..')
import torchattacks  # noqa: E402

from robustbench.data import load_cifar10  # noqa: E402
from robustbench.utils import load_model, clean_accuracy  # noqa: E402


CACHE = {}
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
MODEL_DIR = os.environ.get("TA_MODEL_DIR", "./models")
DATA_DIR = os.environ.get("TA_DATA_DIR", "./data")

# Attacks that need extra arguments or are too slow for the coverage run.
SKIP = ['VANILA', 'GN', 'MultiAttack', 'LGV', 'MIFGSM', 'AutoAttack', 'Square']


def get_model(model_name='Standard', device="cpu", model_dir=MODEL_DIR):
    model = load_model(model_name, model_dir=model_dir, norm='Linf')
    return model.to(device)


def get_data(data_name='CIFAR10', device="cpu", n_examples=5, data_dir=DATA_DIR):
    images, labels = load_cifar10(n_examples=n_examples, data_dir=data_dir)
    return images.to(device), labels.to(device)


def _atk_kwargs(atk_class):
    if atk_class in ('CW', 'EADL1', 'EADEN'):
        return dict(steps=10)
    if atk_class in ('DeepFool', 'SparseFool'):
        return dict(steps=2)
    if atk_class in ('OnePixel', 'Pixle'):
        return dict(steps=2)
    if atk_class in ('FAB', 'APGD', 'APGDT'):
        return dict(steps=5, n_restarts=1)
    return {}


@torch.no_grad()
@pytest.mark.parametrize('atk_class', [atk_class for atk_class in torchattacks.__all__
                                       if atk_class not in torchattacks.__wrapper__ + SKIP])
def test_atks_on_cifar10(atk_class, device=DEVICE):
    global CACHE
    if CACHE.get('model') is None:
        model = get_model(device=device)
        CACHE['model'] = model
    else:
        model = CACHE['model']

    if CACHE.get('images') is None:
        images, labels = get_data(device=device)
        CACHE['images'] = images
        CACHE['labels'] = labels
    else:
        images = CACHE['images']
        labels = CACHE['labels']

    kargs = _atk_kwargs(atk_class)
    atk = eval("torchattacks."+atk_class)(model, **kargs)
    with torch.enable_grad():
        adv_images = atk(images, labels)
    robust_acc = clean_accuracy(model, adv_images, labels)

    assert adv_images.shape == images.shape
    assert adv_images.device == images.device
    assert robust_acc <= clean_accuracy(model, images, labels) + 1e-6


@torch.no_grad()
def test_set_device_roundtrip(device=DEVICE):
    model = get_model(device="cpu")
    images, labels = get_data(device="cpu")
    atk = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=2)
    assert atk.device == torch.device("cpu")

    model = model.to(device)
    atk.set_device(torch.device(device))
    with torch.enable_grad():
        adv_images = atk(images, labels)
    assert adv_images.device.type == torch.device(device).type


@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA GPU")
def test_attack_on_second_gpu():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    model = get_model(device="cuda:1")
    images, labels = get_data(device="cuda:1")
    atk = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=2)
    assert atk.device == torch.device("cuda:1")
    adv_images = atk(images, labels)
    assert adv_images.is_cuda
    assert adv_images.get_device() == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU-only: checks device propagation")
def test_multiattack_keeps_device():
    model = get_model(device="cuda")
    images, labels = get_data(device="cuda")
    atk1 = torchattacks.FGSM(model, eps=8/255)
    atk2 = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=2, random_start=True)
    atk = torchattacks.MultiAttack([atk1, atk2])
    adv_images = atk(images, labels)
    assert adv_images.device == images.device
    torch.cuda.empty_cache()


def test_normalization_used(device=DEVICE):
    model = get_model(device=device)
    images, labels = get_data(device=device)
    mean = [0.4914, 0.4822, 0.4465]
    std = [0.2471, 0.2435, 0.2616]

    class _Normalized(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.register_buffer('mean', torch.tensor(mean).view(1, 3, 1, 1))
            self.register_buffer('std', torch.tensor(std).view(1, 3, 1, 1))

        def forward(self, x):
            return self.inner(x * self.std + self.mean)

    wrapped = _Normalized(model).to(device)
    atk = torchattacks.PGD(wrapped, eps=8/255, alpha=2/255, steps=2)
    atk.set_normalization_used(mean=mean, std=std)
    norm_images = (images - torch.tensor(mean, device=images.device).view(1, 3, 1, 1)) \
        / torch.tensor(std, device=images.device).view(1, 3, 1, 1)
    adv_images = atk(norm_images, labels)
    assert adv_images.shape == images.shape


def test_save_and_load(tmp_path, device=DEVICE):
    model = get_model(device=device)
    images, labels = get_data(device="cpu", n_examples=8)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, labels), batch_size=4,
        pin_memory=torch.cuda.is_available())
    atk = torchattacks.FGSM(model, eps=8/255)
    save_path = os.path.join(tmp_path, "fgsm.pt")
    atk.save(loader, save_path=save_path, verbose=False, save_type='int')
    adv_loader = torchattacks.Attack.load(save_path, batch_size=4)
    n = 0
    for adv_images, adv_labels in adv_loader:
        n += len(adv_images)
        assert adv_images.max() <= 1.0
    assert n == 8
