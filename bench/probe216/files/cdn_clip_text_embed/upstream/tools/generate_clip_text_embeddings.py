"""
Pre-compute CLIP text embeddings for the HICO-DET / V-COCO verb-object prompts.

The embeddings are used to initialise the interaction classifier (and the verb
projection) so that training does not have to load CLIP on every rank.

    python tools/generate_clip_text_embeddings.py --dataset hico --clip_model ViT-B/16 \
        --out params/hico_clip_vitb16_text.pth
"""
import argparse
import os
import time

import numpy as np
import torch

import clip
from datasets.hico_text_label import hico_text_label, hico_obj_text_label
from datasets.vcoco_text_label import vcoco_hoi_text_label, vcoco_obj_text_label

PROMPT_TEMPLATES = [
    'a photo of a person {}.',
    'a picture of a person {}.',
    'a person is {}.',
]


def parse_args():
    parser = argparse.ArgumentParser('CLIP text embedding export')
    parser.add_argument('--dataset', default='hico', choices=['hico', 'vcoco'])
    parser.add_argument('--clip_model', default='ViT-B/32',
                        help='name understood by clip.load or a path to a .pt file')
    parser.add_argument('--out', required=True, help='output .pth file')
    parser.add_argument('--batch', default=256, type=int, help='prompts encoded per forward pass')
    parser.add_argument('--ensemble', action='store_true',
                        help='average the embedding over PROMPT_TEMPLATES')
    parser.add_argument('--normalize', action='store_true')
    return parser.parse_args()


def build_prompts(hoi_text_label, ensemble):
    keys = list(hoi_text_label.keys())
    if not ensemble:
        return keys, [[hoi_text_label[k]] for k in keys]
    prompts = []
    for k in keys:
        # hoi_text_label values already read 'a photo of a person <verb>ing a/an <object>'
        phrase = hoi_text_label[k].replace('a photo of a person ', '').rstrip('.')
        prompts.append([t.format(phrase) for t in PROMPT_TEMPLATES])
    return keys, prompts


@torch.no_grad()
def encode(model, texts, batch, device):
    tokens = torch.cat([clip.tokenize(t) for t in texts]).to(device)
    feats = []
    for i in range(0, len(tokens), batch):
        feats.append(model.encode_text(tokens[i:i + batch]).float())
    return torch.cat(feats, dim=0)


def main():
    args = parse_args()
    # CLIP's fp16 weights are only kept on GPU; on CPU clip.load() casts to fp32
    device = "cuda"
    model, _ = clip.load(args.clip_model, device=device, jit=False)
    model.eval()
    print('Running {} on {}'.format(args.clip_model, torch.cuda.get_device_name(0)))

    if args.dataset == 'hico':
        hoi_text, obj_text = hico_text_label, hico_obj_text_label
    else:
        hoi_text, obj_text = vcoco_hoi_text_label, vcoco_obj_text_label

    keys, prompts = build_prompts(hoi_text, args.ensemble)
    tic = time.time()
    hoi_emb = []
    for group in prompts:
        e = encode(model, group, args.batch, device)
        hoi_emb.append(e.mean(dim=0, keepdim=True))
    hoi_emb = torch.cat(hoi_emb, dim=0)
    obj_emb = encode(model, [o[1] for o in obj_text], args.batch, device)
    torch.cuda.synchronize()
    print('encoded {} HOI prompts and {} object prompts in {:.2f}s'.format(
        len(keys), len(obj_text), time.time() - tic))

    if args.normalize:
        hoi_emb = hoi_emb / hoi_emb.norm(dim=-1, keepdim=True)
        obj_emb = obj_emb / obj_emb.norm(dim=-1, keepdim=True)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save({
        'hoi_keys': keys,
        'hoi_text_embedding': hoi_emb.cpu(),
        'obj_text_embedding': obj_emb.cpu(),
        'visual_proj': model.visual.proj.detach().float().cpu(),
        'clip_model': args.clip_model,
    }, args.out)
    np.save(os.path.splitext(args.out)[0] + '_hoi.npy', hoi_emb.cpu().numpy())
    print('saved to', args.out)


if __name__ == '__main__':
    main()
