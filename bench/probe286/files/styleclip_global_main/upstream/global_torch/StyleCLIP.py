"""StyleCLIP global directions (PyTorch port).

Computes a text-driven direction Δt in CLIP space, projects it onto the
pre-computed relevance of every StyleSpace channel (fs3.npy), and applies the
resulting style-space edit with the Manipulator.

    python global_torch/StyleCLIP.py --dataset_name ffhq \
        --neutral "face" --target "face with blond hair" --beta 0.15 --alpha 4.1
"""
import argparse
import os
import pickle

import clip
import numpy as np
import torch
from PIL import Image

from manipulate import Manipulator

imagenet_templates = [
    'a bad photo of a {}.',
    'a sculpture of a {}.',
    'a photo of the hard to see {}.',
    'a low resolution photo of the {}.',
    'a rendering of a {}.',
    'graffiti of a {}.',
    'a bad photo of the {}.',
    'a cropped photo of the {}.',
    'a tattoo of a {}.',
    'the embroidered {}.',
    'a photo of a hard to see {}.',
    'a bright photo of a {}.',
    'a photo of a clean {}.',
    'a photo of a dirty {}.',
    'a dark photo of the {}.',
    'a drawing of a {}.',
    'a photo of my {}.',
    'the plastic {}.',
    'a photo of the cool {}.',
    'a close-up photo of a {}.',
    'a black and white photo of the {}.',
    'a painting of the {}.',
    'a painting of a {}.',
    'a pixelated photo of the {}.',
    'a sculpture of the {}.',
    'a bright photo of the {}.',
    'a cropped photo of a {}.',
    'a plastic {}.',
    'a photo of the dirty {}.',
    'a jpeg corrupted photo of a {}.',
    'a blurry photo of the {}.',
    'a photo of the {}.',
    'a good photo of the {}.',
    'a rendering of the {}.',
    'a {} in a video game.',
    'a photo of one {}.',
    'a doodle of a {}.',
    'a close-up photo of the {}.',
    'a photo of a {}.',
    'the origami {}.',
    'the {} in a video game.',
    'a sketch of a {}.',
    'a doodle of the {}.',
    'a origami {}.',
    'a low resolution photo of a {}.',
    'the toy {}.',
    'a rendition of the {}.',
    'a photo of the clean {}.',
    'a photo of a large {}.',
    'a rendition of a {}.',
    'a photo of a nice {}.',
    'a photo of a weird {}.',
    'a blurry photo of a {}.',
    'a cartoon {}.',
    'art of a {}.',
    'a sketch of the {}.',
    'a embroidered {}.',
    'a pixelated photo of a {}.',
    'itap of the {}.',
    'a jpeg corrupted photo of the {}.',
    'a good photo of a {}.',
    'a plushie {}.',
    'a photo of the nice {}.',
    'a photo of the small {}.',
    'a photo of the weird {}.',
    'the cartoon {}.',
    'art of the {}.',
    'a drawing of the {}.',
    'a photo of the large {}.',
    'a black and white photo of a {}.',
    'the plushie {}.',
    'a dark photo of a {}.',
    'itap of a {}.',
    'graffiti of the {}.',
    'a toy {}.',
    'itap of my {}.',
    'a photo of a cool {}.',
    'a photo of a small {}.',
    'a tattoo of the {}.',
]


def zeroshot_classifier(classnames, templates, model):
    with torch.no_grad():
        zeroshot_weights = []
        for classname in classnames:
            texts = [template.format(classname) for template in templates]  # format with class
            texts = clip.tokenize(texts).cuda()  # tokenize
            class_embeddings = model.encode_text(texts)  # embed with text encoder
            class_embeddings /= class_embeddings.norm(dim=-1, keepdim=True)
            class_embedding = class_embeddings.mean(dim=0)
            class_embedding /= class_embedding.norm()
            zeroshot_weights.append(class_embedding)
        zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()
    return zeroshot_weights


def GetDt(classnames, model):
    text_features = zeroshot_classifier(classnames, imagenet_templates, model).t()

    dt = text_features[0] - text_features[1]
    dt = dt.cpu().numpy()

    # t_m1=t_m/np.linalg.norm(t_m)
    # dt=text_features.cpu().numpy()[0]-t_m1
    print(np.linalg.norm(dt))
    dt = dt / np.linalg.norm(dt)
    return dt


def GetBoundary(fs3, dt, M, threshold):
    tmp = np.dot(fs3, dt)

    ds_imp = copy_mean_std(M, tmp)
    select = np.abs(tmp) < threshold
    num_c = np.sum(~select)

    ds_imp[select] = 0
    tmp = np.abs(ds_imp).max()
    ds_imp /= tmp

    boundary_tmp2 = SplitS(ds_imp, M.s_names, M.mindexs)
    print('num of channels being manipulated:', num_c)
    return boundary_tmp2, num_c


def copy_mean_std(M, tmp):
    # scale each channel's relevance by the channel's std in style space
    return tmp * np.concatenate([M.code_std[i] for i in M.mindexs])


def SplitS(ds_p, s_names, mindexs):
    all_ds = []
    start = 0
    for i in mindexs:
        tmp = s_names[i].split('_')[-1] if isinstance(s_names[i], str) else None
        num = ds_p_len(s_names, i)
        end = start + num
        all_ds.append(ds_p[start:end])
        start = end

    all_ds2 = []
    tmp_index = 0
    for i in range(len(s_names)):
        if i in mindexs:
            all_ds2.append(all_ds[tmp_index])
            tmp_index += 1
        else:
            all_ds2.append([])  # ToRGB layers are never manipulated
    return all_ds2


def ds_p_len(s_names, i):
    return S_DIMS[i]


S_DIMS = []


def GetFs(file_path):
    fs = np.load(file_path + 'single_channel.npy')
    tmp = np.linalg.norm(fs, axis=-1)
    fs1 = fs / tmp[:, :, :, None]
    fs2 = fs1[:, :, 1, :] - fs1[:, :, 0, :]  # 5*sigma - (-5)* sigma
    fs3 = fs2 / np.linalg.norm(fs2, axis=-1)[:, :, None]
    fs3 = fs3.mean(axis=1)
    fs3 = fs3 / np.linalg.norm(fs3, axis=-1)[:, None]
    return fs3


def main():
    parser = argparse.ArgumentParser(description='StyleCLIP global direction editing')
    parser.add_argument('--dataset_name', type=str, default='ffhq')
    parser.add_argument('--neutral', type=str, default='face')
    parser.add_argument('--target', type=str, default='face with blond hair')
    parser.add_argument('--beta', type=float, default=0.15, help='disentanglement threshold')
    parser.add_argument('--alpha', type=float, default=4.1, help='manipulation strength')
    parser.add_argument('--img_index', type=int, default=0)
    parser.add_argument('--num_images', type=int, default=4)
    parser.add_argument('--out_dir', type=str, default='./results_global')
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, preprocess = clip.load("ViT-B/32", device=device, jit=False)

    M = Manipulator(dataset_name=args.dataset_name)
    np.set_printoptions(suppress=True)
    S_DIMS[:] = [M.dlatents[i].shape[1] for i in range(len(M.dlatents))]

    fs3 = np.load('./npy/' + args.dataset_name + '/fs3.npy')

    M.alpha = [0, args.alpha]
    M.num_images = args.num_images
    M.img_index = args.img_index
    M.manipulate_layers = None

    classnames = [args.target, args.neutral]
    dt = GetDt(classnames, model)
    boundary_tmp2, c = GetBoundary(fs3, dt, M, threshold=args.beta)
    dlatents_loaded = [tmp[M.img_index:(M.img_index + M.num_images)] for tmp in M.dlatents]
    codes = M.MSCode(dlatents_loaded, boundary_tmp2)
    out = M.GenerateImg(codes)

    os.makedirs(args.out_dir, exist_ok=True)
    for i in range(out.shape[0]):
        row = np.concatenate([out[i, k] for k in range(out.shape[1])], axis=1)
        Image.fromarray(row).save(os.path.join(args.out_dir, f'{args.img_index + i:05d}_{c}ch.jpg'))

    with open(os.path.join(args.out_dir, 'boundary.pkl'), 'wb') as f:
        pickle.dump({'dt': dt, 'beta': args.beta, 'num_channels': int(c)}, f)


if __name__ == '__main__':
    main()
