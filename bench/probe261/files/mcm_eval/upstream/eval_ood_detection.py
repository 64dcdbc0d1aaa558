"""Zero-shot OOD detection with CLIP: MCM / GL-MCM scores.

    python eval_ood_detection.py --in_dataset ImageNet --CLIP_ckpt ViT-B/16 \
        --score MCM --gpu 0 --batch_size 512

Everything runs on a single GPU; ImageNet-1K val + 4 OOD sets takes ~6 min on
an A100 with fp16 autocast.
"""
import argparse
import logging
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as transforms
from scipy import stats
from tqdm import tqdm
from transformers import CLIPModel, CLIPTokenizer

from utils.common import AverageMeter, get_num_cls, get_test_labels, setup_log
from utils.detection_util import get_and_print_results, get_ood_loader, print_measures
from utils.file_ops import save_as_dataframe
from utils.plot_util import plot_distribution

CKPT_MAPPING = {
    'ViT-B/32': 'openai/clip-vit-base-patch32',
    'ViT-B/16': 'openai/clip-vit-base-patch16',
    'ViT-L/14': 'openai/clip-vit-large-patch14',
}


def process_args():
    parser = argparse.ArgumentParser(description='Evaluates MCM Score for CLIP',
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    # setting for each run
    parser.add_argument('--in_dataset', default='ImageNet', type=str,
                        choices=['ImageNet', 'ImageNet10', 'ImageNet20', 'ImageNet100',
                                 'pet37', 'food101', 'car196', 'bird200'], help='in-distribution dataset')
    parser.add_argument('--root-dir', default="datasets", type=str,
                        help='root dir of datasets')
    parser.add_argument('--name', default="eval_ood",
                        type=str, help="unique ID for the run")
    parser.add_argument('--seed', default=5, type=int, help="random seed")
    parser.add_argument('--gpu', default=0, type=int,
                        help='the GPU indice to use')
    parser.add_argument('-b', '--batch_size', default=512, type=int,
                        help='mini-batch size')
    parser.add_argument('--T', type=int, default=1,
                        help='temperature parameter')
    parser.add_argument('--model', default='CLIP', type=str, help='model architecture')
    parser.add_argument('--CLIP_ckpt', type=str, default='ViT-B/16',
                        choices=['ViT-B/32', 'ViT-B/16', 'ViT-L/14'], help='which pretrained img encoder to use')
    parser.add_argument('--score', default='MCM', type=str, choices=[
        'MCM', 'energy', 'max-logit', 'entropy', 'var', 'maha'], help='score options')
    # for Mahalanobis score
    parser.add_argument('--feat_dim', type=int, default=512, help='feat dim; 512 for ViT-B and 768 for ViT-L')
    parser.add_argument('--normalize', type=bool, default=False, help='whether use normalized features for Maha score')
    parser.add_argument('--generate', type=bool, default=True,
                        help='whether to generate class-wise means or read from files for Maha score')
    parser.add_argument('--template_dir', type=str, default='img_templates',
                        help='the loc of stored classwise mean and precision matrix')
    parser.add_argument('--subset', default=False, type=bool,
                        help="whether uses a subset of samples in the training set")
    parser.add_argument('--max_count', default=250, type=int,
                        help="how many samples are used to estimate classwise mean and precision matrix")
    parser.add_argument('--fp16', action='store_true', help='run the image/text towers under autocast')
    parser.add_argument('--compile', action='store_true', help='torch.compile the vision tower (torch>=2.0)')
    args = parser.parse_args()

    args.n_cls = get_num_cls(args)
    args.log_directory = f"results/{args.in_dataset}/{args.score}/{args.model}_{args.CLIP_ckpt}_T_{args.T}_ID_{args.name}"
    os.makedirs(args.log_directory, exist_ok=True)

    return args


def setup_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True


def enable_tf32_if_ampere():
    # TF32 matmuls are ~2x faster on A100 for the ViT-L/14 tower and do not
    # change the AUROC beyond the 2nd decimal.
    if torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def set_model_clip(args):
    '''
    load Huggingface CLIP
    '''
    args.ckpt = CKPT_MAPPING[args.CLIP_ckpt]
    model = CLIPModel.from_pretrained(args.ckpt)
    if args.model == 'CLIP-Linear':
        model.load_state_dict(torch.load(args.finetune_ckpt, map_location=torch.device(args.gpu)))
    model = model.cuda()
    normalize = transforms.Normalize(mean=(0.48145466, 0.4578275, 0.40821073),
                                     std=(0.26862954, 0.26130258, 0.27577711))  # for CLIP
    val_preprocess = transforms.Compose([
        transforms.Resize(224),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        normalize
    ])
    return model, val_preprocess


def set_val_loader(args, preprocess=None):
    root = args.root_dir
    if preprocess is None:
        normalize = transforms.Normalize(mean=(0.48145466, 0.4578275, 0.40821073),
                                         std=(0.26862954, 0.26130258, 0.27577711))
        preprocess = transforms.Compose([
            transforms.Resize(224),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            normalize
        ])
    kwargs = {'num_workers': 4, 'pin_memory': True}
    import torchvision.datasets as dset
    if args.in_dataset in ['ImageNet', 'ImageNet10', 'ImageNet20', 'ImageNet100']:
        path = os.path.join(root, args.in_dataset, 'val')
        dataset = dset.ImageFolder(path, transform=preprocess)
    else:
        dataset = dset.ImageFolder(os.path.join(root, args.in_dataset, 'test'), transform=preprocess)
    val_loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=False, **kwargs)
    return val_loader


@torch.no_grad()
def get_text_features(net, tokenizer, test_labels, device):
    text_inputs = tokenizer([f"a photo of a {c}" for c in test_labels], padding=True, return_tensors="pt")
    text_features = net.get_text_features(input_ids=text_inputs['input_ids'].to(device),
                                          attention_mask=text_inputs['attention_mask'].to(device)).float()
    text_features /= text_features.norm(dim=-1, keepdim=True)
    return text_features


def get_ood_scores_clip(args, net, loader, test_labels, in_dist=False):
    '''
    used for scores based on img-caption product inner products: MCM, entropy, energy score.
    '''
    to_np = lambda x: x.data.cpu().numpy()
    concat = lambda x: np.concatenate(x, axis=0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    _score = []
    tokenizer = CLIPTokenizer.from_pretrained(args.ckpt)
    text_features = get_text_features(net, tokenizer, test_labels, device)
    tqdm_object = tqdm(loader, total=len(loader))
    with torch.no_grad():
        for batch_idx, (images, labels) in enumerate(tqdm_object):
            bz = images.size(0)
            labels = labels.long().cuda()
            images = images.cuda()
            with torch.cuda.amp.autocast(enabled=args.fp16):
                image_features = net.get_image_features(pixel_values=images).float()
            image_features /= image_features.norm(dim=-1, keepdim=True)
            output = image_features @ text_features.T
            if args.score == 'max-logit':
                smax = to_np(output)
            else:
                smax = to_np(F.softmax(output / args.T, dim=1))
            if args.score == 'energy':
                # energy score is expected to be smaller for ID
                _score.append(-to_np((args.T * torch.logsumexp(output / args.T, dim=1))))
            elif args.score == 'entropy':
                # raw_value = entropy(smax)
                # filtered = raw_value[raw_value > -1e-5]
                _score.append(stats.entropy(smax, axis=1))
                # _score.append(filtered)
            elif args.score == 'var':
                _score.append(-np.var(smax, axis=1))
            elif args.score in ['MCM', 'max-logit']:
                _score.append(-np.max(smax, axis=1))

    return concat(_score)[:len(loader.dataset)].copy()


def main():
    args = process_args()
    setup_seed(args.seed)
    log = setup_log(args)
    assert torch.cuda.is_available()
    torch.cuda.set_device(args.gpu)
    enable_tf32_if_ampere()

    net, preprocess = set_model_clip(args)
    net.eval()
    if args.compile:
        net.vision_model = torch.compile(net.vision_model, mode="max-autotune")

    if args.in_dataset in ['ImageNet10']:
        out_datasets = ['ImageNet20']
    elif args.in_dataset in ['ImageNet20']:
        out_datasets = ['ImageNet10']
    elif args.in_dataset in ['ImageNet', 'ImageNet100', 'bird200', 'car196', 'food101', 'pet37']:
        out_datasets = ['iNaturalist', 'SUN', 'places365', 'dtd']
    test_loader = set_val_loader(args, preprocess)
    test_labels = get_test_labels(args, test_loader)

    in_score = get_ood_scores_clip(args, net, test_loader, test_labels, in_dist=True)

    auroc_list, aupr_list, fpr_list = [], [], []
    for out_dataset in out_datasets:
        log.debug(f"Evaluting OOD dataset {out_dataset}")
        ood_loader = get_ood_loader(args, preprocess, out_dataset)
        out_score = get_ood_scores_clip(args, net, ood_loader, test_labels)
        log.debug(f"in scores: {stats.describe(in_score)}")
        log.debug(f"out scores: {stats.describe(out_score)}")
        plot_distribution(args, in_score, out_score, out_dataset)
        get_and_print_results(args, log, in_score, out_score,
                              auroc_list, aupr_list, fpr_list)
    log.debug('\n\nMean Test Results')
    print_measures(log, np.mean(auroc_list), np.mean(aupr_list),
                   np.mean(fpr_list), method_name=args.score)
    save_as_dataframe(args, out_datasets, fpr_list, auroc_list, aupr_list)
    log.debug('peak GPU memory: {:.2f} GB'.format(torch.cuda.max_memory_allocated() / 1024 ** 3))


if __name__ == '__main__':
    main()
