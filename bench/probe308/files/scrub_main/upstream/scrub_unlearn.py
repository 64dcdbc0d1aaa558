"""SCRUB: Towards Unbounded Machine Unlearning - small-scale and large-scale runs outside the notebooks.

    python scrub_unlearn.py --dataset cifar10 --model resnet --forget_class 5 --num_to_forget 100 \
        --checkpoint checkpoints/cifar10_resnet_1_0_forget_None_lr_0_1_bs_128_ls_ce_wd_0_0005_seed_1_30.pt
"""
import argparse
import copy
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.swa_utils import AveragedModel

import datasets
import models
from thirdparty.repdistiller.distiller_zoo import DistillKL
from thirdparty.repdistiller.helper.loops import train_distill, validate
from utils import get_membership_attack_prob, l2_penalty


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset', default='cifar10')
    parser.add_argument('--dataroot', default='data/')
    parser.add_argument('--model', default='resnet')
    parser.add_argument('--filters', type=float, default=1.0)
    parser.add_argument('--checkpoint', type=str, required=True, help='original (teacher) model')
    parser.add_argument('--forget_class', type=str, default=None)
    parser.add_argument('--num_to_forget', type=int, default=None)
    parser.add_argument('--confuse_mode', action='store_true')
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--gpu', type=int, default=0, help='GPU id (ignored with --multi_gpu)')
    parser.add_argument('--multi_gpu', action='store_true', help='wrap the student in DataParallel')
    # SCRUB hyper-parameters
    parser.add_argument('--optim', default='sgd')
    parser.add_argument('--gamma', type=float, default=0.99)
    parser.add_argument('--alpha', type=float, default=0.001)
    parser.add_argument('--beta', type=float, default=0)
    parser.add_argument('--smoothing', type=float, default=0.0)
    parser.add_argument('--msteps', type=int, default=2)
    parser.add_argument('--clip', type=float, default=0.2)
    parser.add_argument('--sstart', type=int, default=10)
    parser.add_argument('--kd_T', type=float, default=4)
    parser.add_argument('--distill', default='kd')
    parser.add_argument('--sgda_epochs', type=int, default=5)
    parser.add_argument('--sgda_learning_rate', type=float, default=0.0005)
    parser.add_argument('--lr_decay_epochs', type=int, nargs='+', default=[3, 5, 9])
    parser.add_argument('--lr_decay_rate', type=float, default=0.1)
    parser.add_argument('--sgda_weight_decay', type=float, default=5e-4)
    parser.add_argument('--sgda_momentum', type=float, default=0.9)
    parser.add_argument('--print_freq', type=int, default=100)
    parser.add_argument('--out', default='results/scrub')
    return parser.parse_args()


def manual_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def adjust_learning_rate(epoch, opt, optimizer):
    """Sets the learning rate to the initial LR decayed by decay rate every steep step"""
    steps = np.sum(epoch > np.asarray(opt.lr_decay_epochs))
    new_lr = opt.sgda_learning_rate
    if steps > 0:
        new_lr = opt.sgda_learning_rate * (opt.lr_decay_rate ** steps)
        for param_group in optimizer.param_groups:
            param_group['lr'] = new_lr
    return new_lr


def avg_fn(averaged_model_parameter, model_parameter, num_averaged, beta=0.1):
    return (1 - beta) * averaged_model_parameter + beta * model_parameter


def build_loaders(args):
    train_loader_full, valid_loader_full, test_loader_full = datasets.get_loaders(
        args.dataset, batch_size=args.batch_size, seed=args.seed, root=args.dataroot, augment=False, shuffle=True)
    marked_loader, _, _ = datasets.get_loaders(
        args.dataset, class_to_replace=args.forget_class, num_indexes_to_replace=args.num_to_forget,
        only_mark=True, batch_size=1, seed=args.seed, root=args.dataroot, augment=False, shuffle=True)

    forget_dataset = copy.deepcopy(marked_loader.dataset)
    marked = forget_dataset.targets < 0
    forget_dataset.data = forget_dataset.data[marked]
    forget_dataset.targets = -forget_dataset.targets[marked] - 1
    forget_loader = datasets.replace_loader_dataset(train_loader_full, forget_dataset, seed=args.seed,
                                                    batch_size=args.batch_size, shuffle=True)

    retain_dataset = copy.deepcopy(marked_loader.dataset)
    marked = retain_dataset.targets >= 0
    retain_dataset.data = retain_dataset.data[marked]
    retain_dataset.targets = retain_dataset.targets[marked]
    retain_loader = datasets.replace_loader_dataset(train_loader_full, retain_dataset, seed=args.seed,
                                                    batch_size=args.batch_size, shuffle=True)
    return retain_loader, forget_loader, valid_loader_full, test_loader_full


def main():
    args = parse_args()
    manual_seed(args.seed)
    args.device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.out, exist_ok=True)

    retain_loader, forget_loader, valid_loader, test_loader = build_loaders(args)
    num_classes = max(retain_loader.dataset.targets) + 1

    arch = f"{args.model}"
    model = models.get_model(arch, num_classes=num_classes, filters_percentage=args.filters)
    model.load_state_dict(torch.load(args.checkpoint))
    model = model.to(args.device)

    teacher = copy.deepcopy(model)
    student = copy.deepcopy(model)

    module_list = nn.ModuleList([student, teacher])
    trainable_list = nn.ModuleList([student])

    criterion_cls = nn.CrossEntropyLoss()
    criterion_div = DistillKL(args.kd_T)
    criterion_kd = DistillKL(args.kd_T)

    criterion_list = nn.ModuleList([criterion_cls, criterion_div, criterion_kd])

    # optimizer
    if args.optim == "sgd":
        optimizer = optim.SGD(trainable_list.parameters(), lr=args.sgda_learning_rate,
                              momentum=args.sgda_momentum, weight_decay=args.sgda_weight_decay)
    elif args.optim == "adam":
        optimizer = optim.Adam(trainable_list.parameters(), lr=args.sgda_learning_rate,
                               weight_decay=args.sgda_weight_decay)
    elif args.optim == "rmsp":
        optimizer = optim.RMSprop(trainable_list.parameters(), lr=args.sgda_learning_rate,
                                  momentum=args.sgda_momentum, weight_decay=args.sgda_weight_decay)

    if args.multi_gpu and torch.cuda.device_count() > 1:
        module_list[0] = nn.DataParallel(module_list[0])

    module_list.cuda()
    criterion_list.cuda()

    swa_model = AveragedModel(student, avg_fn=avg_fn)

    acc_rs, acc_fs, acc_vs = [], [], []
    t1 = time.time()
    for epoch in range(1, args.sgda_epochs + 1):
        lr = adjust_learning_rate(epoch, args, optimizer)

        acc_r, acc5_r, loss_r = validate(retain_loader, student, criterion_cls, args, True)
        acc_f, acc5_f, loss_f = validate(forget_loader, student, criterion_cls, args, True)
        acc_v, acc5_v, loss_v = validate(valid_loader, student, criterion_cls, args, True)
        acc_rs.append(100 - acc_r.item())
        acc_fs.append(100 - acc_f.item())
        acc_vs.append(100 - acc_v.item())

        maximize_loss = 0
        if epoch <= args.msteps:
            maximize_loss = train_distill(epoch, forget_loader, module_list, swa_model, criterion_list,
                                          optimizer, args, "maximize")
        train_acc, train_loss = train_distill(epoch, retain_loader, module_list, swa_model, criterion_list,
                                              optimizer, args, "minimize")
        if epoch >= args.sstart:
            swa_model.update_parameters(student)

        print("maximize loss: {:.2f}\t minimize loss: {:.2f}\t train_acc: {}".format(
            maximize_loss, train_loss, train_acc))

    t2 = time.time()
    print(f"SCRUB took {t2 - t1:.1f}s, peak {torch.cuda.max_memory_allocated(args.device) / 1e9:.2f} GB")

    acc_r, _, _ = validate(retain_loader, student, criterion_cls, args, True)
    acc_f, _, _ = validate(forget_loader, student, criterion_cls, args, True)
    acc_t, _, _ = validate(test_loader, student, criterion_cls, args, True)
    mia = get_membership_attack_prob(retain_loader, forget_loader, test_loader, student)
    print(f"retain {acc_r:.2f}  forget {acc_f:.2f}  test {acc_t:.2f}  MIA {mia:.3f}")

    torch.save(student.state_dict(), os.path.join(args.out, f"scrub_{args.dataset}_{args.model}_seed{args.seed}.pt"))


if __name__ == "__main__":
    main()
