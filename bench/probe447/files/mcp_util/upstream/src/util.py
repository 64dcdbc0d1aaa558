import numpy as np
import torch
from torch.utils.data import Dataset


def write_pred(test_pred, test_idx, file_path):
    test_pred = [item for sublist in test_pred for item in sublist]
    with open(file_path, 'w') as f:
        for idx, pred in zip(test_idx, test_pred):
            print(idx.upper() + ',' + str(pred[0]), file=f)


# Dataset preparation
class ExeDataset(Dataset):
    def __init__(self, fp_list, data_path, label_list, first_n_byte=2000000):
        self.fp_list = fp_list
        self.data_path = data_path
        self.label_list = label_list
        self.first_n_byte = first_n_byte

    def __len__(self):
        return len(self.fp_list)

    def __getitem__(self, idx):
        try:
            with open(self.data_path + self.fp_list[idx], 'rb') as f:
                tmp = [i + 1 for i in f.read()[:self.first_n_byte]]
                tmp = tmp + [0] * (self.first_n_byte - len(tmp))
        except:
            with open(self.data_path + self.fp_list[idx].lower(), 'rb') as f:
                tmp = [i + 1 for i in f.read()[:self.first_n_byte]]
                tmp = tmp + [0] * (self.first_n_byte - len(tmp))

        return np.array(tmp), np.array([self.label_list[idx]])


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def load_whole_model(path):
    # checkpoints are written with torch.save(model), i.e. the whole module is
    # pickled together with the device its parameters were on when saved
    model = torch.load(path)
    model.eval()
    return model


def predict_file(model, path, first_n_byte=2000000, device=None):
    if device is None:
        device = next(model.parameters()).device
    with open(path, 'rb') as f:
        raw = [i + 1 for i in f.read()[:first_n_byte]]
    raw = raw + [0] * (first_n_byte - len(raw))
    x = torch.tensor([raw], dtype=torch.long, device=device)
    with torch.no_grad():
        logit = model(x)
    return torch.sigmoid(logit).item()
