import torch
import numpy as np
import random
import os


def random_extract(feat, t_max):
    r = np.random.randint(feat.shape[0] - t_max)
    return feat[r : r + t_max]


def uniform_extract(feat, t_max, avg: bool = True):
    new_feat = np.zeros((t_max, feat.shape[1])).astype(np.float32)
    r = np.linspace(0, len(feat), t_max + 1, dtype = np.int32)
    if avg == True:
        for i in range(t_max):
            if r[i] != r[i + 1]:
                new_feat[i, :] = np.mean(feat[r[i] : r[i + 1], :], 0)
            else:
                new_feat[i, :] = feat[r[i], :]
    else:
        r = np.linspace(0, feat.shape[0] - 1, t_max, dtype = np.uint16)
        new_feat = feat[r, :]

    return new_feat


def pad(feat, min_len):
    clip_length = feat.shape[0]
    if clip_length <= min_len:
        return np.pad(feat, ((0, min_len - clip_length), (0, 0)), mode = 'constant', constant_values = 0)
    else:
        return feat


def process_feat(feat, length, is_random = False):
    if feat.shape[0] > length:
        if is_random:
            return random_extract(feat, length)
        else:
            return uniform_extract(feat, length)
    else:
        return pad(feat, length)


def process_test_feat(feat, length):
    tem_len = feat.shape[0]
    num = tem_len // length
    if tem_len % length == 0:
        new_feat = np.zeros((num, length, feat.shape[1])).astype(np.float32)
        for i in range(num):
            new_feat[i, :, :] = feat[i * length : (i + 1) * length, :]
    else:
        new_feat = np.zeros((num + 1, length, feat.shape[1])).astype(np.float32)
        for i in range(num):
            new_feat[i, :, :] = feat[i * length : (i + 1) * length, :]
        new_feat[num, :, :] = pad(feat[num * length : tem_len, :], length)
    return new_feat


def set_seed(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def save_best_record(test_info, file_path):
    fo = open(file_path, "w")
    fo.write("Step: {}\n".format(test_info["step"][-1]))
    fo.write("auc: {:.4f}\n".format(test_info["auc"][-1]))
    fo.write("ap: {:.4f}\n".format(test_info["ap"][-1]))
    fo.write("ac: {:.4f}\n".format(test_info["ac"][-1]))
    fo.close()


def norm(data):
    l2 = torch.norm(data, p = 2, dim = -1, keepdim = True)
    return torch.div(data, l2)


def mkdir(path):
    if not os.path.exists(path):
        os.makedirs(path)
