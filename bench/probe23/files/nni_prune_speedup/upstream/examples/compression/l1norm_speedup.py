"""NNI: L1-norm channel pruning + ModelSpeedup + short fine-tune (CIFAR-10 VGG-16).

    python l1norm_speedup.py --sparse-ratio 0.5 --finetune-epochs 10
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import MultiStepLR
from torchvision import datasets, transforms

from nni.compression.pruning import L1NormPruner
from nni.compression.speedup import ModelSpeedup
from nni.compression.utils import auto_set_denpendency_group_ids

from models.cifar10.vgg import VGG  # noqa: E402

device = torch.device("cuda:0")


def loaders(batch_size):
    norm = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))
    train = datasets.CIFAR10("./data", train=True, download=True, transform=transforms.Compose([
        transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm]))
    test = datasets.CIFAR10("./data", train=False, transform=transforms.Compose([transforms.ToTensor(), norm]))
    return (torch.utils.data.DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=4),
            torch.utils.data.DataLoader(test, batch_size=256, shuffle=False, num_workers=4))


def train_epoch(model, loader, optimizer, scaler):
    model.train()
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast():
            loss = F.cross_entropy(model(data), target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


@torch.no_grad()
def test(model, loader):
    model.eval()
    correct = 0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        correct += model(data).argmax(dim=1).eq(target).sum().item()
    return 100.0 * correct / len(loader.dataset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="checkpoints/vgg16_cifar10.pth")
    ap.add_argument("--sparse-ratio", type=float, default=0.5)
    ap.add_argument("--finetune-epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=128)
    args = ap.parse_args()

    train_loader, test_loader = loaders(args.batch_size)
    model = VGG(depth=16).to(device)
    model.load_state_dict(torch.load(args.pretrained, map_location=device))
    print(f"original acc: {test(model, test_loader):.2f}")

    config_list = [{
        "op_types": ["Conv2d"],
        "sparse_ratio": args.sparse_ratio,
        "exclude_op_names": ["feature.0"],
    }]
    dummy_input = torch.rand(8, 3, 32, 32).to(device)
    config_list = auto_set_denpendency_group_ids(model, config_list, dummy_input)

    pruner = L1NormPruner(model, config_list)
    _, masks = pruner.compress()
    pruner.unwrap_model()

    t0 = time.time()
    ModelSpeedup(model, dummy_input, masks).speedup_model()
    print(f"speedup took {time.time() - t0:.1f}s")
    print(model)
    print(f"pruned acc (before fine-tune): {test(model, test_loader):.2f}")

    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    scheduler = MultiStepLR(optimizer, milestones=[int(args.finetune_epochs * 0.5)], gamma=0.1)
    scaler = torch.cuda.amp.GradScaler()
    best = 0.0
    for epoch in range(args.finetune_epochs):
        train_epoch(model, train_loader, optimizer, scaler)
        scheduler.step()
        acc = test(model, test_loader)
        if acc > best:
            best = acc
            state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
            torch.save(state, "checkpoints/vgg16_pruned_finetuned.pth")
        print(f"epoch {epoch}: acc {acc:.2f} (best {best:.2f})")
    print(f"peak mem {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
