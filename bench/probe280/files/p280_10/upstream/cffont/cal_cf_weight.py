"""CF-Font: compute content-fusion weights of every font w.r.t. the basis fonts.

Step 2 of the CF-Font pipeline (after `collect_content_embeddings.py` and basis selection):
for every training / test font, encode all characters with the content encoder of a
pretrained DG-Font model, measure the L1 distance to the embeddings of the basis fonts and
turn the distances into softmax weights (temperature `--t`). The weights are saved as
`<save_path>/<font_id>.npy` and are read by the CF-Font data loader.

    python cal_cf_weight.py --model_path logs/DGFont_pretrained/model_200.ckpt \
        --basis_list data/basis_10.txt --data_path data/imgs --gpu 0 --t 0.01
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torchvision import transforms
from tqdm import tqdm

from models.generator import Generator


def get_args():
    parser = argparse.ArgumentParser(description='Calculate CF weights')
    parser.add_argument('--model_path', type=str, required=True)
    parser.add_argument('--data_path', type=str, default='../data/imgs')
    parser.add_argument('--basis_list', type=str, required=True, help='txt with one basis font id per line')
    parser.add_argument('--font_list', type=str, default=None, help='fonts to process (default: all)')
    parser.add_argument('--save_path', type=str, default='./cf_weights')
    parser.add_argument('--img_size', type=int, default=80)
    parser.add_argument('--sty_dim', type=int, default=128)
    parser.add_argument('--n_chars', type=int, default=400, help='characters used to compare fonts')
    parser.add_argument('--t', type=float, default=0.01, help='softmax temperature')
    parser.add_argument('--top_k', type=int, default=-1, help='keep only the k nearest basis fonts')
    parser.add_argument('--batch', type=int, default=100)
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--save_emb', action='store_true', help='also dump content embeddings (large!)')
    return parser.parse_args()


def load_content_encoder(args):
    G = Generator(args.img_size, args.sty_dim, use_sn=False)
    ckpt = torch.load(args.model_path, map_location=lambda storage, loc: storage.cuda(args.gpu))
    state = ckpt['G_EMA_state_dict']
    if next(iter(state)).startswith('module.'):
        state = {k[7:]: v for k, v in state.items()}
    G.load_state_dict(state)
    enc = G.cnt_encoder
    enc.eval()
    return enc.cuda(args.gpu)


def build_transform(img_size):
    return transforms.Compose([
        transforms.Resize((img_size, img_size)),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
    ])


def list_fonts(root, font_list=None):
    if font_list is not None:
        with open(font_list) as f:
            return [l.strip() for l in f if l.strip()]
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def load_font_images(root, font, n_chars, tf):
    files = sorted(os.listdir(os.path.join(root, font)))[:n_chars]
    imgs = [tf(Image.open(os.path.join(root, font, f)).convert('RGB')) for f in files]
    return torch.stack(imgs, 0)


@torch.no_grad()
def encode_font(enc, imgs, batch, gpu):
    feats = []
    for i in range(0, imgs.size(0), batch):
        x = imgs[i:i + batch].cuda(gpu, non_blocking=True)
        c, _, _ = enc(x)
        feats.append(c)
    return torch.cat(feats, 0)  # (n_chars, C, h, w), stays on the GPU


def distance_to_basis(cnt, basis_cnt):
    """Mean L1 distance per character, averaged over characters -> (n_basis,)"""
    # cnt: (n, C, h, w), basis_cnt: (B, n, C, h, w)
    d = (basis_cnt - cnt.unsqueeze(0)).abs().mean(dim=(2, 3, 4))  # (B, n)
    return d.mean(dim=1)


def weights_from_distance(dist, t, top_k=-1):
    w = F.softmax(-dist / t, dim=0)
    if top_k > 0:
        val, idx = torch.topk(w, top_k)
        mask = torch.zeros_like(w)
        mask[idx] = 1.0
        w = w * mask
        w = w / w.sum()
    return w


def main():
    args = get_args()
    torch.cuda.set_device(args.gpu)
    os.makedirs(args.save_path, exist_ok=True)
    tf = build_transform(args.img_size)

    enc = load_content_encoder(args)

    basis = list_fonts(args.data_path, args.basis_list)
    fonts = list_fonts(args.data_path, args.font_list)
    print('{} basis fonts, {} fonts to weight'.format(len(basis), len(fonts)))

    # encode basis fonts once and keep them resident on the GPU
    start = time.time()
    basis_cnt = []
    for b in tqdm(basis, desc='basis'):
        imgs = load_font_images(args.data_path, b, args.n_chars, tf)
        basis_cnt.append(encode_font(enc, imgs, args.batch, args.gpu))
    basis_cnt = torch.stack(basis_cnt, 0)
    print('basis embeddings: {} ({:.1f} MB) in {:.1f}s'.format(
        tuple(basis_cnt.shape), basis_cnt.numel() * 4 / 2 ** 20, time.time() - start))

    all_w = torch.cuda.FloatTensor(len(fonts), len(basis)).zero_()
    for fi, font in enumerate(tqdm(fonts, desc='fonts')):
        imgs = load_font_images(args.data_path, font, args.n_chars, tf)
        cnt = encode_font(enc, imgs, args.batch, args.gpu)
        dist = distance_to_basis(cnt, basis_cnt)
        w = weights_from_distance(dist, args.t, args.top_k)
        all_w[fi] = w
        np.save(os.path.join(args.save_path, '{}.npy'.format(font)), w.cpu().numpy())
        if args.save_emb:
            torch.save(cnt.cpu(), os.path.join(args.save_path, '{}_cnt.pt'.format(font)))
        if fi % 50 == 0:
            torch.cuda.empty_cache()

    # summary: how peaked are the weights?
    entropy = -(all_w * (all_w + 1e-12).log()).sum(1)
    print('weight entropy: mean {:.3f} min {:.3f} max {:.3f}'.format(
        entropy.mean().item(), entropy.min().item(), entropy.max().item()))
    np.save(os.path.join(args.save_path, 'all_weights.npy'), all_w.cpu().numpy())
    with open(os.path.join(args.save_path, 'basis.txt'), 'w') as f:
        f.write('\n'.join(basis))
    print('done in {:.1f}s'.format(time.time() - start))


if __name__ == '__main__':
    main()
