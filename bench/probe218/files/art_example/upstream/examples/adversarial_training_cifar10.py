"""
This is an example of how to use ART for adversarial training of a model with Fast is better than free protocol
and with the Madry PGD protocol, both with a PyTorch PreAct-ResNet18 on CIFAR-10.
"""
import argparse
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
from torch.optim.lr_scheduler import MultiStepLR

from art.attacks.evasion import ProjectedGradientDescent
from art.data_generators import PyTorchDataGenerator
from art.defences.trainer import AdversarialTrainerFBFPyTorch, AdversarialTrainerMadryPGD
from art.estimators.classification import PyTorchClassifier
from art.utils import load_cifar10

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger(__name__)


class PreActBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(PreActBlock, self).__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)

        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False)
            )

    def forward(self, x):
        out = F.relu(self.bn1(x))
        shortcut = self.shortcut(out) if hasattr(self, "shortcut") else x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        out += shortcut
        return out


class PreActResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=10):
        super(PreActResNet, self).__init__()
        self.in_planes = 64

        self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        self.layer1 = self._make_layer(block, 64, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 128, num_blocks[1], stride=2)
        self.layer3 = self._make_layer(block, 256, num_blocks[2], stride=2)
        self.layer4 = self._make_layer(block, 512, num_blocks[3], stride=2)
        self.bn = nn.BatchNorm2d(512 * block.expansion)
        self.linear = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.conv1(x)
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = F.relu(self.bn(out))
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


def PreActResNet18():
    return PreActResNet(PreActBlock, [2, 2, 2, 2])


class CIFAR10_dataset(torch.utils.data.Dataset):
    def __init__(self, data, targets, transform=None):
        self.data = data
        self.targets = torch.LongTensor(targets)
        self.transform = transform

    def __getitem__(self, index):
        x = transforms.ToPILImage()((self.data[index] * 255).astype(np.uint8).transpose(1, 2, 0))
        y = self.targets[index]
        if self.transform:
            x = self.transform(x)
        return x, y

    def __len__(self):
        return len(self.data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=["fbf", "madry"], default="fbf")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--use-amp", action="store_true",
                        help="mixed precision through NVIDIA apex (only used on GPU)")
    parser.add_argument("--cpu", action="store_true", help="force CPU even if a GPU is present")
    args = parser.parse_args()

    # Step 1: Load the CIFAR10 dataset
    (x_train, y_train), (x_test, y_test), min_pixel_value, max_pixel_value = load_cifar10()
    x_train = x_train.transpose(0, 3, 1, 2).astype("float32")
    x_test = x_test.transpose(0, 3, 1, 2).astype("float32")

    cifar_mu = np.ones((3, 32, 32))
    cifar_mu[0, :, :] = 0.4914
    cifar_mu[1, :, :] = 0.4822
    cifar_mu[2, :, :] = 0.4465

    cifar_std = np.ones((3, 32, 32))
    cifar_std[0, :, :] = 0.2471
    cifar_std[1, :, :] = 0.2435
    cifar_std[2, :, :] = 0.2616

    transform = transforms.Compose(
        [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )

    dataset = CIFAR10_dataset(x_train, y_train, transform=transform)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                             num_workers=4, pin_memory=True)

    # Step 2: create the PyTorch model
    model = PreActResNet18()
    opt = torch.optim.SGD(model.parameters(), lr=0.21, momentum=0.9, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()

    # Step 3: Create the ART classifier
    device_type = "cpu" if args.cpu else "gpu"
    classifier = PyTorchClassifier(
        model=model,
        clip_values=(0.0, 1.0),
        preprocessing=(cifar_mu, cifar_std),
        loss=criterion,
        optimizer=opt,
        input_shape=(3, 32, 32),
        nb_classes=10,
        use_amp=args.use_amp,
        opt_level="O2",
        loss_scale=1.0,
        device_type=device_type,
    )
    logger.info("classifier runs on %s", classifier.device)

    attack = ProjectedGradientDescent(
        classifier,
        norm=np.inf,
        eps=8.0 / 255.0,
        eps_step=2.0 / 255.0,
        max_iter=10,
        targeted=False,
        num_random_init=1,
        batch_size=args.batch_size,
        verbose=False,
    )

    # Step 4: Create the trainer object
    epsilon = 8.0 / 255.0
    if args.protocol == "fbf":
        trainer = AdversarialTrainerFBFPyTorch(classifier, eps=epsilon, use_amp=args.use_amp)
        art_datagen = PyTorchDataGenerator(iterator=dataloader, size=x_train.shape[0], batch_size=args.batch_size)
        trainer.fit_generator(art_datagen, nb_epochs=args.epochs)
    else:
        trainer = AdversarialTrainerMadryPGD(classifier, nb_epochs=args.epochs, eps=epsilon, eps_step=2.0 / 255.0,
                                             max_iter=7, batch_size=args.batch_size)
        trainer.fit(x_train, y_train)

    # Step 5: Evaluate the ART classifier on benign and adversarial test examples
    x_test_pred = np.argmax(classifier.predict(x_test[:1000]), axis=1)
    print("Accuracy on benign test samples: %.2f%%" % (np.sum(x_test_pred == np.argmax(y_test[:1000], axis=1)) / 10.0))

    x_test_attack = attack.generate(x_test[:1000])
    x_test_attack_pred = np.argmax(classifier.predict(x_test_attack), axis=1)
    print("Accuracy on adversarial PGD test samples: %.2f%%"
          % (np.sum(x_test_attack_pred == np.argmax(y_test[:1000], axis=1)) / 10.0))

    torch.save(classifier.model.state_dict(), "cifar10_preact18_%s.pt" % args.protocol)
    if torch.cuda.is_available():
        print("peak GPU memory: %.1f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
