import argparse
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import numpy as np

from dataset import Dictionary, VQAFeatureDataset
import base_model
from train import train, evaluate
import utils


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--num_hid', type=int, default=1024)
    parser.add_argument('--model', type=str, default='baseline0_newatt')
    parser.add_argument('--output', type=str, default='saved_models/exp0')
    parser.add_argument('--batch_size', type=int, default=512)
    parser.add_argument('--seed', type=int, default=1111, help='random seed')
    parser.add_argument('--gpu', type=str, default='0', help='comma separated GPU ids')
    parser.add_argument('--resume', type=str, default=None, help='model.pth to start from')
    parser.add_argument('--eval_only', action='store_true')
    args = parser.parse_args()
    return args


def write_predictions(model, eval_dset, eval_loader, path):
    """Dump {'question_id', 'answer'} pairs in the format of the VQA server."""
    model.train(False)
    results = []
    with torch.no_grad():
        for v, b, q, a, qids in iter(eval_loader):
            pred = model(v.cuda(), b.cuda(), q.cuda(), None)
            labels = pred.max(1)[1].cpu().tolist()
            for qid, l in zip(qids.tolist(), labels):
                results.append({'question_id': qid, 'answer': eval_dset.label2ans[l]})
    with open(path, 'w') as f:
        json.dump(results, f)
    model.train(True)


if __name__ == '__main__':
    args = parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    dictionary = Dictionary.load_from_file('data/dictionary.pkl')
    train_dset = VQAFeatureDataset('train', dictionary)
    eval_dset = VQAFeatureDataset('val', dictionary)
    batch_size = args.batch_size

    constructor = 'build_%s' % args.model
    model = getattr(base_model, constructor)(train_dset, args.num_hid).cuda()
    model.w_emb.init_embedding('data/glove6b_init_300d.npy')

    model = nn.DataParallel(model).cuda()

    if args.resume is not None:
        model.load_state_dict(torch.load(args.resume))

    train_loader = DataLoader(train_dset, batch_size, shuffle=True, num_workers=1)
    eval_loader = DataLoader(eval_dset, batch_size, shuffle=True, num_workers=1)

    if args.eval_only:
        eval_score, bound = evaluate(model, eval_loader)
        print('eval score: %.2f (%.2f)' % (100 * eval_score, 100 * bound))
        utils.create_dir(args.output)
        write_predictions(model, eval_dset,
                          DataLoader(eval_dset, batch_size, shuffle=False, num_workers=1),
                          os.path.join(args.output, 'val_predictions.json'))
    else:
        train(model, train_loader, eval_loader, args.epochs, args.output)
