import math

import numpy as np
import torch
import torch.nn as nn
from sklearn import metrics
from torch.autograd import Variable


def varible(tensor, gpu):
    if gpu >= 0:
        return torch.autograd.Variable(tensor).cuda()
    else:
        return torch.autograd.Variable(tensor)


def to_scalar(var):
    return var.view(-1).data.tolist()[0]


def _tensor_types(gpu):
    """Legacy typed-tensor constructors for the selected device."""
    if gpu >= 0:
        return torch.cuda.LongTensor, torch.cuda.FloatTensor
    return torch.LongTensor, torch.FloatTensor


def compute_auc(all_target, all_pred):
    # fpr, tpr, thresholds = metrics.roc_curve(all_target, all_pred, pos_label=1.0)
    return metrics.roc_auc_score(all_target, all_pred)


def compute_accuracy(all_target, all_pred):
    all_pred[all_pred > 0.5] = 1.0
    all_pred[all_pred <= 0.5] = 0.0
    return metrics.accuracy_score(all_target, all_pred)


def train(epoch_num, model, params, optimizer, q_data, qa_data):
    N = int(math.floor(len(q_data) / params.batch_size))

    # shuffle data
    shuffled_ind = np.arange(q_data.shape[0])
    np.random.shuffle(shuffled_ind)
    q_data = q_data[shuffled_ind]
    qa_data = qa_data[shuffled_ind]

    pred_list = []
    target_list = []
    epoch_loss = 0
    model.train()

    # init_memory_value = np.random.normal(0.0, params.init_std, ())
    for idx in range(N):
        q_one_seq = q_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        qa_batch_seq = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        target = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]

        target = (target - 1) / params.n_question
        target = np.floor(target)
        input_q = varible(torch.LongTensor(q_one_seq), params.gpu)
        input_qa = varible(torch.LongTensor(qa_batch_seq), params.gpu)
        target = varible(torch.FloatTensor(target), params.gpu)
        target_to_1d = torch.chunk(target, params.batch_size, 0)
        target_1d = torch.cat([target_to_1d[i] for i in range(params.batch_size)], 1)
        target_1d = target_1d.permute(1, 0)

        model.zero_grad()
        loss, filtered_pred, filtered_target = model.forward(input_q, input_qa, target_1d)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), params.maxgradnorm)
        optimizer.step()
        epoch_loss += to_scalar(loss)

        right_target = np.asarray(filtered_target.data.tolist())
        right_pred = np.asarray(filtered_pred.data.tolist())
        pred_list.append(right_pred)
        target_list.append(right_target)

        if params.show and idx % 50 == 0:
            print('\r batch {}/{} loss {:.5f}'.format(idx, N, to_scalar(loss)), end='')

    all_pred = np.concatenate(pred_list, axis=0)
    all_target = np.concatenate(target_list, axis=0)

    auc = compute_auc(all_target, all_pred)
    accuracy = compute_accuracy(all_target, all_pred)

    return epoch_loss / N, accuracy, auc


def test(model, params, optimizer, q_data, qa_data):
    N = int(math.floor(len(q_data) / params.batch_size))

    pred_list = []
    target_list = []
    epoch_loss = 0
    model.eval()
    LongT, FloatT = _tensor_types(params.gpu)

    with torch.no_grad():
        for idx in range(N):
            q_one_seq = q_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
            qa_batch_seq = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
            target = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]

            target = (target - 1) / params.n_question
            target = np.floor(target)

            input_q = Variable(LongT(q_one_seq.tolist()))
            input_qa = Variable(LongT(qa_batch_seq.tolist()))
            target = Variable(FloatT(target.tolist()))

            target_to_1d = torch.chunk(target, params.batch_size, 0)
            target_1d = torch.cat([target_to_1d[i] for i in range(params.batch_size)], 1)
            target_1d = target_1d.permute(1, 0)

            loss, filtered_pred, filtered_target = model.forward(input_q, input_qa, target_1d)

            right_target = np.asarray(filtered_target.data.tolist())
            right_pred = np.asarray(filtered_pred.data.tolist())
            pred_list.append(right_pred)
            target_list.append(right_target)
            epoch_loss += to_scalar(loss)

    all_pred = np.concatenate(pred_list, axis=0)
    all_target = np.concatenate(target_list, axis=0)

    auc = compute_auc(all_target, all_pred)
    accuracy = compute_accuracy(all_target, all_pred)

    return epoch_loss / N, accuracy, auc
