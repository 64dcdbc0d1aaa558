import os
import sys
import time

import pytest
import torch

sys.path.insert(0, '..')
import torchattacks  # noqa: E402
from robustbench.data import load_cifar10  # noqa: E402
from robustbench.utils import load_model, clean_accuracy  # noqa: E402

# Tests run on the first GPU when one is present; CI (GitHub Actions) is CPU only.
device = "cuda" if torch.cuda.is_available() else "cpu"

CACHE = {}
N_EXAMPLES = 5


def get_model(model_name='Standard', device="cpu", model_dir='./models'):
    model = load_model(model_name, model_dir=model_dir, norm='Linf')
    return model.to(device)


def get_data(data_name='CIFAR10', device="cpu", n_examples=N_EXAMPLES, data_dir='./data'):
    images, labels = load_cifar10(n_examples=n_examples, data_dir=data_dir)
    return images.to(device), labels.to(device)


def _prepare():
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
        images, labels = CACHE['images'], CACHE['labels']

    if CACHE.get('clean_acc') is None:
        CACHE['clean_acc'] = clean_accuracy(model, images, labels)
    return model, images, labels


def _run(atk, images, labels):
    start = time.time()
    with torch.enable_grad():
        adv_images = atk(images, labels)
    end = time.time()
    return adv_images, end - start


@torch.no_grad()
@pytest.mark.parametrize('atk_class', [
    'FGSM', 'BIM', 'RFGSM', 'PGD', 'EOTPGD', 'FFGSM', 'TPGD', 'MIFGSM',
    'UPGD', 'DIFGSM', 'NIFGSM', 'PGDRS', 'SINIFGSM', 'VMIFGSM', 'VNIFGSM',
    'CW', 'PGDL2', 'PGDRSL2', 'DeepFool', 'SparseFool', 'OnePixel', 'Pixle',
    'FAB', 'AutoAttack', 'Square', 'SPSA', 'JSMA', 'EADL1', 'EADEN', 'PIFGSM', 'PIFGSMPP',
])
def test_atks_on_cifar10(atk_class, device=device):
    model, images, labels = _prepare()
    kargs = {}
    if atk_class in ['SPSA']:
        kargs['max_batch_size'] = 5
    if atk_class in ['DeepFool', 'SparseFool']:
        kargs['steps'] = 5
    if atk_class in ['OnePixel', 'Pixle']:
        kargs['steps'] = 2
    if atk_class in ['AutoAttack']:
        kargs['n_classes'] = 10

    atk = getattr(torchattacks, atk_class)(model, **kargs)
    adv_images, elapsed = _run(atk, images, labels)
    robust_acc = clean_accuracy(model, adv_images, labels)

    sec = float(elapsed)
    print('{0:<12}: clean_acc={1:2.2f} robust_acc={2:2.2f} sec={3:2.2f}'.format(
        atk_class, CACHE['clean_acc'], robust_acc, sec))

    if 'targeted' in atk.supported_mode:
        atk.set_mode_targeted_random(quiet=True)
        adv_images, elapsed = _run(atk, images, labels)
        robust_acc = clean_accuracy(model, adv_images, labels)
        sec = float(elapsed)
        print('{0:<12}: clean_acc={1:2.2f} robust_acc={2:2.2f} sec={3:2.2f}'.format(
            "- targeted", CACHE['clean_acc'], robust_acc, sec))

    assert adv_images.shape == images.shape
    assert (adv_images.max() <= 1 + 1e-4) and (adv_images.min() >= -1e-4)


def test_multi_atks_on_cifar10(device=device):
    model, images, labels = _prepare()
    atk1 = torchattacks.FGSM(model, eps=2/255)
    atk2 = torchattacks.PGD(model, eps=2/255, alpha=2/255, steps=10, random_start=True)
    atk = torchattacks.MultiAttack([atk1, atk2])
    adv_images, _ = _run(atk, images, labels)
    robust_acc = clean_accuracy(model, adv_images, labels)
    assert robust_acc <= CACHE['clean_acc']


def test_save_and_load(tmp_path, device=device):
    model, images, labels = _prepare()
    atk = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=2)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images.cpu(), labels.cpu()), batch_size=2)
    save_path = os.path.join(str(tmp_path), 'adv.pt')
    atk.save(loader, save_path=save_path, verbose=False, save_predictions=True,
             save_clean_inputs=True)
    adv_loader = atk.load(save_path, load_predictions=True, load_clean_inputs=True)
    adv_images, adv_labels, preds, clean_inputs = next(iter(adv_loader))
    assert adv_images.shape[1:] == images.shape[1:]
    assert (clean_inputs - images[:len(clean_inputs)].cpu()).abs().max() < 1e-6


def test_save_int(tmp_path, device=device):
    model, images, labels = _prepare()
    atk = torchattacks.FGSM(model, eps=8/255)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images.cpu(), labels.cpu()), batch_size=5)
    save_path = os.path.join(str(tmp_path), 'adv_int.pt')
    atk.save(loader, save_path=save_path, verbose=False, save_type='int')
    adv_loader = atk.load(save_path)
    adv_images, _ = next(iter(adv_loader))
    assert adv_images.dtype == torch.float32


def test_normalization(device=device):
    model, images, labels = _prepare()
    atk = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=2)
    atk.set_normalization_used(mean=[0.4914, 0.4822, 0.4465], std=[0.2471, 0.2435, 0.2616])
    adv_images, _ = _run(atk, images, labels)
    assert adv_images.shape == images.shape
