import sys
sys.path.append('../../')

from utils.utils import save_checkpoint, AverageMeter, Logger, accuracy, mkdirs, time_to_str
from utils.evaluate import eval
from utils.dataset import get_dataset_one_to_one_ssl_clip, get_dataset_ssl_clip
from fas import flip_mcl
import random
import numpy as np
from config import configC, configM, configI, configO, config_cefa, config_surf, config_wmca
from config import config_CI, config_CO, config_CM, config_MC, config_MI, config_MO, config_IC, config_IO, config_IM, config_OC, config_OI, config_OM
from datetime import datetime
import time
from timeit import default_timer as timer

import os
import csv
import torch
import torch.nn as nn
import torch.optim as optim
import argparse

torch.backends.cudnn.enabled = True
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
device = 'cuda'


def to_device(batch):
    return [t.to(device, non_blocking=True) for t in batch]


def train(config):
    mkdirs(config.checkpoint_path, config.best_model_path, config.logs)

    # load data
    if config.tgt_data in ['cefa', 'surf', 'wmca']:
        loaders = get_dataset_one_to_one_ssl_clip(config.src1_data, config.src1_train_num_frames,
                                                  config.tgt_data, config.tgt_test_num_frames, config.batch_size)
    else:
        loaders = get_dataset_ssl_clip(config.src1_data, config.src1_train_num_frames,
                                       config.src2_data, config.src2_train_num_frames,
                                       config.src3_data, config.src3_train_num_frames,
                                       config.src4_data, config.src4_train_num_frames,
                                       config.src5_data, config.src5_train_num_frames,
                                       config.tgt_data, config.tgt_test_num_frames, config.batch_size)
    train_real_loader, train_fake_loader, tgt_valid_dataloader = loaders

    best_model_ACC = 0.0
    best_model_HTER = 1.0
    best_model_ACER = 1.0
    best_model_AUC = 0.0
    best_TPR_FPR = 0.0
    # 0:loss, 1:top-1, 2:EER, 3:HTER, 4:ACER, 5:AUC, 6:threshold
    valid_args = [np.inf, 0, 0, 0, 0, 0, 0, 0]

    loss_classifier = AverageMeter()
    loss_simclr = AverageMeter()
    loss_l2_euclid = AverageMeter()
    loss_total = AverageMeter()
    classifer_top1 = AverageMeter()

    net1 = flip_mcl(config, device, in_dim=512, ssl_mlp_dim=4096, ssl_emb_dim=256).to(device)

    log = Logger()
    log.open(config.logs + config.tgt_data + '_log.txt', mode='a')
    log.write("\n----------------------------------------------- [START %s] %s\n\n" % (
        datetime.now().strftime('%Y-%m-%d %H:%M:%S'), '-' * 51))
    log.write('Running on %s, amp=%s\n' % (torch.cuda.get_device_name(0), config.amp))
    log.write('** start training target model! **\n')
    log.write(
        '--------|------------- VALID -------------|--- classifier ---|------ Current Best ------|--------------|\n')
    log.write(
        '  iter  |   loss   top-1   HTER    AUC    |   loss   top-1   |   top-1   HTER    AUC    |    time      |\n')
    log.write(
        '-------------------------------------------------------------------------------------------------------|\n')
    start = timer()

    optimizer_dict = [
        {"params": filter(lambda p: p.requires_grad, net1.parameters()), "lr": config.init_lr},
    ]
    optimizer1 = optim.Adam(optimizer_dict, lr=config.init_lr, weight_decay=config.weight_decay)
    scheduler1 = optim.lr_scheduler.CosineAnnealingLR(optimizer1, T_max=config.max_iter, eta_min=1e-8)
    scaler = torch.cuda.amp.GradScaler(enabled=config.amp)

    iter_per_epoch = config.iter_per_epoch
    real_iter = iter(train_real_loader)
    fake_iter = iter(train_fake_loader)
    real_iter_per_epoch = len(real_iter)
    fake_iter_per_epoch = len(fake_iter)

    epoch = 1
    for iter_num in range(config.max_iter + 1):
        if iter_num % real_iter_per_epoch == 0:
            real_iter = iter(train_real_loader)
        if iter_num % fake_iter_per_epoch == 0:
            fake_iter = iter(train_fake_loader)
        if iter_num != 0 and iter_num % iter_per_epoch == 0:
            epoch = epoch + 1

        net1.train(True)
        optimizer1.zero_grad()

        ######### data prepare #########
        img_real, view1_real, view2_real, label_real = to_device(next(real_iter))
        img_fake, view1_fake, view2_fake, label_fake = to_device(next(fake_iter))

        input_data = torch.cat([img_real, img_fake], dim=0)
        input_view_1 = torch.cat([view1_real, view1_fake], dim=0)
        input_view_2 = torch.cat([view2_real, view2_fake], dim=0)
        source_label = torch.cat([label_real, label_fake], dim=0)

        ######### forward #########
        with torch.cuda.amp.autocast(enabled=config.amp):
            classifier_label_out, logits_ssl, labels_ssl, dot_product_views = net1(
                input_data, input_view_1, input_view_2, source_label, True)

            cls_loss = nn.functional.cross_entropy(classifier_label_out.narrow(0, 0, input_data.size(0)), source_label)
            sim_loss = nn.functional.cross_entropy(logits_ssl, labels_ssl)
            l2_loss = dot_product_views.mean()
            total_loss = cls_loss + config.alpha_ssl * sim_loss + config.alpha_l2 * l2_loss

        ######### backward #########
        scaler.scale(total_loss).backward()
        scaler.step(optimizer1)
        scaler.update()
        scheduler1.step()

        loss_classifier.update(cls_loss.item())
        loss_simclr.update(sim_loss.item())
        loss_l2_euclid.update(l2_loss.item())
        loss_total.update(total_loss.item())
        acc = accuracy(classifier_label_out.narrow(0, 0, input_data.size(0)).float(), source_label, topk=(1,))
        classifer_top1.update(acc[0])

        if (iter_num != 0 and (iter_num + 1) % iter_per_epoch == 0):
            torch.cuda.synchronize()
            t_eval = time.time()
            # 0:loss, 1:top-1, 2:EER, 3:HTER, 4:AUC, 5:threshold, 6:ACC_threshold, 7:TPR@FPR=1%
            valid_args = eval(tgt_valid_dataloader, net1, True)
            torch.cuda.synchronize()  # make sure all eval kernels finished before reading the clock
            eval_time = time.time() - t_eval
            # judge model according to HTER
            is_best = valid_args[3] <= best_model_HTER
            best_model_HTER = min(valid_args[3], best_model_HTER)
            threshold = valid_args[5]
            if (valid_args[3] <= best_model_HTER):
                best_model_ACC = valid_args[6]
                best_model_AUC = valid_args[4]
                best_TPR_FPR = valid_args[-1]

            save_list = [epoch, valid_args, best_model_HTER, best_model_ACC, best_model_ACER, threshold]
            save_checkpoint(save_list, is_best, net1, config.gpus, config.checkpoint_path, config.best_model_path)

            print('\r', end='', flush=True)
            log.write(
                '  %4.1f  |  %5.3f  %6.3f  %6.3f  %6.3f  |  %6.3f  %6.3f  |  %6.3f  %6.3f  %6.3f  | %s | eval %.1fs | mem %.2fG'
                % (
                    (iter_num + 1) / iter_per_epoch,
                    valid_args[0], valid_args[1], valid_args[3] * 100, valid_args[4] * 100,
                    loss_total.avg, classifer_top1.avg,
                    float(best_model_ACC),
                    float(best_model_HTER * 100), float(best_model_AUC * 100),
                    time_to_str(timer() - start, 'min'),
                    eval_time,
                    torch.cuda.max_memory_allocated() / 1024 ** 3))
            log.write('\n')
            torch.cuda.empty_cache()
            time.sleep(0.01)

    return best_model_HTER * 100.0, best_model_AUC * 100.0, best_TPR_FPR * 100.0


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, help='I for idiap, O for oulu, C for casia, M for msu, cefa, surf, wmca')
    parser.add_argument('--op_dir', type=str, default=None, help='directory to save checkpoints')
    parser.add_argument('--report_logger_path', type=str, default=None, help='csv file to append the results to')
    parser.add_argument('--amp', action='store_true', help='train with mixed precision')
    args = parser.parse_args()

    config_map = {
        'I': configI, 'O': configO, 'C': configC, 'M': configM,
        'cefa': config_cefa, 'surf': config_surf, 'wmca': config_wmca,
        'CI': config_CI, 'CO': config_CO, 'CM': config_CM, 'MC': config_MC, 'MI': config_MI, 'MO': config_MO,
        'IC': config_IC, 'IO': config_IO, 'IM': config_IM, 'OC': config_OC, 'OI': config_OI, 'OM': config_OM,
    }
    config = config_map[args.config]
    config.amp = args.amp

    if args.op_dir is not None:
        config.checkpoint_path = args.op_dir
        config.best_model_path = args.op_dir
    config.logs = os.path.join(config.checkpoint_path, 'logs/')

    with open(args.report_logger_path, 'w') as f:
        writer = csv.writer(f)
        writer.writerow(['Run', 'HTER', 'AUC', 'TPR@FPR=1%'])

    hter_avg, auc_avg, tpr_fpr_avg = [], [], []
    for i in range(5):
        # To reproduce results
        torch.manual_seed(i)
        np.random.seed(i)
        random.seed(i)
        torch.cuda.manual_seed_all(i)

        config.checkpoint_path = os.path.join(args.op_dir, 'run_%d/' % i)
        config.best_model_path = config.checkpoint_path
        config.logs = os.path.join(config.checkpoint_path, 'logs/')
        hter, auc, tpr_fpr = train(config)

        hter_avg.append(hter)
        auc_avg.append(auc)
        tpr_fpr_avg.append(tpr_fpr)

        with open(args.report_logger_path, 'a') as f:
            writer = csv.writer(f)
            writer.writerow([i, hter, auc, tpr_fpr])

    # Results of all the runs
    with open(args.report_logger_path, 'a') as f:
        writer = csv.writer(f)
        writer.writerow([])
        writer.writerow(['Mean', np.mean(hter_avg), np.mean(auc_avg), np.mean(tpr_fpr_avg)])
        writer.writerow(['Std dev', np.std(hter_avg), np.std(auc_avg), np.std(tpr_fpr_avg)])
