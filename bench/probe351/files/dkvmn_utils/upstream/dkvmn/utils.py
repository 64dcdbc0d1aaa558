import json
import os

import torch
from torch.autograd import Variable


def varible(tensor, gpu):
    if gpu >= 0:
        return Variable(tensor).cuda()
    else:
        return Variable(tensor)


def to_scalar(var):
    return var.view(-1).data.tolist()[0]


def save_checkpoint(state, track_list, filename):
    folder = os.path.dirname(filename)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder)
    with open(filename + '.json', 'w') as f:
        json.dump(track_list, f)
    torch.save(state, filename + '.model')


def load_checkpoint(filename, model, optimizer=None, gpu=-1):
    """Restore model/optimizer from `filename` (saved by save_checkpoint). Returns the epoch to resume from."""
    if gpu >= 0:
        state = torch.load(filename, map_location=lambda storage, loc: storage.cuda(gpu))
    else:
        state = torch.load(filename, map_location='cpu')
    model.load_state_dict(state['state_dict'])
    if optimizer is not None and 'optimizer' in state:
        optimizer.load_state_dict(state['optimizer'])
    return state.get('epoch', 0)


def adjust_learning_rate(optimizer, epoch, params):
    lr = max(params.init_lr * (params.lr_decay ** (epoch // params.decay_epoch)), params.final_lr)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return lr


def sequence_mask(lengths, max_len=None, gpu=-1):
    """mask[i, j] = j < lengths[i]; built on the same device the model runs on."""
    batch_size = lengths.size(0)
    max_len = max_len or int(lengths.max())
    seq_range = torch.arange(0, max_len).long()
    seq_range_expand = seq_range.unsqueeze(0).expand(batch_size, max_len)
    if gpu >= 0:
        seq_range_expand = seq_range_expand.cuda(gpu)
    seq_length_expand = lengths.unsqueeze(1).expand_as(seq_range_expand)
    return seq_range_expand < seq_length_expand
