# -*- coding: utf-8 -*-
"""HybridSN: Exploring 3D-2D CNN Feature Hierarchy for Hyperspectral Image Classification

PyTorch re-implementation of the Keras notebook (Roy et al., IEEE GRSL 2019).
Originally run on Colab with a single Tesla T4 / V100.

Datasets (Indian Pines / Salinas / PaviaU) are expected as the usual .mat files
under ./data/.
"""

import os
import time
import random
import argparse

import numpy as np
import scipy.io as sio
import spectral
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.metrics import (
    classification_report,
    accuracy_score,
    confusion_matrix,
    cohen_kappa_score,
)
from operator import truediv

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

parser = argparse.ArgumentParser("HybridSN")
parser.add_argument("--dataset", choices=["IP", "SA", "PU"], default="IP")
parser.add_argument("--test_ratio", type=float, default=0.7)
parser.add_argument("--window_size", type=int, default=25)
parser.add_argument("--pca_components", type=int, default=30)
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--lr", type=float, default=0.001)
parser.add_argument("--seed", type=int, default=345)
args = parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


set_seed(args.seed)

# use GPU if there is one
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print("Using device:", device)


def loadData(name):
    data_path = os.path.join(os.getcwd(), "data")
    if name == "IP":
        data = sio.loadmat(os.path.join(data_path, "Indian_pines_corrected.mat"))["indian_pines_corrected"]
        labels = sio.loadmat(os.path.join(data_path, "Indian_pines_gt.mat"))["indian_pines_gt"]
    elif name == "SA":
        data = sio.loadmat(os.path.join(data_path, "Salinas_corrected.mat"))["salinas_corrected"]
        labels = sio.loadmat(os.path.join(data_path, "Salinas_gt.mat"))["salinas_gt"]
    elif name == "PU":
        data = sio.loadmat(os.path.join(data_path, "PaviaU.mat"))["paviaU"]
        labels = sio.loadmat(os.path.join(data_path, "PaviaU_gt.mat"))["paviaU_gt"]
    return data, labels


def applyPCA(X, numComponents=75):
    newX = np.reshape(X, (-1, X.shape[2]))
    pca = PCA(n_components=numComponents, whiten=True)
    newX = pca.fit_transform(newX)
    newX = np.reshape(newX, (X.shape[0], X.shape[1], numComponents))
    return newX, pca


def padWithZeros(X, margin=2):
    newX = np.zeros((X.shape[0] + 2 * margin, X.shape[1] + 2 * margin, X.shape[2]))
    x_offset = margin
    y_offset = margin
    newX[x_offset:X.shape[0] + x_offset, y_offset:X.shape[1] + y_offset, :] = X
    return newX


def createImageCubes(X, y, windowSize=5, removeZeroLabels=True):
    margin = int((windowSize - 1) / 2)
    zeroPaddedX = padWithZeros(X, margin=margin)
    # split patches
    patchesData = np.zeros((X.shape[0] * X.shape[1], windowSize, windowSize, X.shape[2]), dtype=np.float32)
    patchesLabels = np.zeros((X.shape[0] * X.shape[1]))
    patchIndex = 0
    for r in range(margin, zeroPaddedX.shape[0] - margin):
        for c in range(margin, zeroPaddedX.shape[1] - margin):
            patch = zeroPaddedX[r - margin:r + margin + 1, c - margin:c + margin + 1]
            patchesData[patchIndex, :, :, :] = patch
            patchesLabels[patchIndex] = y[r - margin, c - margin]
            patchIndex = patchIndex + 1
    if removeZeroLabels:
        patchesData = patchesData[patchesLabels > 0, :, :, :]
        patchesLabels = patchesLabels[patchesLabels > 0]
        patchesLabels -= 1
    return patchesData, patchesLabels


def splitTrainTestSet(X, y, testRatio, randomState=345):
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=testRatio, random_state=randomState, stratify=y
    )
    return X_train, X_test, y_train, y_test


class HybridSN(nn.Module):
    def __init__(self, num_classes=16, pca_components=30, window_size=25):
        super(HybridSN, self).__init__()
        self.conv3d_1 = nn.Sequential(
            nn.Conv3d(1, 8, kernel_size=(7, 3, 3), stride=1, padding=0),
            nn.BatchNorm3d(8),
            nn.ReLU(inplace=True),
        )
        self.conv3d_2 = nn.Sequential(
            nn.Conv3d(8, 16, kernel_size=(5, 3, 3), stride=1, padding=0),
            nn.BatchNorm3d(16),
            nn.ReLU(inplace=True),
        )
        self.conv3d_3 = nn.Sequential(
            nn.Conv3d(16, 32, kernel_size=(3, 3, 3), stride=1, padding=0),
            nn.BatchNorm3d(32),
            nn.ReLU(inplace=True),
        )
        spectral_out = pca_components - 6 - 4 - 2
        spatial_out = window_size - 6
        self.conv2d_4 = nn.Sequential(
            nn.Conv2d(32 * spectral_out, 64, kernel_size=(3, 3), stride=1, padding=0),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
        )
        self.fc1 = nn.Linear(64 * (spatial_out - 2) * (spatial_out - 2), 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, num_classes)
        self.dropout = nn.Dropout(p=0.4)

    def forward(self, x):
        out = self.conv3d_1(x)
        out = self.conv3d_2(out)
        out = self.conv3d_3(out)
        # fold the spectral axis into the channels for the 2D stage
        out = out.reshape(out.shape[0], -1, out.shape[3], out.shape[4])
        out = self.conv2d_4(out)
        out = out.reshape(out.shape[0], -1)
        out = F.relu(self.dropout(self.fc1(out)))
        out = F.relu(self.dropout(self.fc2(out)))
        out = self.fc3(out)
        return out


class TrainDS(torch.utils.data.Dataset):
    def __init__(self, Xtrain, ytrain):
        self.len = Xtrain.shape[0]
        self.x_data = torch.FloatTensor(Xtrain)
        self.y_data = torch.LongTensor(ytrain)

    def __getitem__(self, index):
        return self.x_data[index], self.y_data[index]

    def __len__(self):
        return self.len


class TestDS(TrainDS):
    pass


def AA_andEachClassAccuracy(confusion_matrix):
    list_diag = np.diag(confusion_matrix)
    list_raw_sum = np.sum(confusion_matrix, axis=1)
    each_acc = np.nan_to_num(truediv(list_diag, list_raw_sum))
    average_acc = np.mean(each_acc)
    return each_acc, average_acc


def reports(y_test, y_pred, name):
    if name == "IP":
        target_names = ["Alfalfa", "Corn-notill", "Corn-mintill", "Corn",
                        "Grass-pasture", "Grass-trees", "Grass-pasture-mowed",
                        "Hay-windrowed", "Oats", "Soybean-notill", "Soybean-mintill",
                        "Soybean-clean", "Wheat", "Woods", "Buildings-Grass-Trees-Drives",
                        "Stone-Steel-Towers"]
    elif name == "SA":
        target_names = ["Brocoli_green_weeds_1", "Brocoli_green_weeds_2", "Fallow",
                        "Fallow_rough_plow", "Fallow_smooth", "Stubble", "Celery",
                        "Grapes_untrained", "Soil_vinyard_develop", "Corn_senesced_green_weeds",
                        "Lettuce_romaine_4wk", "Lettuce_romaine_5wk", "Lettuce_romaine_6wk",
                        "Lettuce_romaine_7wk", "Vinyard_untrained", "Vinyard_vertical_trellis"]
    else:
        target_names = ["Asphalt", "Meadows", "Gravel", "Trees", "Painted metal sheets",
                        "Bare Soil", "Bitumen", "Self-Blocking Bricks", "Shadows"]
    classification = classification_report(y_test, y_pred, target_names=target_names)
    oa = accuracy_score(y_test, y_pred)
    confusion = confusion_matrix(y_test, y_pred)
    each_acc, aa = AA_andEachClassAccuracy(confusion)
    kappa = cohen_kappa_score(y_test, y_pred)
    return classification, confusion, oa * 100, each_acc * 100, aa * 100, kappa * 100


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
X, y = loadData(args.dataset)
output_units = 9 if args.dataset == "PU" else 16
print("Hyperspectral data shape: ", X.shape)
X_pca, pca = applyPCA(X, numComponents=args.pca_components)
print("Data shape after PCA: ", X_pca.shape)
X_pca, y_all = createImageCubes(X_pca, y, windowSize=args.window_size)
print("Data cube X shape: ", X_pca.shape)
Xtrain, Xtest, ytrain, ytest = splitTrainTestSet(X_pca, y_all, args.test_ratio)

# (N, H, W, C) -> (N, 1, C, H, W) for Conv3d
Xtrain = Xtrain.reshape(-1, args.window_size, args.window_size, args.pca_components, 1)
Xtest = Xtest.reshape(-1, args.window_size, args.window_size, args.pca_components, 1)
Xtrain = Xtrain.transpose(0, 4, 3, 1, 2)
Xtest = Xtest.transpose(0, 4, 3, 1, 2)
print("after transpose: Xtrain shape: ", Xtrain.shape)

trainset = TrainDS(Xtrain, ytrain)
testset = TestDS(Xtest, ytest)
train_loader = torch.utils.data.DataLoader(dataset=trainset, batch_size=args.batch_size, shuffle=True, num_workers=2)
test_loader = torch.utils.data.DataLoader(dataset=testset, batch_size=args.batch_size, shuffle=False, num_workers=2)

# ----------------------------------------------------------------------------
# train
# ----------------------------------------------------------------------------
net = HybridSN(num_classes=output_units, pca_components=args.pca_components, window_size=args.window_size).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(net.parameters(), lr=args.lr)

tic = time.time()
total_loss = 0
for epoch in range(args.epochs):
    net.train()
    for i, (inputs, labels) in enumerate(train_loader):
        inputs = inputs.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print("[Epoch: %d]   [loss avg: %.4f]   [current loss: %.4f]" % (epoch + 1, total_loss / (epoch + 1), loss.item()))
toc = time.time()
print("Finished Training in %.1fs" % (toc - tic))
if torch.cuda.is_available():
    print("Peak GPU memory: %.1f MB" % (torch.cuda.max_memory_allocated() / 1024 ** 2))
torch.save(net.state_dict(), "hybridsn_%s.pth" % args.dataset)

# ----------------------------------------------------------------------------
# test
# ----------------------------------------------------------------------------
net.eval()
count = 0
for inputs, _ in test_loader:
    inputs = inputs.to(device)
    with torch.no_grad():
        outputs = net(inputs)
    outputs = np.argmax(outputs.detach().cpu().numpy(), axis=1)
    if count == 0:
        y_pred_test = outputs
        count = 1
    else:
        y_pred_test = np.concatenate((y_pred_test, outputs))

classification, confusion, oa, each_acc, aa, kappa = reports(ytest, y_pred_test, args.dataset)
report_file = "classification_report_%s.txt" % args.dataset
with open(report_file, "w") as x_file:
    x_file.write("{} Kappa accuracy (%)\n".format(kappa))
    x_file.write("{} Overall accuracy (%)\n".format(oa))
    x_file.write("{} Average accuracy (%)\n".format(aa))
    x_file.write("\n")
    x_file.write("{}\n".format(classification))
    x_file.write("\n")
    x_file.write("{}\n".format(confusion))
print(classification)

# ----------------------------------------------------------------------------
# full classification map
# ----------------------------------------------------------------------------
X_full, y_full = loadData(args.dataset)
height, width = y_full.shape[0], y_full.shape[1]
X_full = applyPCA(X_full, numComponents=args.pca_components)[0]
margin = args.window_size // 2
X_full = padWithZeros(X_full, margin=margin)
outputs = np.zeros((height, width))
for i in range(height):
    for j in range(width):
        if int(y_full[i, j]) == 0:
            continue
        image_patch = X_full[i:i + args.window_size, j:j + args.window_size, :]
        image_patch = image_patch.reshape(1, image_patch.shape[0], image_patch.shape[1], image_patch.shape[2], 1)
        X_test_image = torch.FloatTensor(image_patch.transpose(0, 4, 3, 1, 2)).to(device)
        with torch.no_grad():
            prediction = net(X_test_image)
        prediction = np.argmax(prediction.detach().cpu().numpy(), axis=1)
        outputs[i][j] = prediction + 1
    if i % 20 == 0:
        print("... ... row ", i, " handling ... ...")

spectral.save_rgb("predictions_%s.jpg" % args.dataset, outputs.astype(int), colors=spectral.spy_colors)
