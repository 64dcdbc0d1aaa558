import os
import time
import string
import argparse
import re
import validators

import torch
import torch.backends.cudnn as cudnn
import torch.utils.data
import torch.nn.functional as F
import numpy as np
from nltk.metrics.distance import edit_distance

from utils import Averager, TokenLabelConverter, get_args
from dataset import hierarchical_dataset, AlignCollate
from models import Model
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def benchmark_all_eval(model, criterion, converter, opt, calculate_infer_time=False):
    """ evaluation with 6 benchmark evaluation datasets """
    eval_data_list = ['IIIT5k_3000', 'SVT', 'IC13_857', 'IC15_1811', 'SVTP', 'CUTE80']

    if calculate_infer_time:
        evaluation_batch_size = 1  # batch_size should be 1 to calculate the GPU inference time per image.
    else:
        evaluation_batch_size = opt.batch_size

    char_list_accuracy = []
    bpe_list_accuracy = []
    wp_list_accuracy = []
    fused_list_accuracy = []
    total_forward_time = 0
    total_evaluation_data_number = 0
    char_total_correct_number = 0
    bpe_total_correct_number = 0
    wp_total_correct_number = 0
    fused_total_correct_number = 0
    log = open(f'./result/{opt.exp_name}/log_all_evaluation.txt', 'a')
    dashed_line = '-' * 80
    print(dashed_line)
    log.write(dashed_line + '\n')
    for eval_data in eval_data_list:
        eval_data_path = os.path.join(opt.eval_data, eval_data)
        AlignCollate_evaluation = AlignCollate(imgH=opt.imgH, imgW=opt.imgW, keep_ratio_with_pad=opt.PAD, opt=opt)
        eval_data, eval_data_log = hierarchical_dataset(root=eval_data_path, opt=opt)
        evaluation_loader = torch.utils.data.DataLoader(
            eval_data, batch_size=evaluation_batch_size,
            shuffle=False,
            num_workers=int(opt.workers),
            collate_fn=AlignCollate_evaluation, pin_memory=True, drop_last=False)

        _, accuracys, _, _, _, infer_time, length_of_data, _ = validation(
            model, criterion, evaluation_loader, converter, opt)
        char_list_accuracy.append(f'{accuracys[0]:0.3f}')
        bpe_list_accuracy.append(f'{accuracys[1]:0.3f}')
        wp_list_accuracy.append(f'{accuracys[2]:0.3f}')
        fused_list_accuracy.append(f'{accuracys[3]:0.3f}')

        total_forward_time += infer_time
        total_evaluation_data_number += len(eval_data)
        char_total_correct_number += accuracys[0] * length_of_data
        bpe_total_correct_number += accuracys[1] * length_of_data
        wp_total_correct_number += accuracys[2] * length_of_data
        fused_total_correct_number += accuracys[3] * length_of_data
        log.write(eval_data_log)
        print(f'char_Acc {accuracys[0]:0.3f}\t bpe_Acc {accuracys[1]:0.3f}\t wp_Acc {accuracys[2]:0.3f}\t fused_Acc {accuracys[3]:0.3f}')
        log.write(f'char_Acc {accuracys[0]:0.3f}\t bpe_Acc {accuracys[1]:0.3f}\t wp_Acc {accuracys[2]:0.3f}\t fused_Acc {accuracys[3]:0.3f}\n')
        print(dashed_line)
        log.write(dashed_line + '\n')

    averaged_forward_time = total_forward_time / total_evaluation_data_number * 1000
    char_total_accuracy = char_total_correct_number / total_evaluation_data_number
    bpe_total_accuracy = bpe_total_correct_number / total_evaluation_data_number
    wp_total_accuracy = wp_total_correct_number / total_evaluation_data_number
    fused_total_accuracy = fused_total_correct_number / total_evaluation_data_number
    params_num = sum([np.prod(p.size()) for p in model.parameters()])

    evaluation_log = 'accuracy: '
    for name, char_accuracy, bpe_accuracy, wp_accuracy, fused_accuracy in zip(
            eval_data_list, char_list_accuracy, bpe_list_accuracy, wp_list_accuracy, fused_list_accuracy):
        evaluation_log += f'{name}: {char_accuracy}\t{bpe_accuracy}\t{wp_accuracy}\t{fused_accuracy}\t'
    evaluation_log += f'total_accuracy: {char_total_accuracy:0.3f}\t{bpe_total_accuracy:0.3f}\t{wp_total_accuracy:0.3f}\t{fused_total_accuracy:0.3f}\t'
    evaluation_log += f'averaged_infer_time: {averaged_forward_time:0.3f}\t# parameters: {params_num/1e6:0.3f}'
    print(evaluation_log)
    log.write(evaluation_log + '\n')
    log.close()

    return None


def _decode_with_confidence(preds, converter, decode_fn, batch_size):
    preds_prob = F.softmax(preds, dim=2)
    preds_max_prob, preds_index = preds_prob.topk(1, dim=-1, largest=True, sorted=True)
    preds_index = preds_index.view(-1, converter.batch_max_length)
    length_for_pred = torch.IntTensor([converter.batch_max_length - 1] * batch_size).to(device)
    preds_str = decode_fn(preds_index[:, 1:], length_for_pred)
    return preds_str, preds_max_prob


def validation(model, criterion, evaluation_loader, converter, opt):
    """ validation or evaluation """
    char_n_correct = 0
    bpe_n_correct = 0
    wp_n_correct = 0
    fused_n_correct = 0
    norm_ED = 0
    length_of_data = 0
    infer_time = 0
    valid_loss_avg = Averager()
    fused_preds_list = []

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)

    for i, (image_tensors, labels) in enumerate(evaluation_loader):
        batch_size = image_tensors.size(0)
        length_of_data = length_of_data + batch_size
        image = image_tensors.to(device)

        target = converter.char_encode(labels)[1]

        starter.record()
        char_preds, bpe_preds, wp_preds = model(image, is_eval=True)
        ender.record()
        torch.cuda.synchronize()
        forward_time = starter.elapsed_time(ender) / 1000.0

        cost = criterion(char_preds.contiguous().view(-1, char_preds.shape[-1]), target.contiguous().view(-1))

        char_preds_str, char_preds_max_prob = _decode_with_confidence(char_preds, converter, converter.char_decode, batch_size)
        bpe_preds_str, bpe_preds_max_prob = _decode_with_confidence(bpe_preds, converter, converter.bpe_decode, batch_size)
        wp_preds_str, wp_preds_max_prob = _decode_with_confidence(wp_preds, converter, converter.wp_decode, batch_size)

        infer_time += forward_time
        valid_loss_avg.add(cost)

        # calculate accuracy & confidence score
        confidence_score_list = []
        for index, gt in enumerate(labels):
            max_confidence_score = 0.0
            out_pred = None

            # char
            char_pred = char_preds_str[index]
            char_pred_max_prob = char_preds_max_prob[index]
            char_pred_EOS = char_pred.find('[s]')
            char_pred = char_pred[:char_pred_EOS]  # prune after "end of sentence" token ([s])
            if char_pred == gt:
                char_n_correct += 1
            char_pred_max_prob = char_pred_max_prob[:char_pred_EOS + 1]
            try:
                char_confidence_score = char_pred_max_prob.cumprod(dim=0)[-1]
            except:
                char_confidence_score = 0.0
            if char_confidence_score > max_confidence_score:
                max_confidence_score = char_confidence_score
                out_pred = char_pred

            # bpe
            bpe_pred = bpe_preds_str[index]
            bpe_pred_max_prob = bpe_preds_max_prob[index]
            bpe_pred_EOS = bpe_pred.find('#')
            bpe_pred = bpe_pred[:bpe_pred_EOS]
            if bpe_pred == gt:
                bpe_n_correct += 1
            bpe_pred_index = bpe_preds_max_prob[index].squeeze(-1)
            bpe_pred_max_prob = bpe_pred_index[:bpe_pred_EOS + 1]
            try:
                bpe_confidence_score = bpe_pred_max_prob.cumprod(dim=0)[-1]
            except:
                bpe_confidence_score = 0.0
            if bpe_confidence_score > max_confidence_score:
                max_confidence_score = bpe_confidence_score
                out_pred = bpe_pred

            # wp
            wp_pred = wp_preds_str[index]
            wp_pred_max_prob = wp_preds_max_prob[index]
            wp_pred_EOS = wp_pred.find('[SEP]')
            wp_pred = wp_pred[:wp_pred_EOS]
            if wp_pred == gt:
                wp_n_correct += 1
            wp_pred_index = wp_preds_max_prob[index].squeeze(-1)
            wp_pred_max_prob = wp_pred_index[:wp_pred_EOS + 1]
            try:
                wp_confidence_score = wp_pred_max_prob.cumprod(dim=0)[-1]
            except:
                wp_confidence_score = 0.0
            if wp_confidence_score > max_confidence_score:
                max_confidence_score = wp_confidence_score
                out_pred = wp_pred

            fused_preds_list.append(out_pred)
            if out_pred == gt:
                fused_n_correct += 1

            # ICDAR2019 Normalized Edit Distance
            if len(gt) == 0 or len(out_pred) == 0:
                norm_ED += 0
            elif len(gt) > len(out_pred):
                norm_ED += 1 - edit_distance(out_pred, gt) / len(gt)
            else:
                norm_ED += 1 - edit_distance(out_pred, gt) / len(out_pred)

            confidence_score_list.append(max_confidence_score)

    char_accuracy = char_n_correct / float(length_of_data) * 100
    bpe_accuracy = bpe_n_correct / float(length_of_data) * 100
    wp_accuracy = wp_n_correct / float(length_of_data) * 100
    fused_accuracy = fused_n_correct / float(length_of_data) * 100
    norm_ED = norm_ED / float(length_of_data)  # ICDAR2019 Normalized Edit Distance

    return valid_loss_avg.val(), [char_accuracy, bpe_accuracy, wp_accuracy, fused_accuracy], char_preds_str, confidence_score_list, labels, infer_time, length_of_data, fused_preds_list


def test(opt):
    """ model configuration """
    converter = TokenLabelConverter(opt)
    opt.num_class = len(converter.character)

    if opt.rgb:
        opt.input_channel = 3
    model = Model(opt)
    print('model input parameters', opt.imgH, opt.imgW, opt.num_fiducial, opt.input_channel, opt.output_channel,
          opt.hidden_size, opt.num_class, opt.batch_max_length, opt.TransformerModel)
    model = model.to(device)

    # load model
    print('loading pretrained model from %s' % opt.saved_model)

    if validators.url(opt.saved_model):
        state_dict = torch.hub.load_state_dict_from_url(opt.saved_model, progress=True, map_location='cpu')
    else:
        state_dict = torch.load(opt.saved_model, map_location='cpu')
    state_dict = {k.replace('module.', '', 1): v for k, v in state_dict.items()}
    model.load_state_dict(state_dict)

    opt.exp_name = '_'.join(opt.saved_model.split('/')[1:])

    """ keep evaluation model and result logs """
    os.makedirs(f'./result/{opt.exp_name}', exist_ok=True)
    os.system(f'cp {opt.saved_model} ./result/{opt.exp_name}/')

    """ setup loss """
    criterion = torch.nn.CrossEntropyLoss(ignore_index=0).to(device)  # ignore [GO] token = ignore index 0

    """ evaluation """
    model.eval()
    opt.eval = True
    with torch.no_grad():
        if opt.benchmark_all_eval:  # evaluation with 6 benchmark evaluation datasets
            benchmark_all_eval(model, criterion, converter, opt, calculate_infer_time=opt.calculate_infer_time)
        else:
            log = open(f'./result/{opt.exp_name}/log_evaluation.txt', 'a')
            AlignCollate_evaluation = AlignCollate(imgH=opt.imgH, imgW=opt.imgW, keep_ratio_with_pad=opt.PAD, opt=opt)
            eval_data, eval_data_log = hierarchical_dataset(root=opt.eval_data, opt=opt)
            evaluation_loader = torch.utils.data.DataLoader(
                eval_data, batch_size=opt.batch_size,
                shuffle=False,
                num_workers=int(opt.workers),
                collate_fn=AlignCollate_evaluation, pin_memory=True)
            _, accuracy_by_best_model, _, _, _, _, _, _ = validation(
                model, criterion, evaluation_loader, converter, opt)
            log.write(eval_data_log)
            print(f'{accuracy_by_best_model[3]:0.3f}')
            log.write(f'{accuracy_by_best_model[3]:0.3f}\n')
            log.close()


if __name__ == '__main__':
    opt = get_args(is_train=False)

    """ vocab / character number configuration """
    if opt.sensitive:
        opt.character = string.printable[:-6]  # same with ASTER setting (use 94 char).

    cudnn.benchmark = True
    cudnn.deterministic = True
    opt.num_gpu = torch.cuda.device_count()

    test(opt)
