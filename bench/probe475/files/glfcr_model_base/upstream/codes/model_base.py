import os

import torch
import torch.nn as nn


class ModelBase():
    def save_network(self, network, optimizer, epoch, lr_scheduler, save_dir):
        checkpoint = {
            'network': network.module.state_dict(),
            'optimizer': optimizer.state_dict(),
            'epoch': epoch,
            'lr_scheduler': lr_scheduler.state_dict()
        }

        if not os.path.exists(save_dir):
            os.makedirs(save_dir)
        save_path = os.path.join(save_dir, '%s_net_CR.pth' % (str(epoch)))
        torch.save(checkpoint, save_path)

    def print_networks(self, net):
        print('---------- Networks initialized -------------')
        num_params = 0
        for param in net.parameters():
            num_params += param.numel()
        print(net)
        print('[Network] Total number of parameters : %.3f M' % (num_params / 1e6))
        print('-----------------------------------------------')

    def update_lr(self):
        self.lr_scheduler.step()
        for param_group in self.optimizer_G.param_groups:
            print('optimizer_G_lr', param_group['lr'])

    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            if net is not None:
                for param in net.parameters():
                    param.requires_grad = requires_grad
