#
# Authors: Simon Vandenhende
# Licensed under the CC BY-NC 4.0 license (https://creativecommons.org/licenses/by-nc/4.0/)

from evaluation.evaluate_utils import PerformanceMeter
from utils.utils import AverageMeter, ProgressMeter, get_output


def get_loss_meters(p):
    """ Return dictionary with loss meters to monitor training """
    all_tasks = p.ALL_TASKS.NAMES
    tasks = p.TASKS.NAMES

    if p['model'] == 'mti_net':  # Extra losses at multiple scales
        losses = {}
        for scale in range(4):
            for task in all_tasks:
                losses['scale_%d_%s' % (scale, task)] = AverageMeter('Loss scale-%d %s ' % (scale + 1, task), ':.4e')
        for task in tasks:
            losses[task] = AverageMeter('Loss %s' % (task), ':.4e')

    elif p['model'] == 'pad_net':  # Extra losses because of deepsupervision
        losses = {}
        for task in all_tasks:
            losses['deepsup_%s' % (task)] = AverageMeter('Loss deepsup %s' % (task), ':.4e')
        for task in tasks:
            losses[task] = AverageMeter('Loss %s' % (task), ':.4e')

    else:  # Only losses on the main task.
        losses = {task: AverageMeter('Loss %s' % (task), ':.4e') for task in tasks}

    losses['total'] = AverageMeter('Loss Total', ':.4e')
    return losses


def train_vanilla(p, train_loader, model, criterion, optimizer, epoch):
    """ Vanilla training with fixed loss weights """
    losses = get_loss_meters(p)
    performance_meter = PerformanceMeter(p)
    progress = ProgressMeter(len(train_loader),
                             [v for v in losses.values()], prefix="Epoch: [{}]".format(epoch))

    model.train()

    for i, batch in enumerate(train_loader):
        # Forward pass
        images = batch['image'].cuda(non_blocking=True)
        targets = {task: batch[task].cuda(non_blocking=True) for task in p.ALL_TASKS.NAMES}
        output = model(images)

        # Measure loss and performance
        loss_dict = criterion(output, targets)
        for k, v in loss_dict.items():
            losses[k].update(v.item())
        performance_meter.update({t: get_output(output[t], t) for t in p.TASKS.NAMES},
                                 {t: targets[t] for t in p.TASKS.NAMES})

        # Backward
        optimizer.zero_grad()
        loss_dict['total'].backward()
        optimizer.step()

        if i % 25 == 0:
            progress.display(i)

    eval_results = performance_meter.get_score(verbose=True)

    return eval_results


def train_mixed_loss_weights(p, train_loader, model, criterion, optimizer, epoch, task_weights):
    """ Training loop used for the uncertainty / dynamic-weight-average ablations.
        The loss weights are updated outside of this function once per epoch. """
    losses = get_loss_meters(p)
    progress = ProgressMeter(len(train_loader),
                             [v for v in losses.values()], prefix="Epoch: [{}]".format(epoch))

    model.train()
    running = {t: 0.0 for t in p.TASKS.NAMES}

    for i, batch in enumerate(train_loader):
        inputs = batch['image'].cuda(non_blocking=True)
        targets = {task: batch[task].to(inputs.device, non_blocking=True) for task in p.ALL_TASKS.NAMES}
        output = model(inputs)

        loss_dict = criterion(output, targets)
        total = 0.0
        for t in p.TASKS.NAMES:
            total = total + task_weights[t] * loss_dict[t]
            running[t] += loss_dict[t].item()
        loss_dict['total'] = total

        for k, v in loss_dict.items():
            losses[k].update(v.item())

        optimizer.zero_grad()
        total.backward()
        optimizer.step()

        if i % 25 == 0:
            progress.display(i)

    return {t: running[t] / max(len(train_loader), 1) for t in p.TASKS.NAMES}
