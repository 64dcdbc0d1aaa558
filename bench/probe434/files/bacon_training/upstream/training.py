'''Implements a generic training loop.
'''

import torch
import torch.distributed as dist
import utils
from torch.utils.tensorboard import SummaryWriter
from tqdm.autonotebook import tqdm
import time
import numpy as np
import os
import shutil


def train(model, train_dataloader, epochs, lr, steps_til_summary, epochs_til_checkpoint, model_dir, loss_fn,
          summary_fn=None, val_dataloader=None, double_precision=False, clip_grad=False, use_lbfgs=False,
          loss_schedules=None, resume_checkpoint={}, objs_to_save={}, epochs_til_ckpt=None,
          steps_til_checkpoint=None, rank=0, world_size=1, gpu=0, max_steps=None):

    if epochs_til_ckpt is not None:
        epochs_til_checkpoint = epochs_til_ckpt

    optim = torch.optim.Adam(lr=lr, params=model.parameters())

    # load optimizer if supplied
    if 'optimizer_state_dict' in resume_checkpoint:
        optim.load_state_dict(resume_checkpoint['optimizer_state_dict'])

        for g in optim.param_groups:
            g['lr'] = lr

    if os.path.exists(os.path.join(model_dir, 'summaries')) and rank == 0:
        val = input("The model directory %s exists. Overwrite? (y/n)" % model_dir)
        if val == 'y':
            shutil.rmtree(os.path.join(model_dir, 'summaries'))
            shutil.rmtree(os.path.join(model_dir, 'checkpoints'))

    if rank == 0:
        os.makedirs(model_dir, exist_ok=True)

        summaries_dir = os.path.join(model_dir, 'summaries')
        utils.cond_mkdir(summaries_dir)

        checkpoints_dir = os.path.join(model_dir, 'checkpoints')
        utils.cond_mkdir(checkpoints_dir)

        writer = SummaryWriter(summaries_dir)
    else:
        writer = None
        checkpoints_dir = os.path.join(model_dir, 'checkpoints')

    # e.g. epochs=1k, len(train_dataloader)=25
    train_generator = iter(train_dataloader)

    if 'total_steps' in resume_checkpoint:
        total_steps = resume_checkpoint['total_steps']
    else:
        total_steps = 0

    if 'epoch' in resume_checkpoint:
        start_epoch = resume_checkpoint['epoch']
    else:
        start_epoch = 0

    if max_steps is None:
        max_steps = len(train_dataloader) * epochs

    with tqdm(total=max_steps, disable=(rank != 0)) as pbar:
        pbar.update(total_steps)
        train_losses = []
        epoch = start_epoch
        while total_steps < max_steps:

            if not epoch % epochs_til_checkpoint and epoch and rank == 0:
                save_dict = {'epoch': epoch,
                             'total_steps': total_steps,
                             'model_state_dict': model.state_dict(),
                             'optimizer_state_dict': optim.state_dict()}
                save_dict.update(objs_to_save)
                torch.save(save_dict, os.path.join(checkpoints_dir, 'model_epoch_%04d.pth' % epoch))

            for step in range(len(train_dataloader)):
                try:
                    model_input, gt = next(train_generator)
                except StopIteration:
                    train_generator = iter(train_dataloader)
                    model_input, gt = next(train_generator)

                start_time = time.time()

                model_input = utils.dict2cuda(model_input)
                gt = utils.dict2cuda(gt)

                if double_precision:
                    model_input = {key: value.double() for key, value in model_input.items()}
                    gt = {key: value.double() for key, value in gt.items()}

                model_output = model(model_input)
                losses = loss_fn(model_output, gt, total_steps)

                train_loss = 0.
                for loss_name, loss in losses.items():
                    single_loss = loss.mean()

                    if loss_schedules is not None and loss_name in loss_schedules:
                        if rank == 0:
                            writer.add_scalar(loss_name + "_weight", loss_schedules[loss_name](total_steps), total_steps)
                        single_loss *= loss_schedules[loss_name](total_steps)

                    if rank == 0:
                        writer.add_scalar(loss_name, single_loss, total_steps)
                    train_loss += single_loss

                train_losses.append(train_loss.item())
                if rank == 0:
                    writer.add_scalar("total_train_loss", train_loss, total_steps)

                if not total_steps % steps_til_summary and rank == 0:
                    torch.save({'epoch': epoch,
                                'total_steps': total_steps,
                                'model_state_dict': model.state_dict(),
                                'optimizer_state_dict': optim.state_dict()},
                               os.path.join(checkpoints_dir, 'model_current.pth'))
                    if summary_fn is not None:
                        summary_fn(model, model_input, gt, model_output, writer, total_steps, 'train_')

                optim.zero_grad()
                train_loss.backward()

                if world_size > 1:
                    average_gradients(model)

                if clip_grad:
                    if isinstance(clip_grad, bool):
                        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.)
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_grad)

                optim.step()

                del model_input, gt, losses, model_output

                if rank == 0:
                    pbar.update(1)

                if not total_steps % steps_til_summary and rank == 0:
                    tqdm.write("Epoch %d, Total loss %0.6f, iteration time %0.6f" % (epoch, train_loss, time.time() - start_time))

                    if val_dataloader is not None:
                        print("Running validation set...")
                        with torch.no_grad():
                            model.eval()
                            val_losses = []
                            for (model_input, gt) in val_dataloader:
                                model_input = utils.dict2cuda(model_input)
                                gt = utils.dict2cuda(gt)
                                model_output = model(model_input)
                                val_loss = loss_fn(model_output, gt, total_steps)
                                for name, value in val_loss.items():
                                    val_losses.append(value.mean().item())

                            writer.add_scalar("val_loss", np.mean(val_losses), total_steps)
                            model.train()

                if (steps_til_checkpoint is not None) and total_steps % steps_til_checkpoint == 0 and rank == 0:
                    torch.save({'epoch': epoch,
                                'total_steps': total_steps,
                                'model_state_dict': model.state_dict(),
                                'optimizer_state_dict': optim.state_dict()},
                               os.path.join(checkpoints_dir, f'model_step_{total_steps:06d}.pth'))

                total_steps += 1
                if total_steps >= max_steps:
                    break

            epoch += 1

        if rank == 0:
            torch.save({'epoch': epoch,
                        'total_steps': total_steps,
                        'model_state_dict': model.state_dict(),
                        'optimizer_state_dict': optim.state_dict()},
                       os.path.join(checkpoints_dir, 'model_final.pth'))
            np.savetxt(os.path.join(checkpoints_dir, 'train_losses_final.txt'),
                       np.array(train_losses))

        return model, optim


def average_gradients(model):
    """Averages gradients across workers"""
    size = float(dist.get_world_size())

    for param in model.parameters():
        if param.grad is None:
            continue
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


class LinearDecaySchedule():
    def __init__(self, start_val, final_val, num_steps):
        self.start_val = start_val
        self.final_val = final_val
        self.num_steps = num_steps

    def __call__(self, iter):
        return self.start_val + (self.final_val - self.start_val) * min(iter / self.num_steps, 1.)
