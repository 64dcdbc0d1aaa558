"""Run a trained ReLayNet on an OCT B-scan volume and save the layer maps.

Usage:
    python infer_oct_volume.py --model models/Exp01/relaynet_epoch20.model \
        --volume datasets/Data.mat --out results/
"""
import argparse
import os

import h5py
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import torch
from torch.autograd import Variable

SEG_LABELS_LIST = [
    {"id": -1, "name": "void", "rgb_values": [0, 0, 0]},
    {"id": 0, "name": "Region above the retina (RaR)", "rgb_values": [128, 0, 0]},
    {"id": 1, "name": "ILM: Inner limiting membrane", "rgb_values": [0, 128, 0]},
    {"id": 2, "name": "NFL-IPL: Nerve fiber ending to Inner plexiform layer", "rgb_values": [128, 128, 0]},
    {"id": 3, "name": "INL: Inner Nuclear layer", "rgb_values": [0, 0, 128]},
    {"id": 4, "name": "OPL: Outer plexiform layer", "rgb_values": [128, 0, 128]},
    {"id": 5, "name": "ONL-ISM: Outer Nuclear layer to Inner segment myeloid", "rgb_values": [0, 128, 128]},
    {"id": 6, "name": "ISE: Inner segment ellipsoid", "rgb_values": [128, 128, 128]},
    {"id": 7, "name": "OS-RPE: Outer segment to Retinal pigment epithelium", "rgb_values": [64, 0, 0]},
    {"id": 8, "name": "Region below RPE (RbR)", "rgb_values": [192, 0, 0]},
    {"id": 9, "name": "Fluid region", "rgb_values": [64, 128, 0]},
]


def label_img_to_rgb(label_img):
    label_img = np.squeeze(label_img)
    labels = np.unique(label_img)
    label_infos = [l for l in SEG_LABELS_LIST if l['id'] in labels]

    label_img_rgb = np.array([label_img,
                              label_img,
                              label_img]).transpose(1, 2, 0)
    for l in label_infos:
        mask = label_img == l['id']
        label_img_rgb[mask] = l['rgb_values']

    return label_img_rgb.astype(np.uint8)


def load_volume(path):
    with h5py.File(path, 'r') as f:
        images = np.array(f['images'], dtype=np.float32)
    # (N, H, W) -> (N, 1, H, W), intensity scaled to [0, 1]
    images = images[:, None, :, :] / 255.0
    return images


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', default='models/relaynet_good.model')
    parser.add_argument('--volume', default='datasets/Data.mat')
    parser.add_argument('--out', default='results')
    parser.add_argument('--batch', type=int, default=4)
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)

    # the model was pickled as a whole object on the training GPU
    relaynet_model = torch.load(args.model)
    relaynet_model.eval()

    volume = load_volume(args.volume)
    print('Loaded volume with %d B-scans of size %dx%d' % (volume.shape[0], volume.shape[2], volume.shape[3]))

    predictions = []
    for start in range(0, volume.shape[0], args.batch):
        test_data = volume[start:start + args.batch]
        out = relaynet_model(Variable(torch.cuda.FloatTensor(test_data)))
        out = torch.nn.functional.softmax(out, dim=1)
        max_val, idx = torch.max(out, 1)
        predictions.append(idx.data.cpu().numpy())
    predictions = np.concatenate(predictions, axis=0)

    for i, pred in enumerate(predictions):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
        ax1.imshow(np.squeeze(volume[i]), cmap='gray')
        ax1.set_title('B-scan %d' % i)
        ax1.axis('off')
        ax2.imshow(label_img_to_rgb(pred))
        ax2.set_title('ReLayNet prediction')
        ax2.axis('off')
        fig.savefig(os.path.join(args.out, 'bscan_%03d.png' % i), bbox_inches='tight')
        plt.close(fig)

    np.save(os.path.join(args.out, 'layer_maps.npy'), predictions)
    print('Saved %d layer maps to %s' % (len(predictions), args.out))


if __name__ == '__main__':
    main()
