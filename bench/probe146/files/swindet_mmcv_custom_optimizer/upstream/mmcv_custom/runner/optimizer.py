# Copyright (c) Open-MMLab. All rights reserved.
import os.path as osp
import platform
import shutil

import torch
from mmcv.runner import OPTIMIZERS, OptimizerHook
from mmcv.runner.hooks import HOOKS
from mmcv.runner.checkpoint import save_checkpoint

try:
    import apex
except ImportError:
    print('apex is not installed')

try:
    # apex's multi-tensor optimizers are much faster than torch.optim for the
    # large Swin-B / Swin-L backbones; register them so configs can use
    # ``optimizer = dict(type='FusedAdam', ...)``.
    from apex.optimizers import FusedAdam, FusedLAMB
    OPTIMIZERS.register_module(module=FusedAdam, force=True)
    OPTIMIZERS.register_module(module=FusedLAMB, force=True)
except ImportError:
    FusedAdam = FusedLAMB = None


@HOOKS.register_module()
class DistOptimizerHook(OptimizerHook):
    """Optimizer hook for distributed training with apex mixed precision.

    Gradient accumulation is supported through ``update_interval``.
    """

    def __init__(self,
                 update_interval=1,
                 grad_clip=None,
                 coalesce=True,
                 bucket_size_mb=-1,
                 use_fp16=False):
        self.grad_clip = grad_clip
        self.coalesce = coalesce
        self.bucket_size_mb = bucket_size_mb
        self.update_interval = update_interval
        self.use_fp16 = use_fp16

    def before_run(self, runner):
        runner.optimizer.zero_grad()

    def after_train_iter(self, runner):
        runner.outputs['loss'] /= self.update_interval
        if self.use_fp16:
            with apex.amp.scale_loss(runner.outputs['loss'],
                                     runner.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            runner.outputs['loss'].backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                self.clip_grads(runner.model.parameters())
            runner.optimizer.step()
            runner.optimizer.zero_grad()


def save_checkpoint_amp(runner,
                        out_dir,
                        filename_tmpl='epoch_{}.pth',
                        save_optimizer=True,
                        meta=None,
                        create_symlink=True):
    """Save the checkpoint together with the apex amp state.

    Used by ``EpochBasedRunnerAmp.save_checkpoint``; the amp loss-scaler
    state must be restored with the weights or fp16 training diverges after
    resume.
    """
    if meta is None:
        meta = dict(epoch=runner.epoch + 1, iter=runner.iter)
    elif isinstance(meta, dict):
        meta.update(epoch=runner.epoch + 1, iter=runner.iter)
    else:
        raise TypeError(
            f'meta should be a dict or None, but got {type(meta)}')
    if runner.meta is not None:
        meta.update(runner.meta)

    filename = filename_tmpl.format(runner.epoch + 1)
    filepath = osp.join(out_dir, filename)
    optimizer = runner.optimizer if save_optimizer else None
    save_checkpoint(runner.model, filepath, optimizer=optimizer, meta=meta)
    # save amp state dict next to the weights
    amp_path = filepath.replace('.pth', '_amp.pth')
    torch.save(apex.amp.state_dict(), amp_path)
    # in some environments, `os.symlink` is not supported, you may need to
    # set `create_symlink` to False
    if create_symlink:
        dst_file = osp.join(out_dir, 'latest.pth')
        if platform.system() != 'Windows':
            if osp.lexists(dst_file):
                import os
                os.remove(dst_file)
            import os
            os.symlink(filename, dst_file)
        else:
            shutil.copy(filepath, dst_file)


def resume_amp(runner, checkpoint_path, map_location='cuda'):
    """Load the apex amp state saved by :func:`save_checkpoint_amp`."""
    amp_path = checkpoint_path.replace('.pth', '_amp.pth')
    if not osp.exists(amp_path):
        runner.logger.warning(f'no amp state found at {amp_path}')
        return
    if map_location == 'default':
        device_id = torch.cuda.current_device()
        state = torch.load(
            amp_path,
            map_location=lambda storage, loc: storage.cuda(device_id))
    else:
        state = torch.load(amp_path, map_location=map_location)
    apex.amp.load_state_dict(state)
    runner.logger.info('resumed apex amp state from %s', amp_path)
