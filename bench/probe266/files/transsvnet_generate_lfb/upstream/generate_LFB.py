#some code adapted from https://github.com/YuemingJin/MTRCNet-CL
# and https://github.com/YuemingJin/TMRNet
"""Dump per-frame ResNet50 embeddings ("long-range feature bank") for Cholec80.

Run after train_embedding.py:
    python generate_LFB.py -g 1 -t 400 --model best_model/emb/resnetfc_ce_epoch_...pth
Writes ./LFB/g_LFB50_train0.pkl, g_LFB50_val0.pkl and g_LFB50_test0.pkl used by tecno/trans_SV.
"""
import torch
from torch import nn
import numpy as np
import pickle, time
import random
import os
import argparse
from torchvision import models, transforms
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.sampler import Sampler
from PIL import Image

parser = argparse.ArgumentParser(description='generate long-range feature bank')
parser.add_argument('-g', '--gpu', default=1, type=int, help='number of gpus, 0 for cpu')
parser.add_argument('-s', '--seq', default=1, type=int, help='sequence length, default 1')
parser.add_argument('-t', '--train', default=400, type=int, help='batch size used for extraction')
parser.add_argument('-w', '--work', default=8, type=int, help='num of workers to use, default 8')
parser.add_argument('--model', type=str, required=True, help='path to trained embedding weights')
parser.add_argument('--out', default='./LFB', type=str)
args = parser.parse_args()

sequence_length = args.seq
batch_size = args.train
workers = args.work

device = torch.device("cuda:0" if (args.gpu > 0 and torch.cuda.is_available()) else "cpu")
print("extracting on", device)

LFB_DIM = 512


def pil_loader(path):
    with open(path, 'rb') as f:
        with Image.open(f) as img:
            return img.convert('RGB')


class CholecDataset(Dataset):
    def __init__(self, file_paths, file_labels, transform=None, loader=pil_loader):
        self.file_paths = file_paths
        self.file_labels_phase = file_labels[:, 0]
        self.transform = transform
        self.loader = loader

    def __getitem__(self, index):
        img_names = self.file_paths[index]
        labels_phase = self.file_labels_phase[index]
        imgs = self.loader(img_names)
        if self.transform is not None:
            imgs = self.transform(imgs)
        return imgs, labels_phase, index

    def __len__(self):
        return len(self.file_paths)


class resnet_lstm(torch.nn.Module):
    def __init__(self):
        super(resnet_lstm, self).__init__()
        resnet = models.resnet50(pretrained=False)
        self.share = torch.nn.Sequential()
        self.share.add_module("conv1", resnet.conv1)
        self.share.add_module("bn1", resnet.bn1)
        self.share.add_module("relu", resnet.relu)
        self.share.add_module("maxpool", resnet.maxpool)
        self.share.add_module("layer1", resnet.layer1)
        self.share.add_module("layer2", resnet.layer2)
        self.share.add_module("layer3", resnet.layer3)
        self.share.add_module("layer4", resnet.layer4)
        self.share.add_module("avgpool", resnet.avgpool)
        self.lstm = nn.LSTM(2048, 512, batch_first=True)
        self.fc = nn.Linear(512, 7)
        self.dropout = nn.Dropout(p=0.2)

    def forward(self, x):
        x = x.view(-1, 3, 224, 224)
        x = self.share.forward(x)
        x = x.view(-1, sequence_length, 2048)
        self.lstm.flatten_parameters()
        y, _ = self.lstm(x)
        y = y.contiguous().view(-1, 512)
        return y


def get_useful_start_idx(sequence_length, list_each_length):
    count = 0
    idx = []
    for i in range(len(list_each_length)):
        for j in range(count, count + (list_each_length[i] + 1 - sequence_length)):
            idx.append(j)
        count += list_each_length[i]
    return idx


class SeqSampler(Sampler):
    def __init__(self, data_source, idx):
        super().__init__(data_source)
        self.data_source = data_source
        self.idx = idx

    def __iter__(self):
        return iter(self.idx)

    def __len__(self):
        return len(self.idx)


def get_data(data_path):
    with open(data_path, 'rb') as f:
        train_test_paths_labels = pickle.load(f)
    train_paths = train_test_paths_labels[0]
    val_paths = train_test_paths_labels[1]
    test_paths = train_test_paths_labels[2]
    train_labels = np.asarray(train_test_paths_labels[3], dtype=np.int64)
    val_labels = np.asarray(train_test_paths_labels[4], dtype=np.int64)
    test_labels = np.asarray(train_test_paths_labels[5], dtype=np.int64)
    train_num_each = train_test_paths_labels[6]
    val_num_each = train_test_paths_labels[7]
    test_num_each = train_test_paths_labels[8]

    test_transforms = transforms.Compose([
        transforms.Resize((250, 250)),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize([0.41757566, 0.26098573, 0.25888634], [0.21938758, 0.1983, 0.19342837])
    ])
    train_dataset = CholecDataset(train_paths, train_labels, test_transforms)
    val_dataset = CholecDataset(val_paths, val_labels, test_transforms)
    test_dataset = CholecDataset(test_paths, test_labels, test_transforms)
    return (train_dataset, train_num_each), (val_dataset, val_num_each), (test_dataset, test_num_each)


def load_embedding_model(path):
    model = resnet_lstm()
    # checkpoints are written by train_embedding.py on GPU (state_dict of model.module)
    state = torch.load(path)
    if any(k.startswith("module.") for k in state):
        state = {k[len("module."):]: v for k, v in state.items()}
    model.load_state_dict(state)
    model.to(device)
    model.eval()
    return model


def extract(model, dataset, num_each, tag):
    useful_start_idx = get_useful_start_idx(sequence_length, num_each)
    idx = []
    for i in range(len(useful_start_idx)):
        for j in range(sequence_length):
            idx.append(useful_start_idx[i] + j)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=SeqSampler(dataset, idx),
        num_workers=workers,
        pin_memory=True,
    )
    bank = np.zeros(shape=(0, LFB_DIM))
    start = time.time()
    with torch.no_grad():
        for n, data in enumerate(loader):
            inputs = data[0].to(device, non_blocking=True)
            inputs = inputs.view(-1, sequence_length, 3, 224, 224)
            outputs_feature = model.forward(inputs).data.cpu().numpy()
            bank = np.concatenate((bank, outputs_feature), axis=0)
            if n % 20 == 0:
                print(f"[{tag}] batch {n}/{len(loader)}  bank={bank.shape}  {time.time() - start:.1f}s")
    print(f"[{tag}] done: {bank.shape[0]} frames in {time.time() - start:.1f}s")
    if device.type == "cuda":
        print(f"peak memory {torch.cuda.max_memory_allocated(device) / 2 ** 30:.2f} GiB")
    return bank


def main():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    (train_dataset, train_num_each), (val_dataset, val_num_each), (test_dataset, test_num_each) = \
        get_data('./train_val_paths_labels1.pkl')

    model = load_embedding_model(args.model)
    os.makedirs(args.out, exist_ok=True)

    g_LFB_train = extract(model, train_dataset, train_num_each, "train")
    g_LFB_val = extract(model, val_dataset, val_num_each, "val")
    g_LFB_test = extract(model, test_dataset, test_num_each, "test")

    with open(os.path.join(args.out, "g_LFB50_train0.pkl"), 'wb') as f:
        pickle.dump(g_LFB_train, f)
    with open(os.path.join(args.out, "g_LFB50_val0.pkl"), 'wb') as f:
        pickle.dump(g_LFB_val, f)
    with open(os.path.join(args.out, "g_LFB50_test0.pkl"), 'wb') as f:
        pickle.dump(g_LFB_test, f)


if __name__ == "__main__":
    main()
