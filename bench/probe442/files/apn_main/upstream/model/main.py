from __future__ import print_function
import os
import time
import torch
import torch.optim as optim
import torch.backends.cudnn as cudnn
import torch.nn as nn
import numpy as np
import json
from opt import get_opt
from util import DATA_LOADER, map_label
from main_utils import test_zsl, calibrated_stacking, test_gzsl, set_randomseed, get_loader, \
    get_middle_graph, Loss_fn, Result, prepare_attri_label, get_group, log_timing
from model_proto import resnet_proto_IoU

cudnn.benchmark = True

opt = get_opt()
# set random seed
set_randomseed(opt)


def main():
    # load data
    data = DATA_LOADER(opt)
    opt.test_seen_label = data.test_seen_label  # weird but worked
    opt.train_mode = getattr(opt, 'train_mode', 'random')

    # define test_classes
    if opt.image_type == 'test_unseen_small_loc':
        test_loc = data.test_unseen_small_loc
        test_classes = data.unseenclasses
    elif opt.image_type == 'test_unseen_loc':
        test_loc = data.test_unseen_loc
        test_classes = data.unseenclasses
    elif opt.image_type == 'test_seen_loc':
        test_loc = data.test_seen_loc
        test_classes = data.seenclasses
    else:
        try:
            sys.exit(0)
        except:
            print("choose the image_type in ImageFileList")

    # prepare the attribute labels
    class_attribute = data.attribute
    attribute_zsl = prepare_attri_label(class_attribute, data.unseenclasses).cuda()
    attribute_seen = prepare_attri_label(class_attribute, data.seenclasses).cuda()
    attribute_gzsl = torch.transpose(class_attribute, 1, 0).cuda()

    # Dataloader for train, test, visual
    trainloader, testloader_unseen, testloader_seen, visloader = get_loader(opt, data)

    # define attribute groups
    group_dic, sub_group_dic = get_group(opt)

    # initialize model
    print('Create Model...')
    model = resnet_proto_IoU(opt)
    criterion = nn.CrossEntropyLoss()
    criterion_regre = nn.MSELoss()

    # optimzation weight, only ['final'] is model.
    reg_weight = {'final': {'xe': opt.xe, 'attri': opt.attri, 'regular': opt.regular},
                  'layer4': {'l_xe': opt.l_xe, 'attri': opt.l_attri, 'regular': opt.l_regular,
                             'cpt': opt.cpt},  # l denotes layer
                  }
    reg_lambdas = {}
    for name in ['final'] + model.extract:
        reg_lambdas[name] = reg_weight[name]
    # print('reg_lambdas:', reg_lambdas)

    if torch.cuda.is_available():
        model.cuda()
        attribute_zsl = attribute_zsl.cuda()
        attribute_seen = attribute_seen.cuda()
        attribute_gzsl = attribute_gzsl.cuda()

    layer_name = model.extract[0]  # only use one layer currently
    # compact loss configuration, define middle_graph
    middle_graph = get_middle_graph(reg_weight[layer_name]['cpt'], model)

    # train and test
    result_zsl = Result()
    result_gzsl = Result()

    if opt.only_evaluate:
        print('Evaluate ...')
        model.load_state_dict(torch.load(opt.resume))
        model.eval()
        # test zsl
        if not opt.gzsl:
            acc_ZSL = test_zsl(opt, model, testloader_unseen, attribute_zsl, data.unseenclasses)
            print('ZSL test accuracy is {:.1f}%'.format(acc_ZSL))
        else:
            # test gzsl
            acc_GZSL_unseen = test_gzsl(opt, model, testloader_unseen, attribute_gzsl, data.unseenclasses)
            acc_GZSL_seen = test_gzsl(opt, model, testloader_seen, attribute_gzsl, data.seenclasses)

            if (acc_GZSL_unseen + acc_GZSL_seen) == 0:
                acc_GZSL_H = 0
            else:
                acc_GZSL_H = 2 * acc_GZSL_unseen * acc_GZSL_seen / (
                        acc_GZSL_unseen + acc_GZSL_seen)

            print('GZSL test accuracy is Unseen: {:.1f} Seen: {:.1f} H:{:.1f}'.format(acc_GZSL_unseen,
                                                                                    acc_GZSL_seen, acc_GZSL_H))
    else:
        print('Train and test...')
        for epoch in range(opt.nepoch):
            # print("training")
            model.train()
            current_lr = opt.classifier_lr * (0.8 ** (epoch // 10))
            realtrain = epoch > opt.pretrain_epoch
            if epoch <= opt.pretrain_epoch:  # pretrain ALE for the first several epoches
                optimizer = optim.Adam(params=[model.prototype_vectors[layer_name], model.ALE_vector],
                                       lr=opt.pretrain_lr, betas=(opt.beta1, 0.999))
            else:
                optimizer = optim.Adam(params=filter(lambda p: p.requires_grad, model.parameters()),
                                       lr=current_lr, betas=(opt.beta1, 0.999))
            # loss for print
            loss_log = {'ave_loss': 0, 'l_xe_final': 0, 'l_attri_final': 0, 'l_regular_final': 0,
                        'l_xe_layer': 0, 'l_attri_layer': 0, 'l_regular_layer': 0, 'l_cpt': 0}

            batch = len(trainloader)
            epoch_start = time.time()
            for i, (batch_input, batch_target, impath) in enumerate(trainloader):
                model.zero_grad()
                # map target labels
                batch_target = map_label(batch_target, data.seenclasses)
                input_v = batch_input.cuda()
                label_v = batch_target.cuda()
                output, pre_attri, attention, pre_class = model(input_v, attribute_seen)
                label_a = attribute_seen[:, label_v].t()

                loss = Loss_fn(opt, loss_log, reg_weight, criterion, criterion_regre, model,
                               output, pre_attri, attention, pre_class, label_a, label_v,
                               realtrain, middle_graph, None, group_dic, sub_group_dic)
                loss_log['ave_loss'] += loss.item()
                loss.backward()
                optimizer.step()
            log_timing('epoch %d' % epoch, epoch_start, batch)
            # print('\n[Epoch %d, Batch %5d] Train loss: %.3f '
            #       % (epoch+1, batch, loss_log['ave_loss'] / batch))

            print('\n[Epoch %d, Batch %5d] Train loss: %.3f '
                  % (epoch + 1, batch, loss_log['ave_loss'] / batch), end='')
            for key in loss_log:
                if key != 'ave_loss':
                    print('%s: %.6f ' % (key, loss_log[key] / batch), end='')
            print('')

            if epoch + 1 > opt.pretrain_epoch and (epoch + 1) % 2 == 0:
                model.eval()
                # test zsl
                if not opt.gzsl:
                    acc_ZSL = test_zsl(opt, model, testloader_unseen, attribute_zsl, data.unseenclasses)
                    if acc_ZSL > result_zsl.best_acc:
                        # save model state
                        model_save_path = os.path.join('./out/{}_ZSL_id_{}.pth'.format(opt.dataset, opt.train_id))
                        torch.save(model.state_dict(), model_save_path)
                        print('model saved to:', model_save_path)
                    result_zsl.update(epoch + 1, acc_ZSL)
                    print('\n[Epoch {}] ZSL test accuracy is {:.1f}%, Best_acc [{:.1f}% | Epoch-{}]'.format(
                        epoch + 1, acc_ZSL, result_zsl.best_acc, result_zsl.best_iter))
                else:
                    # test gzsl
                    acc_GZSL_unseen = test_gzsl(opt, model, testloader_unseen, attribute_gzsl, data.unseenclasses,
                                                opt.calibrated_stacking)
                    acc_GZSL_seen = test_gzsl(opt, model, testloader_seen, attribute_gzsl, data.seenclasses,
                                              opt.calibrated_stacking)

                    if (acc_GZSL_unseen + acc_GZSL_seen) == 0:
                        acc_GZSL_H = 0
                    else:
                        acc_GZSL_H = 2 * acc_GZSL_unseen * acc_GZSL_seen / (
                                acc_GZSL_unseen + acc_GZSL_seen)
                    if acc_GZSL_H > result_gzsl.best_acc:
                        # save model state
                        # model_save_path = os.path.join('./out/{}_GZSL_id_{}.pth'.format(opt.dataset, opt.train_id))
                        model_save_path = os.path.join('./out/{}_GZSL_id_{}.pth'.format(opt.dataset, opt.train_id))
                        torch.save(model.state_dict(), model_save_path)
                        print('model saved to:', model_save_path)

                    result_gzsl.update_gzsl(epoch + 1, acc_GZSL_unseen, acc_GZSL_seen, acc_GZSL_H)

                    print('\n[Epoch {}] GZSL test accuracy is Unseen: {:.1f} Seen: {:.1f} H:{:.1f}'
                          '\n           Best_H [Unseen: {:.1f}% Seen: {:.1f}% H: {:.1f}% | Epoch-{}]'.
                          format(epoch + 1, acc_GZSL_unseen, acc_GZSL_seen, acc_GZSL_H, result_gzsl.best_acc_U_T,
                                 result_gzsl.best_acc_S_T, result_gzsl.best_acc, result_gzsl.best_iter))
                torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
