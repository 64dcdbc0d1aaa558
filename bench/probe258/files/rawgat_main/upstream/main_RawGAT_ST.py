"""
RawGAT-ST: end-to-end spectro-temporal graph attention network for
speaker verification anti-spoofing and speech deepfake detection.

Training / evaluation entry point (ASVspoof 2019 LA train+dev, 2019/2021 eval).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import yaml
from tensorboardX import SummaryWriter
from torch.utils.data import DataLoader

from data_utils_SSL import (Dataset_ASVspoof2019_train,
                            Dataset_ASVspoof2019_eval, genSpoof_list)
from model_RawGAT_ST import RawGAT_ST
from startup_config import set_random_seed

__author__ = "Hemlata Tak"
__email__ = "tak@eurecom.fr"


def evaluate_accuracy(dev_loader, model, device):
    num_correct = 0.0
    num_total = 0.0
    model.eval()
    with torch.no_grad():
        for batch_x, batch_y, batch_meta in dev_loader:
            batch_size = batch_x.size(0)
            num_total += batch_size
            batch_x = batch_x.to(device)
            batch_y = batch_y.view(-1).type(torch.int64).to(device)
            batch_out = model(batch_x, Freq_aug=False)
            _, batch_pred = batch_out.max(dim=1)
            num_correct += (batch_pred == batch_y).sum(dim=0).item()
    return 100 * (num_correct / num_total)


def produce_evaluation_file(dataset, model, device, save_path, batch_size=64):
    data_loader = DataLoader(dataset, batch_size=batch_size, shuffle=False,
                             num_workers=4)
    model.eval()
    true_y = []
    fname_list = []
    key_list = []
    sys_id_list = []
    score_list = []

    with torch.no_grad():
        for batch_x, batch_y, batch_meta in data_loader:
            batch_x = batch_x.to(device)
            batch_out = model(batch_x, Freq_aug=False)
            batch_score = (batch_out[:, 1] - batch_out[:, 0]
                           ).data.cpu().numpy().ravel()

            # add outputs
            fname_list.extend(list(batch_meta[1]))
            key_list.extend(
                ['bonafide' if key == 1 else 'spoof' for key in list(batch_meta[4])])
            sys_id_list.extend([dataset.sysid_dict_inv[s.item()]
                                for s in list(batch_meta[3])])
            score_list.extend(batch_score.tolist())

    with open(save_path, 'w') as fh:
        for f, s, k, cm in zip(fname_list, sys_id_list, key_list, score_list):
            if not dataset.is_eval:
                fh.write('{} {} {} {}\n'.format(f, s, k, cm))
            else:
                fh.write('{} {}\n'.format(f, cm))
    print('Result saved to {}'.format(save_path))


def train_epoch(data_loader, model, lr, optimizer, device, grad_clip=None):
    running_loss = 0
    num_correct = 0.0
    num_total = 0.0
    ii = 0
    model.train()

    # set objective (loss) functions
    weight = torch.FloatTensor([0.1, 0.9]).to(device)
    criterion = nn.CrossEntropyLoss(weight=weight)

    t0 = time.time()
    for batch_x, batch_y, batch_meta in data_loader:
        batch_size = batch_x.size(0)
        num_total += batch_size
        ii += 1
        batch_x = batch_x.to(device)
        batch_y = batch_y.view(-1).type(torch.int64).to(device)

        batch_out = model(batch_x, Freq_aug=True)
        batch_loss = criterion(batch_out, batch_y)
        _, batch_pred = batch_out.max(dim=1)
        num_correct += (batch_pred == batch_y).sum(dim=0).item()
        running_loss += (batch_loss.item() * batch_size)
        if ii % 10 == 0:
            sys.stdout.write('\r \t {:.2f} ({:.1f}s)'.format(
                (num_correct / num_total) * 100, time.time() - t0))
        optimizer.zero_grad()
        batch_loss.backward()
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()

    running_loss /= num_total
    train_accuracy = (num_correct / num_total) * 100
    return running_loss, train_accuracy


def strip_module_prefix(state_dict):
    """Checkpoints written from nn.DataParallel carry a 'module.' prefix."""
    if not any(k.startswith('module.') for k in state_dict):
        return state_dict
    return {k[len('module.'):]: v for k, v in state_dict.items()}


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='ASVSpoof2019 RawGAT-ST model')

    # Dataset
    parser.add_argument('--database_path', type=str, default='/your/path/to/data/ASVspoof_database/',
                        help='Change this to user\'s full directory address of LA database')
    parser.add_argument('--protocols_path', type=str, default='/your/path/to/protocols/ASVspoof_database/',
                        help='Change with path to user\'s LA database protocols directory address')

    # Hyperparameters
    parser.add_argument('--batch_size', type=int, default=10)
    parser.add_argument('--num_epochs', type=int, default=300)
    parser.add_argument('--lr', type=float, default=0.0001)
    parser.add_argument('--weight_decay', type=float, default=0.0001)
    parser.add_argument('--loss', type=str, default='WCE', help='Weighted Cross Entropy Loss ')
    parser.add_argument('--grad_clip', type=float, default=None)

    # model
    parser.add_argument('--seed', type=int, default=1234, help='random seed (default: 1234)')
    parser.add_argument('--model_path', type=str, default=None, help='Model checkpoint')
    parser.add_argument('--comment', type=str, default=None, help='Comment to describe the saved model')

    # Auxiliary arguments
    parser.add_argument('--track', type=str, default='logical', choices=['logical', 'physical'], help='logical/physical')
    parser.add_argument('--eval_output', type=str, default=None, help='Path to save the evaluation result')
    parser.add_argument('--eval', action='store_true', default=False, help='eval mode')
    parser.add_argument('--is_eval', action='store_true', default=False, help='eval database')
    parser.add_argument('--eval_part', type=int, default=0)
    parser.add_argument('--features', type=str, default='Raw_GAT')
    parser.add_argument('--gpus', type=str, default='0,1',
                        help='comma separated list of GPU ids to train on')
    parser.add_argument('--num_workers', type=int, default=8)

    # backend options
    parser.add_argument('--cudnn-deterministic-toggle', action='store_false',
                        default=True,
                        help='use cudnn-deterministic? (default true)')
    parser.add_argument('--cudnn-benchmark-toggle', action='store_true',
                        default=False,
                        help='use cudnn-benchmark? (default false)')

    dir_yaml = os.path.splitext('model_config_RawGAT_ST')[0] + '.yaml'

    with open(dir_yaml, 'r') as f_yaml:
        parser1 = yaml.safe_load(f_yaml)

    if not os.path.exists('models'):
        os.mkdir('models')
    args = parser.parse_args()

    # restrict the visible GPUs before anything touches CUDA
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus

    # make experiment reproducible
    set_random_seed(args.seed, args)

    track = args.track
    assert args.features in ['Raw_GAT'], 'Not supported feature'
    model_tag = 'model_{}_{}_{}_{}_{}_{}'.format(
        track, args.loss, args.features, args.num_epochs, args.batch_size, args.lr)
    if args.comment:
        model_tag = model_tag + '_{}'.format(args.comment)
    model_save_path = os.path.join('models', model_tag)
    is_logical = (track == 'logical')

    # set model save directory
    if not os.path.exists(model_save_path):
        os.mkdir(model_save_path)

    # GPU device
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    n_gpu = torch.cuda.device_count()
    print('Device: {} (visible GPUs: {})'.format(device, n_gpu))

    # model
    model = RawGAT_ST(parser1['model'], device)
    nb_params = sum([param.view(-1).size()[0] for param in model.parameters()])
    model = nn.DataParallel(model).to(device)
    print('nb_params:', nb_params)

    # set Adam optimizer
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    if args.model_path:
        state = torch.load(args.model_path, map_location=device)
        model.module.load_state_dict(strip_module_prefix(state))
        print('Model loaded : {}'.format(args.model_path))

    # Inference
    if args.eval:
        eval_files = genSpoof_list(
            dir_meta=os.path.join(args.protocols_path, 'ASVspoof2019_LA_cm_protocols/ASVspoof2019.LA.cm.eval.trl.txt'),
            is_train=False, is_eval=True)
        print('no. of eval trials', len(eval_files))
        eval_set = Dataset_ASVspoof2019_eval(
            list_IDs=eval_files,
            base_dir=os.path.join(args.database_path, 'ASVspoof2019_LA_eval/'))
        produce_evaluation_file(eval_set, model, device, args.eval_output,
                                batch_size=args.batch_size * max(n_gpu, 1))
        sys.exit(0)

    # Training Dataloader
    d_label_trn, file_train = genSpoof_list(
        dir_meta=os.path.join(args.protocols_path, 'ASVspoof2019_LA_cm_protocols/ASVspoof2019.LA.cm.train.trn.txt'),
        is_train=True, is_eval=False)
    print('no. of training trials', len(file_train))

    train_set = Dataset_ASVspoof2019_train(
        list_IDs=file_train, labels=d_label_trn,
        base_dir=os.path.join(args.database_path, 'ASVspoof2019_LA_train/'))
    # scale the global batch with the number of GPUs that DataParallel splits over
    train_loader = DataLoader(train_set, batch_size=args.batch_size * max(n_gpu, 1),
                              num_workers=args.num_workers, shuffle=True, drop_last=True,
                              pin_memory=torch.cuda.is_available())
    del train_set, d_label_trn

    # validation Dataloader
    d_label_dev, file_dev = genSpoof_list(
        dir_meta=os.path.join(args.protocols_path, 'ASVspoof2019_LA_cm_protocols/ASVspoof2019.LA.cm.dev.trl.txt'),
        is_train=False, is_eval=False)
    print('no. of validation trials', len(file_dev))

    dev_set = Dataset_ASVspoof2019_train(
        list_IDs=file_dev, labels=d_label_dev,
        base_dir=os.path.join(args.database_path, 'ASVspoof2019_LA_dev/'))
    dev_loader = DataLoader(dev_set, batch_size=args.batch_size,
                            num_workers=args.num_workers, shuffle=False)
    del dev_set, d_label_dev

    # Training and validation
    num_epochs = args.num_epochs
    writer = SummaryWriter('logs/{}'.format(model_tag))
    best_acc = 99
    for epoch in range(num_epochs):
        running_loss, train_accuracy = train_epoch(train_loader, model, args.lr,
                                                   optimizer, device, args.grad_clip)
        valid_accuracy = evaluate_accuracy(dev_loader, model, device)
        torch.cuda.empty_cache()
        writer.add_scalar('train_accuracy', train_accuracy, epoch)
        writer.add_scalar('valid_accuracy', valid_accuracy, epoch)
        writer.add_scalar('loss', running_loss, epoch)
        print('\n{} - {} - {:.2f} - {:.2f}'.format(
            epoch, running_loss, train_accuracy, valid_accuracy))

        if valid_accuracy > best_acc:
            print('best model find at epoch', epoch)
        best_acc = max(valid_accuracy, best_acc)
        # save the bare module so the checkpoint loads on a single GPU too
        torch.save(model.module.state_dict(),
                   os.path.join(model_save_path, 'epoch_{}.pth'.format(epoch)))
