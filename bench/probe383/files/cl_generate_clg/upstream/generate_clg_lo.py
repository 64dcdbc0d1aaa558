import os
os.environ['OMP_NUM_THREADS'] = '1'  # noqa

import time
import pickle
import argparse
from tqdm import tqdm
from pathlib import Path

import torch
import torch.nn.functional as F
from torch_geometric.data import DataLoader
from torch_geometric.utils import to_dense_batch

from data import get_dataset
from metric import compute_violation
from model.layoutganpp import Generator, Discriminator
from util import convert_layout_to_image, set_seed
from clg.const import beautify
from clg.auglag import AugLagMethod
from clg.optim import AdamOptimizer, CMAESOptimizer


def save_gif(out_path, j, netG,
             z_hist, label, mask, padding_mask,
             dataset_colors, canvas_size):
    mask = mask[j]
    _j = slice(j, j + 1)
    if len(z_hist) == 0:
        return
    z_hist = torch.stack(z_hist)[:, _j]
    imgs = []
    for z in z_hist:
        with torch.no_grad():
            bbox = netG(z, label[_j], padding_mask[_j])
        b = bbox[0][mask].cpu().numpy()
        l = label[0][mask].cpu().numpy()

        img = convert_layout_to_image(b, l, dataset_colors, canvas_size)
        imgs.append(img)
    imgs[0].save(out_path, save_all=True, append_images=imgs[1:], loop=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('ckpt_path', type=str, help='checkpoint path')
    parser.add_argument('-o', '--out_path', type=str,
                        default='output/generated_layouts.pkl',
                        help='output pickle path')
    parser.add_argument('--num_save', type=int, default=0,
                        help='number of layouts to save as images')
    parser.add_argument('--seed', type=int, help='manual seed')

    # CLG specific options
    parser.add_argument('--const_type', type=str,
                        default='beautify', help='constraint type',
                        choices=['beautify', 'relation'])
    parser.add_argument('--optimizer', type=str,
                        default='CMAES', help='inner optimizer',
                        choices=['Adam', 'CMAES'])
    parser.add_argument('--rel_ratio', type=float, default=0.1,
                        help='ratio of relational constraints')
    args = parser.parse_args()

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    if args.seed is not None:
        set_seed(args.seed)

    out_path = Path(args.out_path)
    out_dir = out_path.parent
    out_dir.mkdir(exist_ok=True, parents=True)

    # load checkpoint
    ckpt = torch.load(args.ckpt_path, map_location=device)
    train_args = ckpt['args']

    # load test dataset
    dataset = get_dataset(train_args['dataset'], 'test')
    dataloader = DataLoader(dataset,
                            batch_size=1,
                            num_workers=4,
                            pin_memory=True,
                            shuffle=False)
    num_label = dataset.num_classes

    # setup model and load state
    netG = Generator(train_args['latent_size'], num_label,
                     d_model=train_args['G_d_model'],
                     nhead=train_args['G_nhead'],
                     num_layers=train_args['G_num_layers'],
                     ).eval().requires_grad_(False).to(device)
    netG.load_state_dict(ckpt['netG'])

    netD = Discriminator(num_label, dataset.max_length,
                         d_model=train_args['D_d_model'],
                         nhead=train_args['D_nhead'],
                         num_layers=train_args['D_num_layers'],
                         ).eval().requires_grad_(False).to(device)
    netD.load_state_dict(ckpt['netD'])

    # setup constraints
    if args.const_type == 'beautify':
        constraints = beautify
    else:
        raise NotImplementedError()

    inner_optimizer = {
        'Adam': AdamOptimizer,
        'CMAES': CMAESOptimizer,
    }[args.optimizer]
    inner_optimizer = inner_optimizer(netG, netD, device=device)
    optimizer = AugLagMethod(netG, netD, inner_optimizer, constraints)

    results, violation = [], []
    elapsed = []
    for data in tqdm(dataloader, ncols=100):
        data = data.to(device)
        label_c, mask_c = to_dense_batch(data.y, data.batch)
        label = torch.relu(label_c)
        padding_mask = ~mask_c
        z = torch.randn(label.size(0), label.size(1),
                        train_args['latent_size'], device=device)

        torch.cuda.synchronize()
        t0 = time.time()
        z_hist = [z]
        for z in optimizer.generator(z, data):
            if len(z_hist) < 100:
                z_hist.append(z)
        torch.cuda.synchronize()  # wait for the inner optimizer before stopping the clock
        elapsed.append(time.time() - t0)

        with torch.no_grad():
            bbox = netG(z, label, padding_mask)

        for j in range(bbox.size(0)):
            mask = mask_c[j]
            b = bbox[j][mask].cpu().numpy()
            l = label[j][mask].cpu().numpy()

            if len(results) < args.num_save:
                out_path = out_dir / f'optimized_{len(results)}.gif'
                save_gif(out_path, j, netG,
                         z_hist, label, mask_c, padding_mask,
                         dataset.colors, (120, 80))

            results.append((b, l))

        violation.append(compute_violation(bbox.to(device), data))

    # save results
    with out_path.open('wb') as fb:
        pickle.dump(results, fb)
    print('Generated layouts are saved at:', args.out_path)
    print(f'Mean time per layout: {sum(elapsed) / max(len(elapsed), 1):.3f} sec on {device}')

    violation = torch.cat(violation)
    print('Violation rate (mean):', violation.mean().item())


if __name__ == '__main__':
    main()
