import os
import argparse
import numpy as np
import torch
from tqdm import tqdm
from network import CodeTreeGenerator, SolidDecoder, ProfileDecoder, LoopDecoder
from utils import dequantize
from config import *
from hncad.export import write_obj, construct_brep_from_code


def load_weights(model, path, device):
    state = torch.load(path, map_location=device)
    if 'model' in state:
        state = state['model']
    model.load_state_dict({k.replace('module.', ''): v for k, v in state.items()})
    return model.to(device).eval()


@torch.no_grad()
def sample_code_tree(gen, n_samples, device, top_p=0.95, batch=512):
    trees = []
    while len(trees) < n_samples:
        seq = torch.zeros((batch, 0), dtype=torch.long, device=device)
        mask = torch.zeros((batch, 0), dtype=torch.bool, device=device)
        done = torch.zeros(batch, dtype=torch.bool, device=device)
        for _ in range(MAX_CODE):
            logits = gen(seq, mask)[:, -1].float()
            probs = torch.softmax(logits, -1)
            sorted_p, sorted_idx = probs.sort(-1, descending=True)
            sorted_p[sorted_p.cumsum(-1) - sorted_p > top_p] = 0
            nxt = sorted_idx.gather(-1, torch.multinomial(sorted_p, 1))
            nxt[done] = 0
            seq = torch.cat([seq, nxt], 1)
            mask = torch.cat([mask, done.unsqueeze(1)], 1)
            done |= nxt.squeeze(1) == 0
            if done.all():
                break
        trees.extend(seq.cpu().numpy())
    return trees[:n_samples]


def main(args):
    device = torch.device(f"cuda:{args.device}")
    torch.cuda.set_device(device)

    gen = load_weights(CodeTreeGenerator(TOTAL_CODE, MAX_CODE), args.gen_weight, device)
    solid_dec = load_weights(SolidDecoder(), os.path.join(args.vq_dir, 'solid_dec.pt'), device)
    profile_dec = load_weights(ProfileDecoder(), os.path.join(args.vq_dir, 'profile_dec.pt'), device)
    loop_dec = load_weights(LoopDecoder(), os.path.join(args.vq_dir, 'loop_dec.pt'), device)
    solid_codebook = torch.load(os.path.join(args.vq_dir, 'solid_codebook.pt'))
    profile_codebook = torch.load(os.path.join(args.vq_dir, 'profile_codebook.pt'))
    loop_codebook = torch.load(os.path.join(args.vq_dir, 'loop_codebook.pt'))

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    trees = sample_code_tree(gen, args.n_samples, device, top_p=args.top_p)
    end.record()
    torch.cuda.synchronize()
    print(f'sampled {len(trees)} code trees in {start.elapsed_time(end) / 1000:.1f}s')

    os.makedirs(args.output, exist_ok=True)
    n_ok = 0
    for idx, tree in enumerate(tqdm(trees)):
        try:
            solid_codes, profile_codes, loop_codes = split_tree(tree)
            loops = loop_dec.sample(loop_codebook[loop_codes].unsqueeze(0).to(device), MAX_LOOP)
            profiles = profile_dec.sample(profile_codebook[profile_codes].unsqueeze(0).to(device), MAX_PROFILE)
            solids = solid_dec.sample(solid_codebook[solid_codes].unsqueeze(0).to(device), MAX_SOLID)
            cad = construct_brep_from_code(dequantize(loops.cpu().numpy()), profiles.cpu().numpy(),
                                           solids.cpu().numpy())
            write_obj(os.path.join(args.output, f'{idx:05d}'), cad)
            n_ok += 1
        except Exception as e:
            continue
    print(f'{n_ok}/{len(trees)} valid CAD models written to {args.output}')


def split_tree(tree):
    tree = np.asarray(tree)
    tree = tree[:np.argmax(tree == 0)] if (tree == 0).any() else tree
    solid = tree[(tree >= SOLID_OFFSET) & (tree < PROFILE_OFFSET)] - SOLID_OFFSET
    profile = tree[(tree >= PROFILE_OFFSET) & (tree < LOOP_OFFSET)] - PROFILE_OFFSET
    loop = tree[tree >= LOOP_OFFSET] - LOOP_OFFSET
    return torch.from_numpy(solid), torch.from_numpy(profile), torch.from_numpy(loop)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--gen_weight', type=str, required=True)
    parser.add_argument('--vq_dir', type=str, required=True)
    parser.add_argument('--output', type=str, required=True)
    parser.add_argument('--n_samples', type=int, default=1000)
    parser.add_argument('--top_p', type=float, default=0.95)
    parser.add_argument('--device', type=int, default=0, help='CUDA device index')
    main(parser.parse_args())
