import argparse
import os
import numpy as np

import torchvision.transforms as transforms
from torchvision.utils import save_image
from torch.utils.data import DataLoader
from torch.autograd import Variable
import torch
from PIL import Image, ImageDraw, ImageOps
from dataset.floorplan_dataset_maps_functional_high_res import FloorplanGraphDataset, floorplan_collate_fn
from misc.utils import _init_input, ID_COLOR, draw_masks, draw_graph, estimate_graph
from models.models import Generator
import networkx as nx
import matplotlib.pyplot as plt
import glob
import cv2
import webcolors
import time


parser = argparse.ArgumentParser()
parser.add_argument("--n_cpu", type=int, default=16, help="number of cpu threads to use during batch generation")
parser.add_argument("--batch_size", type=int, default=1, help="size of the batches")
parser.add_argument("--checkpoint", type=str, default='./checkpoints/pretrained.pth', help="checkpoint path")
parser.add_argument("--data_path", type=str, default='./data/sample_list.txt', help="path to dataset list file")
parser.add_argument("--out", type=str, default='./dump', help="output folder")
parser.add_argument("--num_variations", type=int, default=4, help="samples generated per input graph")
parser.add_argument("--gpu", type=str, default='0', help="which gpu to run the generator on")
opt = parser.parse_args()
print(opt)

os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu

# Create output dir
os.makedirs(opt.out, exist_ok=True)

# Initialize generator and discriminator
model = Generator()
model.load_state_dict(torch.load(opt.checkpoint), strict=True)
model = model.eval()

# Initialize variables
if torch.cuda.is_available():
    model.cuda()

# initialize dataset iterator
fp_dataset_test = FloorplanGraphDataset(opt.data_path, transforms.Normalize(mean=[0.5], std=[0.5]), split='test')
fp_loader = torch.utils.data.DataLoader(fp_dataset_test,
                                        batch_size=opt.batch_size,
                                        shuffle=False, collate_fn=floorplan_collate_fn)
# optimizers
Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor


# run inference
def _infer(graph, model, prev_state=None):
    # configure input to the network
    z, given_masks_in, given_nds, given_eds = _init_input(graph, prev_state)
    # run inference model
    with torch.no_grad():
        masks = model(z.to('cuda'), given_masks_in.to('cuda'), given_nds.to('cuda'), given_eds.to('cuda'))
        masks = masks.detach().cpu().numpy()
    return masks


def main():
    globalIndex = 0
    t_total = 0.0
    for i, sample in enumerate(fp_loader):

        # draw real graph and groundtruth
        mks, nds, eds, _, _ = sample
        real_nodes = np.where(nds.detach().cpu() == 1)[-1]
        graph = [nds, eds]
        true_graph_obj, graph_im = draw_graph([real_nodes, eds.detach().cpu().numpy()])
        graph_im.save('./{}/graph_{}.png'.format(opt.out, i))  # save graph

        # add room types incrementally
        _types = sorted(list(set(real_nodes)))
        selected_types = [_types[:k + 1] for k in range(10)]
        os.makedirs('./{}/'.format(opt.out), exist_ok=True)
        _round = 0

        for j in range(opt.num_variations):
            # initialize layout
            state = {'masks': None, 'fixed_nodes': []}
            t0 = time.time()
            masks = _infer(graph, model, state)
            im0 = draw_masks(masks.copy(), real_nodes)
            im0 = torch.tensor(np.array(im0).transpose((2, 0, 1))) / 255.0
            # save_image(im0, './{}/fp_init_{}.png'.format(opt.out, i), nrow=1, normalize=False)

            # generate per room type
            for _iter, _types in enumerate(selected_types):
                _fixed_nds = np.concatenate([np.where(real_nodes == _t)[0] for _t in _types]) \
                    if len(_types) > 0 else np.array([])
                state = {'masks': masks, 'fixed_nodes': _fixed_nds}
                masks = _infer(graph, model, state)
            t_total += time.time() - t0

            # save final floorplans
            imk = draw_masks(masks.copy(), real_nodes)
            imk = torch.tensor(np.array(imk).transpose((2, 0, 1))) / 255.0
            save_image(imk, './{}/fp_final_{}_{}.png'.format(opt.out, i, j), nrow=1, normalize=False)

        globalIndex += 1
    print('generated {} floorplans in {:.2f}s on {}'.format(
        globalIndex * opt.num_variations, t_total, 'GPU' if torch.cuda.is_available() else 'CPU'))


if __name__ == '__main__':
    main()
