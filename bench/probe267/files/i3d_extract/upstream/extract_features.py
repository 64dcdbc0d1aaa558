import os
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
import sys
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('-mode', type=str, help='rgb or flow')
parser.add_argument('-load_model', type=str)
parser.add_argument('-root', type=str)
parser.add_argument('-split', type=str, default='ucf_crime/ucf_crime_full.json')
parser.add_argument('-gpu', type=str, default='0')
parser.add_argument('-save_dir', type=str)
parser.add_argument('-chunk', type=int, default=1600, help='max frames per forward pass')

args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

import torchvision
from torchvision import datasets, transforms
import videotransforms

import numpy as np

from pytorch_i3d import InceptionI3d

from ucf_crime_dataset_full import UCFCrime as Dataset


def run(max_steps=64e3, mode='rgb', root='/ssd2/ucf_crime/frames', split='ucf_crime/ucf_crime_full.json',
        batch_size=1, load_model='', save_dir='', chunk=1600):
    # setup dataset
    test_transforms = transforms.Compose([videotransforms.CenterCrop(224)])

    dataset = Dataset(split, 'training', root, mode, test_transforms, num=-1, save_dir=save_dir)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=8,
                                             pin_memory=True)

    val_dataset = Dataset(split, 'testing', root, mode, test_transforms, num=-1, save_dir=save_dir)
    val_dataloader = torch.utils.data.DataLoader(val_dataset, batch_size=batch_size, shuffle=True, num_workers=8,
                                                 pin_memory=True)

    dataloaders = {'train': dataloader, 'val': val_dataloader}
    datasets = {'train': dataset, 'val': val_dataset}

    # setup the model
    if mode == 'flow':
        i3d = InceptionI3d(400, in_channels=2)
    else:
        i3d = InceptionI3d(400, in_channels=3)
    i3d.load_state_dict(torch.load(load_model))
    i3d.cuda()

    for phase in ['train', 'val']:
        i3d.train(False)  # Set model to evaluate mode

        # Iterate over data.
        for data in dataloaders[phase]:
            # get the inputs
            inputs, labels, name = data
            if os.path.exists(os.path.join(save_dir, name[0] + '.npy')):
                continue

            b, c, t, h, w = inputs.shape
            if t > chunk:
                features = []
                for start in range(1, t - 56, chunk):
                    end = min(t - 1, start + chunk + 56)
                    start = max(1, start - 48)
                    ip = Variable(torch.from_numpy(inputs.numpy()[:, :, start:end]).cuda(), volatile=True)
                    features.append(i3d.extract_features(ip).squeeze(0).permute(1, 2, 3, 0).data.cpu().numpy())
                np.save(os.path.join(save_dir, name[0]), np.concatenate(features, axis=0))
            else:
                # wrap them in Variable
                inputs = Variable(inputs.cuda(), volatile=True)
                features = i3d.extract_features(inputs)
                np.save(os.path.join(save_dir, name[0]), features.squeeze(0).permute(1, 2, 3, 0).data.cpu().numpy())
            print('{} [{}] t={} -> saved'.format(phase, name[0], t))


def snippet_pool(feat, snippet=16):
    """Average the per-frame I3D output into 16-frame snippets (T, 1024) as used by RTFM/MGFN."""
    feat = feat.reshape(feat.shape[0], -1)
    n = feat.shape[0] // snippet
    if n == 0:
        return feat.mean(0, keepdims=True)
    return feat[:n * snippet].reshape(n, snippet, -1).mean(1)


def check_saved(save_dir, expected_dim=1024):
    """Report files with the wrong feature size or NaNs (e.g. after an OOM crash)."""
    bad = []
    for f in sorted(os.listdir(save_dir)):
        if not f.endswith('.npy'):
            continue
        a = np.load(os.path.join(save_dir, f))
        if a.shape[-1] != expected_dim or not np.isfinite(a).all():
            bad.append((f, a.shape))
    for f, shp in bad:
        print('BAD', f, shp)
    print('{} bad file(s)'.format(len(bad)))
    return bad


if __name__ == '__main__':
    # need to add argparse
    run(mode=args.mode, root=args.root, split=args.split, load_model=args.load_model, save_dir=args.save_dir,
        chunk=args.chunk)
