from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os
import json
import time

import numpy as np
import torch

from data.AgricultureVision.loader import *
from data.AgricultureVision.pre_process import *

# change DATASET ROOT to your dataset path
DATASET_ROOT = '/home/hkb/gits/data/Agriculture-Vision'

TRAIN_ROOT = os.path.join(DATASET_ROOT, 'train')
VAL_ROOT = os.path.join(DATASET_ROOT, 'val')
TEST_ROOT = os.path.join(DATASET_ROOT, 'test/images')

land_classes = ["background", "cloud_shadow", "double_plant", "planter_skip",
                "standing_water", "waterway", "weed_cluster"]

Data_Folder = {
    'Agriculture': {
        'ROOT': DATASET_ROOT,
        'RGB': 'images/rgb/{}.jpg',
        'NIR': 'images/nir/{}.jpg',
        'SHAPE': (512, 512),
        'GT': 'gt/{}.png',
    },
}

IMG = 'images'  # RGB or IRRG, rgb/nir
GT = 'gt'
IDS = 'IDs'


def get_training_list(root_folder=TRAIN_ROOT, count_label=True):
    dict_list = {}
    basename = [img_basename(f) for f in os.listdir(os.path.join(root_folder, 'images/nir'))]
    if count_label:
        for key in land_classes[1:]:
            no_zero_files = []
            for fname in basename:
                gt = np.array(cv2.imread(os.path.join(root_folder, 'labels', key, fname + '.png'), -1))
                if np.count_nonzero(gt):
                    no_zero_files.append(fname)
                else:
                    continue
            dict_list[key] = no_zero_files
    return dict_list, basename


def split_train_val_test_sets(data_folder=Data_Folder, name='Agriculture', bands=['NIR', 'RGB'],
                              KF=3, k=1, seeds=69278):

    train_id, t_list = get_training_list(root_folder=TRAIN_ROOT, count_label=False)
    val_id, v_list = get_training_list(root_folder=VAL_ROOT, count_label=False)

    if KF >= 2:
        kf = KFold(n_splits=KF, shuffle=True, random_state=seeds)
        val_ids = np.array(v_list)
        idx = list(kf.split(np.array(val_ids)))
        if k >= KF:  # k should not be out of KF range, otherwise set k = 0
            k = 0
        t2_list, v_list = list(val_ids[idx[k][0]]), list(val_ids[idx[k][1]])
    else:
        t2_list = []

    img_folders = [os.path.join(data_folder[name]['ROOT'], 'train', data_folder[name][band]) for band in bands]
    gt_folder = os.path.join(data_folder[name]['ROOT'], 'train', data_folder[name]['GT'])

    val_folders = [os.path.join(data_folder[name]['ROOT'], 'val', data_folder[name][band]) for band in bands]
    val_gt_folder = os.path.join(data_folder[name]['ROOT'], 'val', data_folder[name]['GT'])

    train_dict = {
        IDS: train_id,
        IMG: [[img_folder.format(id) for img_folder in img_folders] for id in t_list] +
             [[val_folder.format(id) for val_folder in val_folders] for id in t2_list],
        GT: [gt_folder.format(id) for id in t_list] + [val_gt_folder.format(id) for id in t2_list],
        'all_files': t_list + t2_list
    }

    val_dict = {
        IDS: val_id,
        IMG: [[val_folder.format(id) for val_folder in val_folders] for id in v_list],
        GT: [val_gt_folder.format(id) for id in v_list],
        'all_files': v_list
    }

    test_dict = {
        IDS: val_id,
        IMG: [[val_folder.format(id) for val_folder in val_folders] for id in v_list],
        GT: [val_gt_folder.format(id) for id in v_list],
    }

    print('train set -------', len(train_dict[GT]))
    print('val set ---------', len(val_dict[GT]))
    return train_dict, val_dict, test_dict


class agriculture_configs(object):
    model = 'none'
    dataset = 'Agriculture'
    bands = ['RGB']
    loss = ''
    pre_norm = False
    nb_classes = len(land_classes)
    weights = []

    k_folder = 0
    kf = 0
    input_size = [512, 512]
    scale_rate = 1.0 / 1.0
    val_size = [512, 512]
    train_samples = 12901
    val_samples = 1200
    train_batch = 7
    val_batch = 7

    # flag of mixed precision or not
    fp16 = False
    # to do
    lr = 1.5e-4 / np.sqrt(3.0)
    lr_decay = 0.9
    max_iter = 1e8
    weight_decay = 2e-5
    momentum = 0.9

    ckpt_path = '../ckpt'
    snapshot = ''

    # toggle on or off for visualization of training/val imgs
    print_freq = 100
    save_pred = False
    save_rate = 0.1
    best_record = {}
    seeds = 69278
    gpu = '0'

    def __init__(self, net_name=model, data=dataset, bands_list=bands, kf=1, k_folder=5, note=''):
        self.model = net_name
        self.dataset = data
        self.bands = bands_list
        self.k_folder = k_folder
        self.k = kf
        self.input_size = [512, 512]
        self.save_path = os.path.join(self.ckpt_path, self.dataset,
                                      self.model + '-' + '_'.join(self.bands) + '-kf' + str(kf) + '-' + note)
        self.best_record = {'epoch': 0, 'val_loss': 1e10, 'acc': 0, 'acc_cls': 0,
                            'mean_iu': 0, 'fwavacc': 0, 'f1': 0}
        if not os.path.exists(self.save_path):
            os.makedirs(self.save_path)

    def get_file_list(self):
        return split_train_val_test_sets(name=self.dataset, bands=self.bands, KF=self.k_folder, k=self.k,
                                         seeds=self.seeds)

    def get_dataset(self):
        train_dict, val_dict, test_dict = self.get_file_list()
        train_set = AgricultureDataset(mode='train', file_lists=train_dict, tsize=self.input_size,
                                       scale_rate=self.scale_rate, pre_norm=self.pre_norm)
        val_set = AgricultureDataset(mode='val', file_lists=val_dict, tsize=self.val_size,
                                     scale_rate=1., pre_norm=self.pre_norm)
        return train_set, val_set

    def resume_train(self, net):
        if len(self.snapshot) == 0:
            curr_epoch = 1
            self.best_record = {'epoch': 0, 'val_loss': 1e10, 'acc': 0, 'acc_cls': 0,
                                'mean_iu': 0, 'fwavacc': 0, 'f1': 0}
        else:
            print('training resumes from ' + self.snapshot)
            net.load_state_dict(torch.load(os.path.join(self.save_path, self.snapshot)))
            split_snapshot = self.snapshot.split('_')
            curr_epoch = int(split_snapshot[1]) + 1
            self.best_record = {'epoch': int(split_snapshot[1]), 'val_loss': float(split_snapshot[3]),
                                'acc': float(split_snapshot[5]), 'acc_cls': float(split_snapshot[7]),
                                'mean_iu': float(split_snapshot[9]), 'fwavacc': float(split_snapshot[11]),
                                'f1': float(split_snapshot[13])}
        return net, curr_epoch

    def print_best_record(self):
        print(
            '[best_ %d]: [val loss %.5f], [acc %.5f], [acc_cls %.5f], [mean_iu %.5f], [fwavacc %.5f], [f1 %.5f]' % (
                self.best_record['epoch'],
                self.best_record['val_loss'],
                self.best_record['acc'], self.best_record['acc_cls'],
                self.best_record['mean_iu'], self.best_record['fwavacc'], self.best_record['f1']
            ))

    def update_best_record(self, epoch, val_loss, acc, acc_cls, mean_iu, fwavacc, f1):
        print('----------------------------------------------------------------------------------------')
        print('[epoch %d]: [val loss %.5f], [acc %.5f], [acc_cls %.5f], [mean_iu %.5f], [fwavacc %.5f], [f1 %.5f]' % (
            epoch, val_loss, acc, acc_cls, mean_iu, fwavacc, f1))
        self.print_best_record()

        print('----------------------------------------------------------------------------------------')
        if mean_iu > self.best_record['mean_iu'] or f1 > self.best_record['f1']:
            self.best_record['epoch'] = epoch
            self.best_record['val_loss'] = val_loss
            self.best_record['acc'] = acc
            self.best_record['acc_cls'] = acc_cls
            self.best_record['mean_iu'] = mean_iu
            self.best_record['fwavacc'] = fwavacc
            self.best_record['f1'] = f1
            return True
        else:
            return False

    def display(self):
        """Display Configuration values."""
        print("\nConfigurations:")
        for a in dir(self):
            if not a.startswith("__") and not callable(getattr(self, a)):
                print("{:30} {}".format(a, getattr(self, a)))
        print("\n")

    def write2txt(self):
        file = open(os.path.join(self.save_path,
                                 str(time.strftime('%m%d-%H-%M', time.localtime())) + '.txt'), 'w')
        for a in dir(self):
            if not a.startswith("__") and not callable(getattr(self, a)):
                line = "{:30} {}".format(a, getattr(self, a))
                file.write(line + '\n')
        file.close()
