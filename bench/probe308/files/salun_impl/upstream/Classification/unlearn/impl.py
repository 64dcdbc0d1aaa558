import os
import sys
import time

import matplotlib.pyplot as plt
import numpy as np
import pruner
import torch
import utils
from pruner import extract_mask, prune_model_custom, remove_prune

sys.path.append(".")
from trainer import validate


def plot_training_curve(training_result, save_dir, prefix):
    # plot training curve
    for name, result in training_result.items():
        plt.plot(result, label=f"{name}_acc")
    plt.legend()
    plt.savefig(os.path.join(save_dir, prefix + "_train.png"))
    plt.close()


def save_unlearn_checkpoint(model, evaluation_result, args):
    state = {"state_dict": model.state_dict(), "evaluation_result": evaluation_result}
    utils.save_checkpoint(state, False, args.save_dir, args.unlearn)
    utils.save_checkpoint(
        evaluation_result,
        False,
        args.save_dir,
        args.unlearn,
        filename="eval_result.pth.tar",
    )


def load_unlearn_checkpoint(model, device, args):
    checkpoint = utils.load_checkpoint(device, args.save_dir, args.unlearn)
    if checkpoint is None or checkpoint.get("state_dict") is None:
        return None

    current_mask = pruner.extract_mask(checkpoint["state_dict"])
    pruner.prune_model_custom(model, current_mask)
    pruner.check_sparsity(model)

    model.load_state_dict(checkpoint["state_dict"], strict=False)

    # adding an extra forward process to enable the masks
    x_rand = torch.rand(1, 3, args.input_size, args.input_size).cuda()
    model.eval()
    with torch.no_grad():
        model(x_rand)

    evaluation_result = checkpoint.get("evaluation_result")
    return model, evaluation_result


def _iterative_unlearn_impl(unlearn_iter_func):
    def _wrapped(data_loaders, model, criterion, args, mask=None, **kwargs):
        decreasing_lr = list(map(int, args.decreasing_lr.split(",")))
        if args.rewind_epoch != 0:
            initialization = torch.load(
                args.rewind_pth, map_location=torch.device("cuda:" + str(args.gpu))
            )
            current_mask = extract_mask(model.state_dict())
            remove_prune(model)
            # weight rewinding
            # rewind, initialization is a full model architecture without masks
            model.load_state_dict(initialization, strict=True)
            prune_model_custom(model, current_mask)

        if args.unlearn == "FT_prune_bi" or args.unlearn == "FT_prune":
            # l1-sparse variants keep the pruning masks on the same device as the weights
            pruner.global_prune_model(model, args.rate, args.random_prune)
            pruner.check_sparsity(model)

        optimizer = torch.optim.SGD(
            model.parameters(),
            args.unlearn_lr,
            momentum=args.momentum,
            weight_decay=args.weight_decay,
        )

        if args.imagenet_arch and args.unlearn == "retrain":
            lambda0 = (
                lambda cur_iter: (cur_iter + 1) / args.warmup
                if cur_iter < args.warmup
                else (
                    0.5
                    * (
                        1.0
                        + np.cos(
                            np.pi
                            * (
                                (cur_iter - args.warmup)
                                / (args.unlearn_epochs - args.warmup)
                            )
                        )
                    )
                )
            )
            scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda0)
        else:
            scheduler = torch.optim.lr_scheduler.MultiStepLR(
                optimizer, milestones=decreasing_lr, gamma=0.1
            )  # 0.1 is fixed
        if args.rewind_epoch != 0:
            # learning rate rewinding
            for _ in range(args.rewind_epoch):
                scheduler.step()

        training_result = {"retain": [], "forget": []}
        for epoch in range(0, args.unlearn_epochs):
            start_time = time.time()
            print(
                "Epoch #{}, Learning rate: {}".format(
                    epoch, optimizer.state_dict()["param_groups"][0]["lr"]
                )
            )

            train_acc = unlearn_iter_func(
                data_loaders, model, criterion, optimizer, epoch, args, mask, **kwargs
            )
            scheduler.step()
            training_result["retain"].append(train_acc)

            if args.print_forget_acc:
                forget_acc = validate(data_loaders["forget"], model, criterion, args)
                training_result["forget"].append(forget_acc)

            torch.cuda.synchronize()
            print("one epoch duration:{}".format(time.time() - start_time))

        plot_training_curve(training_result, args.save_dir, args.unlearn)

    return _wrapped


def iterative_unlearn(func):
    """usage:

    @iterative_unlearn

    def func(data_loaders, model, criterion, optimizer, epoch, args)"""
    return _iterative_unlearn_impl(func)


def l1_regularization(model):
    params_vec = []
    for param in model.parameters():
        params_vec.append(param.view(-1))
    return torch.linalg.norm(torch.cat(params_vec), ord=1)


def apply_saliency_mask(model, mask):
    """SalUn: only update the salient weights (mask == 1)."""
    if mask is None:
        return
    for name, param in model.named_parameters():
        if param.grad is not None and name in mask:
            param.grad *= mask[name]


@iterative_unlearn
def RL(data_loaders, model, criterion, optimizer, epoch, args, mask=None):
    """Random labelling on the forget set followed by a pass over the retain set (SalUn = RL + mask)."""
    forget_loader = data_loaders["forget"]
    retain_loader = data_loaders["retain"]

    losses = utils.AverageMeter()
    top1 = utils.AverageMeter()

    # switch to train mode
    model.train()

    start = time.time()
    loader_len = len(forget_loader) + len(retain_loader)

    for i, (image, target) in enumerate(forget_loader):
        if epoch < args.warmup:
            utils.warmup_lr(epoch, i + 1, optimizer, one_epoch_step=loader_len, args=args)

        image = image.cuda()
        target = torch.randint(0, args.num_classes, target.shape).cuda()

        # compute output
        output_clean = model(image)
        loss = criterion(output_clean, target)

        optimizer.zero_grad()
        loss.backward()
        apply_saliency_mask(model, mask)
        optimizer.step()

    for i, (image, target) in enumerate(retain_loader):
        if epoch < args.warmup:
            utils.warmup_lr(epoch, i + 1 + len(forget_loader), optimizer, one_epoch_step=loader_len, args=args)

        image = image.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        output_clean = model(image)
        loss = criterion(output_clean, target)

        optimizer.zero_grad()
        loss.backward()
        apply_saliency_mask(model, mask)
        optimizer.step()

        output = output_clean.float()
        loss = loss.float()
        # measure accuracy and record loss
        prec1 = utils.accuracy(output.data, target)[0]

        losses.update(loss.item(), image.size(0))
        top1.update(prec1.item(), image.size(0))

        if (i + 1) % args.print_freq == 0:
            end = time.time()
            print(
                "Epoch: [{0}][{1}/{2}]\t"
                "Loss {loss.val:.4f} ({loss.avg:.4f})\t"
                "Accuracy {top1.val:.3f} ({top1.avg:.3f})\t"
                "Time {3:.2f}".format(
                    epoch, i, len(retain_loader), end - start, loss=losses, top1=top1
                )
            )
            start = time.time()

    print("train_accuracy {top1.avg:.3f}".format(top1=top1))
    return top1.avg


@iterative_unlearn
def FT_l1(data_loaders, model, criterion, optimizer, epoch, args, mask=None, with_l1=True):
    """Fine-tuning on the retain set with a linearly decaying l1 penalty (l1-sparse unlearning)."""
    train_loader = data_loaders["retain"]
    losses = utils.AverageMeter()
    top1 = utils.AverageMeter()

    model.train()
    start = time.time()
    for i, (image, target) in enumerate(train_loader):
        if epoch < args.warmup:
            utils.warmup_lr(epoch, i + 1, optimizer, one_epoch_step=len(train_loader), args=args)
        current_alpha = args.alpha * (1 - epoch / args.unlearn_epochs)

        image, target = image.cuda(), target.cuda()

        output_clean = model(image)
        loss = criterion(output_clean, target)
        if with_l1:
            loss = loss + current_alpha * l1_regularization(model)

        optimizer.zero_grad()
        loss.backward()
        apply_saliency_mask(model, mask)
        optimizer.step()

        prec1 = utils.accuracy(output_clean.float().data, target)[0]
        losses.update(loss.float().item(), image.size(0))
        top1.update(prec1.item(), image.size(0))

        if (i + 1) % args.print_freq == 0:
            end = time.time()
            print("Epoch: [{0}][{1}/{2}]\tLoss {loss.val:.4f} ({loss.avg:.4f})\tAccuracy {top1.val:.3f} ({top1.avg:.3f})\tTime {3:.2f}".format(
                epoch, i, len(train_loader), end - start, loss=losses, top1=top1))
            start = time.time()

    print("train_accuracy {top1.avg:.3f}".format(top1=top1))
    return top1.avg
