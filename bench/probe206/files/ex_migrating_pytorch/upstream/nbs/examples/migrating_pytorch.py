# Migrating from plain PyTorch to fastai
# Exported from nbs/examples/migrating_pytorch.ipynb
#
# This example takes the classic PyTorch MNIST example (a small CNN trained with
# an explicit loop) and shows how little has to change to train it with a fastai
# `Learner` instead: the model, the DataLoaders and the optimizer all stay the same.

import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms

from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.callback.progress import ProgressCallback
from fastai.callback.schedule import Learner  # noqa: F811 (patches fit_one_cycle onto Learner)
from fastai.callback.data import CudaCallback
from fastai.metrics import accuracy
from fastai.optimizer import OptimWrapper


class Net(nn.Module):
    "The network from the official PyTorch MNIST example"
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def get_loaders(data_dir, batch_size, test_batch_size, use_cuda):
    kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}
    tfms = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize((0.1307,), (0.3081,))
    ])
    train_loader = torch.utils.data.DataLoader(
        datasets.MNIST(data_dir, train=True, download=True, transform=tfms),
        batch_size=batch_size, shuffle=True, **kwargs)
    test_loader = torch.utils.data.DataLoader(
        datasets.MNIST(data_dir, train=False, transform=tfms),
        batch_size=test_batch_size, shuffle=True, **kwargs)
    return train_loader, test_loader


def train(args, model, device, train_loader, optimizer, epoch):
    "The original PyTorch training loop, kept for comparison"
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


def opt_func(params, **kwargs): return OptimWrapper(params, torch.optim.Adadelta, **kwargs)


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example, trained with fastai')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N')
    parser.add_argument('--epochs', type=int, default=14, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--plain-pytorch', action='store_true', default=False,
                        help='train with the original loop instead of fastai')
    parser.add_argument('--data-dir', type=str, default='../data')
    parser.add_argument('--save-model', action='store_true', default=False)
    args = parser.parse_args()

    use_cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_cuda else "cpu")

    train_loader, test_loader = get_loaders(args.data_dir, args.batch_size, args.test_batch_size, use_cuda)

    if args.plain_pytorch:
        model = Net().to(device)
        optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
        scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        for epoch in range(1, args.epochs + 1):
            train(args, model, device, train_loader, optimizer, epoch)
            test(model, device, test_loader)
            scheduler.step()
    else:
        # fastai: wrap the two torch DataLoaders and move batches to the GPU
        data = DataLoaders(train_loader, test_loader).cuda()
        learn = Learner(data, Net(), loss_func=F.nll_loss, opt_func=opt_func, metrics=accuracy,
                        cbs=CudaCallback)
        learn.fit_one_cycle(args.epochs, args.lr)
        model = learn.model

    if args.save_model:
        torch.save(model.state_dict(), Path(args.data_dir)/"mnist_cnn.pt")


def load_for_inference(fname, use_cuda=True):
    "Reload the weights saved above, e.g. in a notebook"
    model = Net()
    state = torch.load(fname, map_location='cuda:0' if use_cuda else 'cpu')
    model.load_state_dict(state)
    return model.eval()


if __name__ == '__main__':
    main()
