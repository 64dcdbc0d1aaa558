import os
import pickle
import random

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse import linalg

from src.utils.dataloader import DataLoader, StandardScaler


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def select_free_gpu(min_free_mb=4000):
    """Return 'cuda:<idx>' of the GPU with the most free memory (NVML), or None."""
    try:
        import pynvml
    except ImportError:
        return None
    pynvml.nvmlInit()
    best_idx, best_free = None, -1
    for idx in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
        free_mb = pynvml.nvmlDeviceGetMemoryInfo(handle).free / 1024 ** 2
        if free_mb > best_free:
            best_idx, best_free = idx, free_mb
    pynvml.nvmlShutdown()
    if best_idx is None or best_free < min_free_mb:
        return None
    return 'cuda:{}'.format(best_idx)


def get_dataloader(datapath, batch_size, input_dim, output_dim, mode='train', num_workers=0, pin_memory=False):
    data = {}
    processed = {}
    results = {}
    for category in ['train', 'val', 'test']:
        cat_data = np.load(os.path.join(datapath, category + '.npz'))
        data['x_' + category] = cat_data['x']
        data['y_' + category] = cat_data['y']

    scaler = StandardScaler(mean=data['x_train'][..., 0].mean(), std=data['x_train'][..., 0].std())
    # Data format
    for category in ['train', 'val', 'test']:
        data['x_' + category][..., 0] = scaler.transform(data['x_' + category][..., 0])
        data['y_' + category][..., 0] = scaler.transform(data['y_' + category][..., 0])

        new_x = data['x_' + category][..., :input_dim]
        new_y = data['y_' + category][..., :output_dim]
        processed[category] = (new_x, new_y)

    results['train_loader'] = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(processed['train'][0]).float(),
                                       torch.from_numpy(processed['train'][1]).float()),
        batch_size=batch_size, shuffle=True, num_workers=num_workers, pin_memory=pin_memory, drop_last=False)
    results['val_loader'] = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(processed['val'][0]).float(),
                                       torch.from_numpy(processed['val'][1]).float()),
        batch_size=batch_size, shuffle=False, num_workers=num_workers, pin_memory=pin_memory)
    results['test_loader'] = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(processed['test'][0]).float(),
                                       torch.from_numpy(processed['test'][1]).float()),
        batch_size=batch_size, shuffle=False, num_workers=num_workers)
    results['scaler'] = scaler

    if mode == 'test':
        results['train_loader'] = None
        results['val_loader'] = None
    return results


def check_device(device=None):
    if device is None:
        print("`device` is missing, try to train and evaluate the model on default device.")
        if torch.cuda.is_available():
            print("cuda device is available, place the model on the device.")
            return torch.device("cuda")
        else:
            print("cuda device is not available, place the model on cpu.")
            return torch.device("cpu")
    else:
        if isinstance(device, torch.device):
            return device
        else:
            return torch.device(device)


def get_num_nodes(dataset):
    d = {'CA': 8600, 'GLA': 3834, 'GBA': 2352, 'SD': 716}
    assert dataset in d.keys()
    return d[dataset]


def get_dataset_info(dataset):
    base_dir = os.getcwd() + '/data/'
    d = {
        'CA': [base_dir + 'ca', base_dir + 'ca/ca_rn_adj.npy', 8600],
        'GLA': [base_dir + 'gla', base_dir + 'gla/gla_rn_adj.npy', 3834],
        'GBA': [base_dir + 'gba', base_dir + 'gba/gba_rn_adj.npy', 2352],
        'SD': [base_dir + 'sd', base_dir + 'sd/sd_rn_adj.npy', 716],
    }
    assert dataset in d.keys()
    return d[dataset]


def load_adj_from_pickle(pickle_file):
    try:
        with open(pickle_file, 'rb') as f:
            pickle_data = pickle.load(f)
    except UnicodeDecodeError as e:
        with open(pickle_file, 'rb') as f:
            pickle_data = pickle.load(f, encoding='latin1')
    except Exception as e:
        print('Unable to load data ', pickle_file, ':', e)
        raise
    return pickle_data


def load_adj_from_numpy(numpy_file):
    return np.load(numpy_file)


def normalize_adj_mx(adj_mx, adj_type, return_type='dense'):
    if adj_type == 'normlap':
        adj = [calculate_normalized_laplacian(adj_mx)]
    elif adj_type == 'scalap':
        adj = [calculate_scaled_laplacian(adj_mx)]
    elif adj_type == 'symadj':
        adj = [calculate_sym_adj(adj_mx)]
    elif adj_type == 'transition':
        adj = [calculate_asym_adj(adj_mx)]
    elif adj_type == 'doubletransition':
        adj = [calculate_asym_adj(adj_mx), calculate_asym_adj(np.transpose(adj_mx))]
    elif adj_type == 'identity':
        adj = [np.diag(np.ones(adj_mx.shape[0])).astype(np.float32)]
    else:
        return []

    if return_type == 'dense':
        adj = [a.astype(np.float32).todense() for a in adj]
    elif return_type == 'coo':
        adj = [a.tocoo() for a in adj]
    return adj


def calculate_normalized_laplacian(adj_mx):
    adj_mx = sp.coo_matrix(adj_mx)
    d = np.array(adj_mx.sum(1))
    d_inv_sqrt = np.power(d, -0.5).flatten()
    d_inv_sqrt[np.isinf(d_inv_sqrt)] = 0.
    d_mat_inv_sqrt = sp.diags(d_inv_sqrt)
    res = sp.eye(adj_mx.shape[0]) - adj_mx.dot(d_mat_inv_sqrt).transpose().dot(d_mat_inv_sqrt).tocoo()
    return res


def calculate_scaled_laplacian(adj_mx, lambda_max=2, undirected=True):
    if undirected:
        adj_mx = np.maximum.reduce([adj_mx, adj_mx.T])
    L = calculate_normalized_laplacian(adj_mx)
    if lambda_max is None:
        lambda_max, _ = linalg.eigsh(L, 1, which='LM')
        lambda_max = lambda_max[0]
    L = sp.csr_matrix(L)
    M, _ = L.shape
    I = sp.identity(M, format='csr', dtype=L.dtype)
    res = (2 / lambda_max * L) - I
    return res


def calculate_sym_adj(adj_mx):
    adj_mx = sp.coo_matrix(adj_mx)
    rowsum = np.array(adj_mx.sum(1))
    d_inv_sqrt = np.power(rowsum, -0.5).flatten()
    d_inv_sqrt[np.isinf(d_inv_sqrt)] = 0.
    d_mat_inv_sqrt = sp.diags(d_inv_sqrt)
    res = adj_mx.dot(d_mat_inv_sqrt).transpose().dot(d_mat_inv_sqrt)
    return res


def calculate_asym_adj(adj_mx):
    adj_mx = sp.coo_matrix(adj_mx)
    rowsum = np.array(adj_mx.sum(1)).flatten()
    d_inv = np.power(rowsum, -1).flatten()
    d_inv[np.isinf(d_inv)] = 0.
    d_mat = sp.diags(d_inv)
    res = d_mat.dot(adj_mx)
    return res


def calculate_cheb_poly(L, Ks):
    n = L.shape[0]
    LL = [np.eye(n), L.copy()]
    for i in range(2, Ks):
        LL.append(np.matmul(2 * L, LL[-1]) - LL[-2])
    return np.asarray(LL)


def adj_to_sparse_tensor(adj_coo, device):
    """scipy COO -> torch sparse COO tensor on `device` (used by DCRNN / STGODE on CA with 8,600 nodes)."""
    indices = torch.from_numpy(np.vstack((adj_coo.row, adj_coo.col)).astype(np.int64))
    values = torch.from_numpy(adj_coo.data.astype(np.float32))
    return torch.sparse_coo_tensor(indices, values, torch.Size(adj_coo.shape), device=device).coalesce()
