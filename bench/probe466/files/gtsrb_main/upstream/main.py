from __future__ import print_function
import argparse
import os
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torchvision import datasets, transforms
from torch.autograd import Variable
from torch.optim.lr_scheduler import ReduceLROnPlateau
import numpy as np

# Training settings
parser = argparse.ArgumentParser(description='PyTorch GTSRB example')
parser.add_argument('--data', type=str, default='data', metavar='D',
                    help="folder where data is located. train_data.zip and test_data.zip need to be found in the folder")
parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                    help='input batch size for training (default: 64)')
parser.add_argument('--epochs', type=int, default=25, metavar='N',
                    help='number of epochs to train (default: 25)')
parser.add_argument('--lr', type=float, default=0.0001, metavar='LR',
                    help='learning rate (default: 0.0001)')
parser.add_argument('--seed', type=int, default=1, metavar='S',
                    help='random seed (default: 1)')
parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                    help='how many batches to wait before logging training status')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training')
parser.add_argument('--workers', type=int, default=4, metavar='W',
                    help='dataloader workers (default: 4)')
args = parser.parse_args()

use_gpu = torch.cuda.is_available() and not args.no_cuda
torch.manual_seed(args.seed)
if use_gpu:
    torch.cuda.manual_seed(args.seed)
device = torch.device("cuda" if use_gpu else "cpu")
NUM_CLASSES = 43

### Data Initialization and Loading
from data import initialize_data, data_transforms, data_jitter_hue, data_jitter_brightness, data_jitter_saturation, \
    data_jitter_contrast, data_rotate, data_hvflip, data_shear, data_translate, data_center, data_hflip, data_vflip  # data.py in the same folder
initialize_data(args.data)  # extracts the zip files, makes a validation set

# Apply data transformations on the training images to augment dataset
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.ConcatDataset([datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_transforms),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_jitter_brightness),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_jitter_hue),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_jitter_contrast),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_jitter_saturation),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_translate),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_rotate),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_hvflip),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_center),
                                    datasets.ImageFolder(args.data + '/train_images',
                                                         transform=data_shear)]),
    batch_size=args.batch_size, shuffle=True,
    num_workers=args.workers, pin_memory=use_gpu)

val_loader = torch.utils.data.DataLoader(
    datasets.ImageFolder(args.data + '/val_images',
                         transform=data_transforms),
    batch_size=args.batch_size, shuffle=False,
    num_workers=args.workers, pin_memory=use_gpu, drop_last=False)

# Neural Network and Optimizer
# We define neural net in model.py so that it can be reused by the evaluate.py script
from model import Net
model = Net()

if use_gpu:
    model.cuda()

optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr)
scheduler = ReduceLROnPlateau(optimizer, 'min', patience=5, factor=0.5, verbose=True)


def train(epoch):
    model.train()
    correct = 0
    training_loss = 0
    t0 = time.time()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = Variable(data), Variable(target)
        if use_gpu:
            data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        max_index = output.max(dim=1)[1]
        correct += (max_index == target).sum()
        training_loss += loss
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss per example: {:.6f}\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.data.item() / (args.batch_size * args.log_interval), loss.data.item()))
    print('\nTraining set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%), {:.1f}s\n'.format(
        training_loss / len(train_loader.dataset), correct, len(train_loader.dataset),
        100. * correct / len(train_loader.dataset), time.time() - t0))


def validation():
    model.eval()
    validation_loss = 0
    correct = 0
    confusion = torch.zeros(NUM_CLASSES, NUM_CLASSES, device=device)
    for data, target in val_loader:
        with torch.no_grad():
            data, target = Variable(data), Variable(target)
            if use_gpu:
                data = data.cuda(non_blocking=True)
                target = target.cuda(non_blocking=True)
            output = model(data)
            validation_loss += F.nll_loss(output, target, reduction='sum').data.item()  # sum up batch loss
            pred = output.data.max(1, keepdim=True)[1]  # get the index of the max log-probability
            correct += pred.eq(target.data.view_as(pred)).cpu().sum()
            confusion.index_put_((target, pred.view(-1)), torch.ones_like(target, dtype=confusion.dtype), accumulate=True)

    validation_loss /= len(val_loader.dataset)
    scheduler.step(np.around(validation_loss, 2))
    per_class = confusion.diag() / confusion.sum(1).clamp(min=1)
    worst = per_class.argsort()[:5].tolist()
    print('\nValidation set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'.format(
        validation_loss, correct, len(val_loader.dataset),
        100. * correct / len(val_loader.dataset)))
    print('Worst classes: ' + ', '.join('{}={:.3f}'.format(c, per_class[c].item()) for c in worst) + '\n')
    return 100. * correct / len(val_loader.dataset)


for epoch in range(1, args.epochs + 1):
    train(epoch)
    validation()
    model_file = 'model_' + str(epoch) + '.pth'
    torch.save(model.state_dict(), model_file)
    print('\nSaved model to ' + model_file + '. You can run `python evaluate.py --model ' + model_file + '` to generate the Kaggle formatted csv file\n')
