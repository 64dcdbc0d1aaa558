import time

import torch
from torch.cuda.amp import autocast
from torch.utils.tensorboard import SummaryWriter

from .base import BaseTrainer
from ..lane_det_utils import lane_as_segmentation_inference
from ..ddp_utils import reduce_dict, is_main_process, get_world_size
from ..seg_utils import ConfusionMatrix


class LaneDetTrainer(BaseTrainer):
    """Trainer for both segmentation-based (SCNN, RESA, SAD) and point/curve-based (LSTR, BézierLaneNet) methods.

    Segmentation methods read (inputs, labels, existence); the others read (inputs, targets) where targets is a
    list of dicts collated by dict_collate_fn.
    """

    def __init__(self, cfg):
        super().__init__(cfg)
        self.writer = SummaryWriter('runs/' + self._cfg['exp_name']) if is_main_process() else None
        self.val_loader = self.get_validation_dataloader(cfg) if self._cfg.get('validation') else None
        self.log_file = self._cfg['exp_name'] + '.txt'
        self.dump_config(cfg)

    def _to_device(self, data):
        if self._cfg['seg']:
            inputs, labels, existence = data
            inputs = inputs.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)
            existence = existence.to(self.device, non_blocking=True)
            return inputs, labels, existence
        inputs, labels = data
        inputs = inputs.to(self.device, non_blocking=True)
        if self._cfg.get('collate_fn') is None:
            labels = labels.to(self.device)
        else:
            labels = [{k: v.to(self.device) for k, v in label.items()} for label in labels]  # Seems slow
        return inputs, labels, None

    def run(self):
        self.model.train()
        epoch = self.start_epoch
        running_loss = None  # Dict logging for every loss (too many losses in this task)
        loss_num_steps = int(len(self.dataloader) / 10) if len(self.dataloader) > 10 else 1
        best_validation = self.best_metric

        while epoch < self._cfg['num_epochs']:
            self.model.train()
            if self._cfg['distributed']:
                self.dataloader.sampler.set_epoch(epoch)
            time_now = time.time()
            for i, data in enumerate(self.dataloader, 0):
                inputs, labels, existence = self._to_device(data)
                self.optimizer.zero_grad()

                with autocast(self._cfg['mixed_precision']):
                    # To support intermediate losses for SAD
                    if self._cfg['seg']:
                        loss, log_dict = self.criterion(inputs, labels, existence, self.model,
                                                        self._cfg['input_size'])
                    else:
                        loss, log_dict = self.criterion(inputs, labels, self.model)

                if self.scaler is not None:
                    self.scaler.scale(loss).backward()
                    if self._cfg.get('clip_grad_norm'):
                        self.scaler.unscale_(self.optimizer)
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self._cfg['clip_grad_norm'])
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                else:
                    loss.backward()
                    if self._cfg.get('clip_grad_norm'):
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self._cfg['clip_grad_norm'])
                    self.optimizer.step()
                self.lr_scheduler.step()

                log_dict = reduce_dict(log_dict)
                if running_loss is None:  # Because different methods may have different values to log
                    running_loss = {k: 0.0 for k in log_dict.keys()}
                for k in log_dict.keys():
                    running_loss[k] += float(log_dict[k])
                current_step_num = int(epoch * len(self.dataloader) + i + 1)

                # Record losses
                if current_step_num % loss_num_steps == (loss_num_steps - 1):
                    for k in running_loss.keys():
                        print('[%d, %d] %s: %.4f' % (epoch + 1, i + 1, k, running_loss[k] / loss_num_steps))
                        # Logging only once
                        if is_main_process():
                            self.writer.add_scalar(k, running_loss[k] / loss_num_steps, current_step_num)
                        running_loss[k] = 0.0

                # Validate and record checkpoints
                if self.val_loader is not None and self._cfg['val_num_steps'] > 0 \
                        and current_step_num % self._cfg['val_num_steps'] == (self._cfg['val_num_steps'] - 1):
                    test_pixel_accuracy, test_mIoU = self.fast_evaluate()
                    if is_main_process():
                        self.writer.add_scalar('test pixel accuracy', test_pixel_accuracy, current_step_num)
                        self.writer.add_scalar('test mIoU', test_mIoU, current_step_num)
                    self.model.train()

                    # Record best model (straight to disk)
                    if test_mIoU > best_validation:
                        best_validation = test_mIoU
                        self.save(epoch, metric=best_validation, name='model.pt')

            epoch += 1
            print('Epoch time: %.2fs' % (time.time() - time_now))
            self.log_memory(epoch, self.log_file)

        # For no-evaluation mode
        if self.val_loader is None or self._cfg['val_num_steps'] <= 0:
            self.save(epoch, metric=None, name='model.pt')

        if is_main_process():
            self.writer.close()

    @torch.no_grad()
    def fast_evaluate(self, selector=None):
        """Pixel-level evaluation on the validation split (segmentation-style metrics only)."""
        self.model.eval()
        conf_mat = ConfusionMatrix(self._cfg['num_classes'])
        for image, target in self.val_loader:
            image, target = image.to(self.device), target.to(self.device)
            with autocast(self._cfg['mixed_precision']):
                output = self.model(image)['out']
                output = torch.nn.functional.interpolate(output,
                                                         size=self._cfg['input_size'],
                                                         mode='bilinear',
                                                         align_corners=True)
                if selector is not None:
                    output = selector(output)
            conf_mat.update(target.flatten(), output.argmax(1).flatten())

        acc_global, acc, iu = conf_mat.compute()
        print(('global correct: {:.2f}\n'
               'average row correct: {}\n'
               'IoU: {}\n'
               'mean IoU: {:.2f}').format(acc_global.item() * 100, ['{:.2f}'.format(i) for i in (acc * 100).tolist()],
                                          ['{:.2f}'.format(i) for i in (iu * 100).tolist()],
                                          iu.mean().item() * 100))

        return acc_global.item() * 100, iu.mean().item() * 100

    @torch.no_grad()
    def dump_lane_predictions(self, loader, out_dir):
        """Run segmentation-style lane inference over a loader and write CULane-format .lines.txt files."""
        self.model.eval()
        for images, filenames in loader:
            images = images.to(self.device)
            with autocast(self._cfg['mixed_precision']):
                batch_coordinates = lane_as_segmentation_inference(self.model, images,
                                                                   [self._cfg['input_size'],
                                                                    self._cfg['original_size']],
                                                                   self._cfg['gap'],
                                                                   self._cfg['ppl'],
                                                                   self._cfg['thresh'],
                                                                   self._cfg['dataset_name'],
                                                                   self._cfg['max_lane'])
            for j in range(len(batch_coordinates)):
                file_path = filenames[j].replace(self._cfg['dataset_root'], out_dir)
                with open(file_path[:-3] + 'lines.txt', 'w') as f:
                    for lane in batch_coordinates[j]:
                        for (x, y) in lane:
                            f.write('{:d} {:d} '.format(int(x), int(y)))
                        f.write('\n')
        print('Wrote predictions for {} process(es)'.format(get_world_size()))
