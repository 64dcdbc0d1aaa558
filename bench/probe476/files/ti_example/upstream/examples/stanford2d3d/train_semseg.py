import torch
import torch.nn as nn
import torch.optim as optim

import os
import os.path as osp

from mapped_convolution.util import *
from mapped_convolution.data import Stanford2D3DSTangentDataset
from mapped_convolution.models import ResNet101TangentSegmenter
from mapped_convolution.util.network_manager import NetworkManager
from mapped_convolution.util.metrics import IoUMeter
from mapped_convolution.nn import TangentCrossEntropyLoss

# --------------
# PARAMETERS
# --------------
experiment_name = 'tangent_semseg_rgbd_b1_s10'
input_resolution = 10
base_order = 1
sample_order = 10
data_format = 'data'
fold = 1
train_file_list = 'examples/stanford2d3d/splits/train_fold{}.txt'.format(fold)
val_file_list = 'examples/stanford2d3d/splits/val_fold{}.txt'.format(fold)
root_path = '/data/stanford2d3d'
checkpoint_dir = osp.join('experiments', 'stanford2d3d', experiment_name)
load_weights = None  # 'pretrained/semseg_rgbd_b1_s10_fold1.pth'
batch_size_train = 4
batch_size_val = 4
num_epochs = 50
validation_freq = 1
visualization_freq = 200
validation_sample_freq = -1
device_ids = [0]
num_workers = 8
use_rgb = True
use_depth = True
num_classes = 14

os.makedirs(checkpoint_dir, exist_ok=True)

# Devices / performance knobs
torch.backends.cudnn.benchmark = True
device = torch.device('cuda', device_ids[0])

# -------------------
# Semantic segmentation trainer
# -------------------


class SemSegManager(NetworkManager):

    def __init__(self, *args, **kwargs):
        super(SemSegManager, self).__init__(*args, **kwargs)
        self.iou_meter = IoUMeter(num_classes, ignore_index=0)

    def parse_data(self, data):
        rgb, depth, labels = data
        inputs = []
        if use_rgb:
            inputs.append(rgb)
        if use_depth:
            inputs.append(depth)
        x = torch.cat(inputs, 1).cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        return [x], labels

    def forward_pass(self, inputs):
        return self.network(inputs[0])

    def compute_loss(self, output, gt):
        return self.criterion(output, gt)

    def compute_eval_metrics(self, output, gt):
        pred = output.argmax(1)
        self.iou_meter.update(pred.cpu(), gt.cpu())

    def reset_eval_metrics(self):
        self.iou_meter.reset()

    def compute_labeled_iou(self):
        return self.iou_meter.mean_iou()


# -------------------
# Data
# -------------------
train_dataset = Stanford2D3DSTangentDataset(root_path=root_path,
                                            path_to_img_list=train_file_list,
                                            sample_order=sample_order,
                                            base_order=base_order,
                                            use_rgb=use_rgb,
                                            use_depth=use_depth,
                                            data_format=data_format)
val_dataset = Stanford2D3DSTangentDataset(root_path=root_path,
                                          path_to_img_list=val_file_list,
                                          sample_order=sample_order,
                                          base_order=base_order,
                                          use_rgb=use_rgb,
                                          use_depth=use_depth,
                                          data_format=data_format)
train_dataloader = torch.utils.data.DataLoader(train_dataset,
                                               batch_size=batch_size_train,
                                               shuffle=True,
                                               pin_memory=True,
                                               drop_last=True,
                                               num_workers=num_workers)
val_dataloader = torch.utils.data.DataLoader(val_dataset,
                                             batch_size=batch_size_val,
                                             shuffle=False,
                                             pin_memory=True,
                                             drop_last=False,
                                             num_workers=num_workers)

# -------------------
# Network
# -------------------
in_channels = 3 * int(use_rgb) + 1 * int(use_depth)
network = ResNet101TangentSegmenter(num_classes, in_channels=in_channels, base_order=base_order,
                                    sample_order=sample_order)

# Class weights computed over the training fold (log-inverse frequency)
class_weights = torch.tensor(train_dataset.class_weights(), dtype=torch.float32).cuda()
criterion = TangentCrossEntropyLoss(weight=class_weights, ignore_index=0)

optimizer = optim.Adam(network.parameters(), lr=1e-4)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.9)

# -------------------
# Train
# -------------------
trainer = SemSegManager(network=network,
                        name=experiment_name,
                        train_dataloader=train_dataloader,
                        val_dataloader=val_dataloader,
                        criterion=criterion,
                        optimizer=optimizer,
                        scheduler=scheduler,
                        num_epochs=num_epochs,
                        validation_freq=validation_freq,
                        visualization_freq=visualization_freq,
                        evaluation_sample_freq=validation_sample_freq,
                        device=device,
                        checkpoint_root=checkpoint_dir)

trainer.train(load_weights, weights_only=True)
