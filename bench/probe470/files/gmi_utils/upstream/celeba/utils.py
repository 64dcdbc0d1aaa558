import torch.nn.init as init
import os, classify, generator, discri, dataloader, facenet
import json, time, random, torch, math, sys
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
import torchvision.utils as tvls
from torchvision import transforms
from datetime import datetime
from torch.autograd import grad

device = "cuda"


class Tee(object):
    def __init__(self, name, mode):
        self.file = open(name, mode)
        self.stdout = sys.stdout
        sys.stdout = self

    def __del__(self):
        sys.stdout = self.stdout
        self.file.close()

    def write(self, data):
        if not '...' in data:
            self.file.write(data)
        self.stdout.write(data)
        self.flush()

    def flush(self):
        self.file.flush()


def init_dataloader(args, file_path, batch_size=64, mode="gan"):
    tf = time.time()

    if mode == "attack":
        shuffle_flag = False
    else:
        shuffle_flag = True

    if args['dataset']['name'] == "celeba":
        data_set = dataloader.ImageFolder(args, file_path, mode)
    else:
        data_set = dataloader.GrayFolder(args, file_path, mode)

    data_loader = torch.utils.data.DataLoader(data_set,
                                              batch_size=batch_size,
                                              shuffle=shuffle_flag,
                                              drop_last=True,
                                              num_workers=2,
                                              pin_memory=True)

    interval = time.time() - tf
    print('Initializing data loader took %ds' % interval)
    return data_set, data_loader


def load_pretrain(self, state_dict):
    own_state = self.state_dict()
    for name, param in state_dict.items():
        if name.startswith("module.fc"):
            continue
        if name not in own_state:
            continue
        own_state[name].copy_(param.data)


def load_state_dict(self, state_dict):
    own_state = self.state_dict()
    for name, param in state_dict.items():
        if name not in own_state:
            print(name)
            continue
        own_state[name].copy_(param.data)


def load_my_state_dict(self, state_dict):
    own_state = self.state_dict()
    for name, param in state_dict.items():
        if name not in own_state:
            continue
        own_state[name].copy_(param.data)


def load_json(json_file):
    with open(json_file) as data_file:
        data = json.load(data_file)
    return data


def print_params(info, params, dataset=None):
    print('-----------------------------------------------------------------')
    print("Running time: %s" % datetime.now().strftime('%Y-%m-%d %H:%M:%S'))
    for i, (key, value) in enumerate(info.items()):
        print("%s: %s" % (key, str(value)))
    for i, (key, value) in enumerate(params.items()):
        print("%s: %s" % (key, str(value)))
    print('-----------------------------------------------------------------')


def save_tensor_images(images, filename, nrow=None, normalize=True):
    if not nrow:
        tvls.save_image(images, filename, normalize=normalize, padding=0)
    else:
        tvls.save_image(images, filename, normalize=normalize, nrow=nrow, padding=0)


def low2high(img):
    # 0 and 1, 64 to 112
    bs = img.size(0)
    proc = transforms.Compose([
        transforms.ToPILImage(),
        transforms.Resize((112, 112)),
        transforms.ToTensor()
    ])

    img_tensor = img.detach().cpu().float()
    img = torch.zeros(bs, 3, 112, 112)
    for i in range(bs):
        img_i = transforms.ToPILImage()(img_tensor[i, :, :, :]).convert('RGB')
        img_i = proc(img_i)
        img[i, :, :, :] = img_i[:, :, :]

    img = img.cuda()
    return img


def calc_feat(img):
    img = img.to(device)
    feat = facenet.extract_features(img)
    return feat.detach()


def calc_psnr(img1, img2):
    bs, c, h, w = img1.size()
    ten = torch.tensor(10).float().cuda()
    mse = (img1 - img2) ** 2
    # [bs, c, h, w]
    mse = torch.sum(mse, dim=1)
    mse = torch.sum(mse, dim=1)
    mse = torch.sum(mse, dim=1).view(-1, 1) / (c * h * w)
    maxI = torch.ones(bs, 1).cuda()
    psnr = 20 * torch.log(maxI / torch.sqrt(mse)) / torch.log(ten)
    return torch.mean(psnr)


def calc_center(feat, iden):
    center = torch.from_numpy(np.load("feature/center.npy")).float().cuda()
    bs = feat.size(0)
    true_feat = torch.zeros(feat.size()).cuda()
    for i in range(bs):
        real_iden = iden[i].item()
        dist = torch.sum((feat[i, :] - center[real_iden, :]) ** 2)
        true_feat[i, :] = center[real_iden, :]
    return true_feat


def calc_knn(feat, iden):
    feats = torch.from_numpy(np.load("feature/feat.npy")).float().cuda()
    info = torch.from_numpy(np.load("feature/info.npy")).view(-1).long().cuda()
    bs = feat.size(0)
    tot = feats.size(0)
    knn_dist = 0
    for i in range(bs):
        knn = 1e8
        for j in range(tot):
            if info[j] == iden[i]:
                dist = torch.sum((feat[i, :] - feats[j, :]) ** 2)
                if dist < knn:
                    knn = dist
        knn_dist += knn

    return knn_dist / bs
