import os
import random
import time

import numpy as np
import torch
import torch.optim as optim
from torch.utils.data import DataLoader
from tqdm import tqdm

import option
from config import Config
from dataset import Dataset
from model import Model
from test_10crop import test
from train import train
from utils import Visualizer, save_best_record

viz = Visualizer(env='shanghai tech 10 crop', use_incoming_socket=False)


def setup_seed(seed):
    """Make runs comparable across machines (as far as cuDNN allows)."""
    random.seed(seed)
    np.random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


if __name__ == '__main__':
    args = option.parser.parse_args()
    config = Config(args)
    setup_seed(args.seed)

    # the original experiments were all run on a single 2080Ti
    device = torch.device("cuda")

    train_nloader = DataLoader(Dataset(args, test_mode=False, is_normal=True),
                               batch_size=args.batch_size, shuffle=True,
                               num_workers=0, pin_memory=False, drop_last=True)
    train_aloader = DataLoader(Dataset(args, test_mode=False, is_normal=False),
                               batch_size=args.batch_size, shuffle=True,
                               num_workers=0, pin_memory=False, drop_last=True)
    test_loader = DataLoader(Dataset(args, test_mode=True),
                             batch_size=1, shuffle=False,
                             num_workers=0, pin_memory=False)

    model = Model(args.feature_size, args.batch_size)
    print('trainable params: {:.3f}M'.format(count_parameters(model) / 1e6))

    if args.pretrained_ckpt is not None:
        state = torch.load(args.pretrained_ckpt, map_location='cpu')
        missing, unexpected = model.load_state_dict(state, strict=False)
        print('loaded {} (missing={}, unexpected={})'.format(
            args.pretrained_ckpt, len(missing), len(unexpected)))

    for name, value in model.named_parameters():
        print(name)
    model = model.to(device)

    if not os.path.exists('./ckpt'):
        os.makedirs('./ckpt')

    optimizer = optim.Adam(model.parameters(),
                           lr=config.lr[0], weight_decay=0.005)

    test_info = {"epoch": [], "test_AUC": []}
    best_AUC = -1
    output_path = ''   # put your own path here
    auc = test(test_loader, model, args, viz, device)
    print('AUC before training: {:.4f}'.format(auc))

    tic = time.time()
    for step in tqdm(
            range(1, args.max_epoch + 1),
            total=args.max_epoch,
            dynamic_ncols=True
    ):
        if step > 1 and config.lr[step - 1] != config.lr[step - 2]:
            for param_group in optimizer.param_groups:
                param_group["lr"] = config.lr[step - 1]

        if (step - 1) % len(train_nloader) == 0:
            loadern_iter = iter(train_nloader)

        if (step - 1) % len(train_aloader) == 0:
            loadera_iter = iter(train_aloader)

        train(loadern_iter, loadera_iter, model, args.batch_size, optimizer, viz, device)

        if step % 5 == 0 and step > 200:

            auc = test(test_loader, model, args, viz, device)
            test_info["epoch"].append(step)
            test_info["test_AUC"].append(auc)

            if test_info["test_AUC"][-1] > best_AUC:
                best_AUC = test_info["test_AUC"][-1]
                torch.save(model.state_dict(), './ckpt/' + args.model_name + '{}-i3d.pkl'.format(step))
                save_best_record(test_info, os.path.join(output_path, '{}-step-AUC.txt'.format(step)))

        if step % 100 == 0:
            # peak memory is useful when trying larger batch sizes on 11GB cards
            print('step {} | {:.1f}s | best AUC {:.4f} | max mem {:.0f}MB'.format(
                step, time.time() - tic, best_AUC,
                torch.cuda.max_memory_allocated() / 1024 ** 2))

    torch.save(model.state_dict(), './ckpt/' + args.model_name + 'final.pkl')
