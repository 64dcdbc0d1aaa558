import datetime
import os
import random

import numpy as np
import torch
import torch.optim as optim
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

import option
from config import Config
from datasets.dataset import Dataset
from models.mgfn import mgfn
from test import test
from train import train
from utils.utils import save_best_record

args = option.parse_args()


def save_config(save_path):
    path = save_path + '/'
    os.makedirs(path, exist_ok=True)
    f = open(path + "config_{}.txt".format(datetime.datetime.now()), 'w')
    for key in vars(args).keys():
        f.write('{}: {}'.format(key, vars(args)[key]))
        f.write('\n')
    f.close()


def init_seeds(seed=2022):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


savepath = './ckpt/{}_{}_{}_{}_{}_{}'.format(
    args.datasetname, args.feat_extractor, args.lr, args.batch_size, args.mag_ratio, args.comment)
save_config(savepath)
log_writer = SummaryWriter(savepath)

try:
    torch.multiprocessing.set_start_method('spawn')
except RuntimeError:
    pass


if __name__ == '__main__':
    args = option.parse_args()
    config = Config(args)
    init_seeds(args.seed)

    # pick the card given on the command line (--gpu), default 0
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda:{}'.format(args.gpu))
    print('running on', torch.cuda.get_device_name(args.gpu))

    train_nloader = DataLoader(Dataset(args, test_mode=False, is_normal=True),
                               batch_size=args.batch_size, shuffle=False,
                               num_workers=args.workers, pin_memory=False, drop_last=True)
    train_aloader = DataLoader(Dataset(args, test_mode=False, is_normal=False),
                               batch_size=args.batch_size, shuffle=False,
                               num_workers=args.workers, pin_memory=False, drop_last=True)
    test_loader = DataLoader(Dataset(args, test_mode=True),
                             batch_size=1, shuffle=False,
                             num_workers=0, pin_memory=False)

    model = mgfn(
        classes=0,
        dims=(64, 128, 1024),
        depths=(args.depths1, args.depths2, args.depths3),
        mgfn_types=(args.mgfn_type1, args.mgfn_type2, args.mgfn_type3),
        lokernel=5,
        channels=2048 if args.feat_extractor == 'i3d' else 512,
        ff_repe=4,
        dim_head=64,
        dropout=0.0,
        attention_dropout=args.dropout_rate,
    )
    if args.pretrained_ckpt is not None:
        model_ckpt = torch.load(args.pretrained_ckpt)
        model.load_state_dict(model_ckpt)
        print("pretrained loaded")

    model = model.cuda()

    if not os.path.exists('./ckpt'):
        os.makedirs('./ckpt')

    optimizer = optim.Adam(model.parameters(), lr=config.lr[0], weight_decay=0.0005)
    test_info = {"epoch": [], "test_AUC": [], "test_PR": []}

    best_AUC = -1
    best_PR = -1  # put your own path here

    iterator = 0
    for step in tqdm(
            range(1, args.max_epoch + 1),
            total=args.max_epoch,
            dynamic_ncols=True
    ):

        cost, loss_smooth, loss_sparse = train(train_nloader, train_aloader, model, args.batch_size,
                                               optimizer, device, iterator, use_amp=args.amp)
        log_writer.add_scalar('loss_contrastive', cost, step)

        if step % 1 == 0 and step > 0:
            auc, pr_auc = test(test_loader, model, args, device)
            log_writer.add_scalar('auc-roc', auc, step)
            log_writer.add_scalar('pr_auc', pr_auc, step)

            test_info["epoch"].append(step)
            test_info["test_AUC"].append(auc)
            test_info["test_PR"].append(pr_auc)
            if args.datasetname == 'XD':
                if test_info["test_PR"][-1] > best_PR:
                    best_PR = test_info["test_PR"][-1]
                    torch.save(model.state_dict(), savepath + '/' + args.model_name + '{}-i3d.pkl'.format(step))
                    save_best_record(test_info, os.path.join(savepath + "/", '{}-step.txt'.format(step)))
            else:
                if test_info["test_AUC"][-1] > best_AUC:
                    best_AUC = test_info["test_AUC"][-1]
                    torch.save(model.state_dict(), savepath + '/' + args.model_name + '{}-i3d.pkl'.format(step))
                    save_best_record(test_info, os.path.join(savepath + "/", '{}-step.txt'.format(step)))
        torch.cuda.empty_cache()

    torch.save(model.state_dict(), './ckpt/' + args.model_name + 'final.pkl')
    log_writer.close()
