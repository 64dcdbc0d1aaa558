# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import os
import argparse

import numpy as np
import torch
import torch.nn.functional as F

from semilearn.core.utils import get_net_builder, get_dataset, get_data_loader, over_write_args_from_file
from semilearn.algorithms.utils import str2bool


def get_args():
    parser = argparse.ArgumentParser(description='Evaluate a USB checkpoint')
    parser.add_argument('--c', type=str, default='', help='config used for training (optional)')
    parser.add_argument('--load_path', type=str, required=True)

    '''
    Backbone Net Configurations
    '''
    parser.add_argument('--net', type=str, default='wrn_28_2')
    parser.add_argument('--net_from_name', type=str2bool, default=False)

    '''
    Data Configurations
    '''
    parser.add_argument('--batch_size', type=int, default=256)
    parser.add_argument('--data_dir', type=str, default='./data')
    parser.add_argument('--dataset', type=str, default='cifar10')
    parser.add_argument('--num_classes', type=int, default=10)
    parser.add_argument('--num_labels', type=int, default=40)
    parser.add_argument('--img_size', type=int, default=32)
    parser.add_argument('--crop_ratio', type=float, default=0.875)
    parser.add_argument('--max_length', type=int, default=512)
    parser.add_argument('--max_length_seconds', type=float, default=4.0)
    parser.add_argument('--sample_rate', type=int, default=16000)
    parser.add_argument('--save_feats', action='store_true', help='dump penultimate features next to the checkpoint')
    args = parser.parse_args()
    over_write_args_from_file(args, args.c)
    return args


if __name__ == "__main__":
    args = get_args()

    checkpoint_path = os.path.join(args.load_path)
    checkpoint = torch.load(checkpoint_path)
    load_model = checkpoint['ema_model']
    load_state_dict = {}
    for key, item in load_model.items():
        if key.startswith('module'):
            new_key = '.'.join(key.split('.')[1:])
            load_state_dict[new_key] = item
        else:
            load_state_dict[key] = item
    save_dir = '/'.join(checkpoint_path.split('/')[:-1])
    args.save_dir = save_dir
    args.save_name = ''

    net = get_net_builder(args.net, args.net_from_name)(num_classes=args.num_classes)
    keys = net.load_state_dict(load_state_dict)
    print(f"missing keys: {keys.missing_keys}, unexpected keys: {keys.unexpected_keys}")
    if torch.cuda.is_available():
        net.cuda()
    net.eval()

    # specify these arguments manually
    args.num_labels = 40
    args.ulb_num_labels = 49600
    args.lb_imb_ratio = 1
    args.ulb_imb_ratio = 1
    args.seed = 0
    args.epoch = 1
    args.num_train_iter = 1024
    dataset_dict = get_dataset(args, 'fixmatch', args.dataset, args.num_labels, args.num_classes, args.data_dir, False)
    eval_dset = dataset_dict['eval']
    eval_loader = get_data_loader(args, eval_dset, args.batch_size, data_sampler=None, num_workers=4, drop_last=False)

    acc = 0.0
    test_feats = []
    test_preds = []
    test_probs = []
    test_labels = []
    with torch.no_grad():
        for data in eval_loader:
            image = data['x_lb']
            target = data['y_lb']

            image = image.type(torch.FloatTensor).cuda()
            feat = net(image, only_feat=True)
            logit = net(feat, only_fc=True)
            prob = logit.softmax(dim=-1)
            pred = prob.argmax(1)

            acc += pred.cpu().eq(target).numpy().sum()
            test_feats.append(feat.cpu().numpy())
            test_preds.append(pred.cpu().numpy())
            test_probs.append(prob.cpu().numpy())
            test_labels.append(target.cpu().numpy())
    test_feats = np.concatenate(test_feats)
    test_preds = np.concatenate(test_preds)
    test_probs = np.concatenate(test_probs)
    test_labels = np.concatenate(test_labels)

    print(f"Test Accuracy: {acc / len(eval_dset)}")

    if args.save_feats:
        np.savez(os.path.join(save_dir, 'eval_feats.npz'),
                 feats=test_feats, preds=test_preds, probs=test_probs, labels=test_labels)
        print(f"features saved to {os.path.join(save_dir, 'eval_feats.npz')}")
