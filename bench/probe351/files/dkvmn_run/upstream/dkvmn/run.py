import numpy as np
import torch
import math
from sklearn import metrics
import utils as utils
import torch.nn as nn
from tqdm import tqdm


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
    for idx in tqdm(range(N), disable=not params.show, desc="Epoch %d" % (epoch_num + 1)):
        q_one_seq = q_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        qa_batch_seq = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        target = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]

        target = (target - 1) / params.n_question
        target = np.floor(target)
        input_q = utils.varible(torch.LongTensor(q_one_seq), params.gpu)
        input_qa = utils.varible(torch.LongTensor(qa_batch_seq), params.gpu)
        target = utils.varible(torch.FloatTensor(target), params.gpu)
        target_to_1d = torch.chunk(target, params.batch_size, 0)
        target_1d = torch.cat([target_to_1d[i] for i in range(params.batch_size)], 1)
        target_1d = target_1d.permute(1, 0)

        model.zero_grad()
        loss, filtered_pred, filtered_target = model.forward(input_q, input_qa, target_1d)
        loss.backward()
        nn.utils.clip_grad_norm(model.parameters(), params.maxgradnorm)
        optimizer.step()
        epoch_loss += utils.to_scalar(loss)

        right_target = np.asarray(filtered_target.data.tolist())
        right_pred = np.asarray(filtered_pred.data.tolist())
        # print(right_target)
        # print(right_pred)
        pred_list.append(right_pred)
        target_list.append(right_target)

    all_pred = np.concatenate(pred_list, axis=0)
    all_target = np.concatenate(target_list, axis=0)
    # if (epoch_num + 1) % params.decay_epoch == 0:
    #     new_lr = params.init_lr * params.lr_decay
    #     if new_lr < params.final_lr:
    #         new_lr = params.final_lr
    #     for param_group in optimizer.param_groups:
    #         param_group['lr'] = new_lr
    #     print('learning rate: ', new_lr)
    auc = metrics.roc_auc_score(all_target, all_pred)
    all_pred[all_pred >= 0.5] = 1.0
    all_pred[all_pred < 0.5] = 0.0
    accuracy = metrics.accuracy_score(all_target, all_pred)

    return epoch_loss / N, accuracy, auc


def test(model, params, optimizer, q_data, qa_data):
    N = int(math.floor(len(q_data) / params.batch_size))

    pred_list = []
    target_list = []
    epoch_loss = 0
    model.eval()

    for idx in range(N):
        q_one_seq = q_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        qa_batch_seq = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]
        target = qa_data[idx * params.batch_size:(idx + 1) * params.batch_size, :]

        target = (target - 1) / params.n_question
        target = np.floor(target)

        input_q = utils.varible(torch.LongTensor(q_one_seq), params.gpu)
        input_qa = utils.varible(torch.LongTensor(qa_batch_seq), params.gpu)
        target = torch.FloatTensor(target)
        if params.gpu >= 0:
            target = target.cuda()

        target_to_1d = torch.chunk(target, params.batch_size, 0)
        target_1d = torch.cat([target_to_1d[i] for i in range(params.batch_size)], 1)
        target_1d = target_1d.permute(1, 0)

        with torch.no_grad():
            loss, filtered_pred, filtered_target = model.forward(input_q, input_qa, target_1d)

        right_target = np.asarray(filtered_target.data.tolist())
        right_pred = np.asarray(filtered_pred.data.tolist())
        pred_list.append(right_pred)
        target_list.append(right_target)
        epoch_loss += utils.to_scalar(loss)

    all_pred = np.concatenate(pred_list, axis=0)
    all_target = np.concatenate(target_list, axis=0)

    auc = metrics.roc_auc_score(all_target, all_pred)
    all_pred[all_pred >= 0.5] = 1.0
    all_pred[all_pred < 0.5] = 0.0
    accuracy = metrics.accuracy_score(all_target, all_pred)

    return epoch_loss / N, accuracy, auc


def predict_student(model, params, q_seq, qa_seq):
    """Knowledge-state trace for a single student (used by the visualisation notebook).

    q_seq / qa_seq are 1-D numpy arrays padded to params.seqlen. The model was built for a fixed
    batch size, so the sequence is tiled to fill a batch and only row 0 is kept.
    """
    model.eval()
    q_batch = np.tile(q_seq[None, :], (params.batch_size, 1))
    qa_batch = np.tile(qa_seq[None, :], (params.batch_size, 1))
    input_q = utils.varible(torch.LongTensor(q_batch), params.gpu)
    input_qa = utils.varible(torch.LongTensor(qa_batch), params.gpu)
    with torch.no_grad():
        mastery = model.concept_mastery(input_q, input_qa)
    return mastery[0].cpu().numpy()
