import torch
import torch.nn as nn
import torch.nn.functional as F

nclasses = 43  # GTSRB as 43 classes


class Net(nn.Module):
    """CNN with a spatial transformer in front of the classifier.

    The STN learns to crop / rotate / rescale the sign before classification.
    Runs comfortably on a single GPU with batch 64 at 48x48 input.
    """

    def __init__(self):
        super(Net, self).__init__()
        # CNN layers
        self.conv1 = nn.Conv2d(3, 100, kernel_size=5)
        self.bn1 = nn.BatchNorm2d(100)
        self.conv2 = nn.Conv2d(100, 150, kernel_size=3)
        self.bn2 = nn.BatchNorm2d(150)
        self.conv3 = nn.Conv2d(150, 250, kernel_size=3)
        self.bn3 = nn.BatchNorm2d(250)
        self.conv_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(250 * 2 * 2, 350)
        self.fc2 = nn.Linear(350, nclasses)

        self.localization = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 4 * 4, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )

        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 4 * 4)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform forward pass
        x = self.bn1(F.max_pool2d(F.leaky_relu(self.conv1(x)), 2))
        x = self.conv_drop(x)
        x = self.bn2(F.max_pool2d(F.leaky_relu(self.conv2(x)), 2))
        x = self.conv_drop(x)
        x = self.bn3(F.max_pool2d(F.leaky_relu(self.conv3(x)), 2))
        x = self.conv_drop(x)
        x = x.view(-1, 250 * 2 * 2)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class NetNoSTN(nn.Module):
    """Baseline without the spatial transformer (used for the ablation table)."""

    def __init__(self):
        super(NetNoSTN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 100, kernel_size=5), nn.LeakyReLU(), nn.MaxPool2d(2), nn.BatchNorm2d(100), nn.Dropout2d(),
            nn.Conv2d(100, 150, kernel_size=3), nn.LeakyReLU(), nn.MaxPool2d(2), nn.BatchNorm2d(150), nn.Dropout2d(),
            nn.Conv2d(150, 250, kernel_size=3), nn.LeakyReLU(), nn.MaxPool2d(2), nn.BatchNorm2d(250), nn.Dropout2d(),
        )
        self.classifier = nn.Sequential(
            nn.Linear(250 * 2 * 2, 350), nn.ReLU(), nn.Dropout(), nn.Linear(350, nclasses))

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.classifier(x), dim=1)
