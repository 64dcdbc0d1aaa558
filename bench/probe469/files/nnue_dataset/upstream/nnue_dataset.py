import numpy as np
import ctypes
import torch
import os
import sys
import glob

local_dllpath = [n for n in glob.glob('./*training_data_loader.*') if n.endswith('.so') or n.endswith('.dll') or n.endswith('.dylib')]
if not local_dllpath:
    print('Cannot find data_loader shared library.')
    sys.exit(1)
dllpath = os.path.abspath(local_dllpath[0])
dll = ctypes.cdll.LoadLibrary(dllpath)


def _to_device(arr, device):
    # Page-locked staging buffer so the host->device copy can overlap with compute.
    return torch.from_numpy(arr).pin_memory().to(device=device, non_blocking=True)


class SparseBatch(ctypes.Structure):
    _fields_ = [
        ('num_inputs', ctypes.c_int),
        ('size', ctypes.c_int),
        ('is_white', ctypes.POINTER(ctypes.c_float)),
        ('outcome', ctypes.POINTER(ctypes.c_float)),
        ('score', ctypes.POINTER(ctypes.c_float)),
        ('num_active_white_features', ctypes.c_int),
        ('num_active_black_features', ctypes.c_int),
        ('max_active_features', ctypes.c_int),
        ('white', ctypes.POINTER(ctypes.c_int)),
        ('black', ctypes.POINTER(ctypes.c_int)),
        ('white_values', ctypes.POINTER(ctypes.c_float)),
        ('black_values', ctypes.POINTER(ctypes.c_float)),
        ('psqt_indices', ctypes.POINTER(ctypes.c_int)),
        ('layer_stack_indices', ctypes.POINTER(ctypes.c_int)),
    ]

    def get_tensors(self, device):
        shape_features = (self.size, self.max_active_features)
        white_values = _to_device(np.ctypeslib.as_array(self.white_values, shape=shape_features), device)
        black_values = _to_device(np.ctypeslib.as_array(self.black_values, shape=shape_features), device)
        white_indices = _to_device(np.ctypeslib.as_array(self.white, shape=shape_features), device)
        black_indices = _to_device(np.ctypeslib.as_array(self.black, shape=shape_features), device)
        us = _to_device(np.ctypeslib.as_array(self.is_white, shape=(self.size, 1)), device)
        them = 1.0 - us
        outcome = _to_device(np.ctypeslib.as_array(self.outcome, shape=(self.size, 1)), device)
        score = _to_device(np.ctypeslib.as_array(self.score, shape=(self.size, 1)), device)
        psqt_indices = _to_device(np.ctypeslib.as_array(self.psqt_indices, shape=(self.size,)), device).long()
        layer_stack_indices = _to_device(np.ctypeslib.as_array(self.layer_stack_indices, shape=(self.size,)), device).long()
        return us, them, white_indices, white_values, black_indices, black_values, outcome, score, psqt_indices, layer_stack_indices


SparseBatchPtr = ctypes.POINTER(SparseBatch)


class DataloaderSkipConfig(ctypes.Structure):
    _fields_ = [
        ('filtered', ctypes.c_bool),
        ('random_fen_skipping', ctypes.c_int),
        ('wld_filtered', ctypes.c_bool),
        ('early_fen_skipping', ctypes.c_int),
        ('param_index', ctypes.c_int),
    ]


class TrainingDataProvider:
    def __init__(
            self,
            feature_set,
            create_stream,
            destroy_stream,
            fetch_next,
            destroy_part,
            filenames,
            cyclic,
            num_workers,
            batch_size=None,
            skip_config=DataloaderSkipConfig(),
            device='cpu'):

        self.feature_set = feature_set.encode('utf-8')
        self.create_stream = create_stream
        self.destroy_stream = destroy_stream
        self.fetch_next = fetch_next
        self.destroy_part = destroy_part
        self.filenames = filenames
        self.cyclic = cyclic
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.skip_config = skip_config
        self.device = device

        if batch_size:
            self.stream = self.create_stream(self.feature_set, self.num_workers, self.filenames, batch_size, cyclic, skip_config)
        else:
            self.stream = self.create_stream(self.feature_set, self.num_workers, self.filenames, cyclic, skip_config)

    def __iter__(self):
        return self

    def __next__(self):
        v = self.fetch_next(self.stream)

        if v:
            tensors = v.contents.get_tensors(self.device)
            self.destroy_part(v)
            return tensors
        else:
            raise StopIteration

    def __del__(self):
        self.destroy_stream(self.stream)


def make_stream_filenames(filenames):
    filenames_ = (ctypes.c_char_p * len(filenames))()
    filenames_[:] = [filename.encode('utf-8') for filename in filenames]
    return filenames_


create_sparse_batch_stream = dll.create_sparse_batch_stream
create_sparse_batch_stream.restype = ctypes.c_void_p
create_sparse_batch_stream.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_int, ctypes.c_bool, DataloaderSkipConfig]
destroy_sparse_batch_stream = dll.destroy_sparse_batch_stream
destroy_sparse_batch_stream.argtypes = [ctypes.c_void_p]

fetch_next_sparse_batch = dll.fetch_next_sparse_batch
fetch_next_sparse_batch.restype = SparseBatchPtr
fetch_next_sparse_batch.argtypes = [ctypes.c_void_p]
destroy_sparse_batch = dll.destroy_sparse_batch

get_sparse_batch_from_fens = dll.get_sparse_batch_from_fens
get_sparse_batch_from_fens.restype = SparseBatchPtr
get_sparse_batch_from_fens.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]


def make_sparse_batch_from_fens(feature_set, fens, scores, plies, results):
    results_ = (ctypes.c_int * len(scores))()
    scores_ = (ctypes.c_int * len(plies))()
    plies_ = (ctypes.c_int * len(results))()
    fens_ = (ctypes.c_char_p * len(fens))()
    fens_[:] = [fen.encode('utf-8') for fen in fens]
    for i, v in enumerate(scores):
        scores_[i] = v
    for i, v in enumerate(plies):
        plies_[i] = v
    for i, v in enumerate(results):
        results_[i] = v
    b = get_sparse_batch_from_fens(feature_set.name.encode('utf-8'), len(fens), fens_, scores_, plies_, results_)
    return b


class SparseBatchProvider(TrainingDataProvider):
    def __init__(self, feature_set, filenames, batch_size, cyclic=True, num_workers=1, skip_config=DataloaderSkipConfig(), device='cpu'):
        super(SparseBatchProvider, self).__init__(
            feature_set,
            create_sparse_batch_stream,
            destroy_sparse_batch_stream,
            fetch_next_sparse_batch,
            destroy_sparse_batch,
            make_stream_filenames(filenames),
            cyclic,
            num_workers,
            batch_size,
            skip_config,
            device)


class SparseBatchDataset(torch.utils.data.IterableDataset):
    def __init__(self, feature_set, filenames, batch_size, cyclic=True, num_workers=1, filtered=False,
                 random_fen_skipping=0, wld_filtered=False, early_fen_skipping=-1, param_index=0, device='cpu'):
        super(SparseBatchDataset).__init__()
        self.feature_set = feature_set
        self.filenames = filenames
        self.batch_size = batch_size
        self.cyclic = cyclic
        self.num_workers = num_workers
        self.skip_config = DataloaderSkipConfig(
            filtered=filtered,
            random_fen_skipping=random_fen_skipping,
            wld_filtered=wld_filtered,
            early_fen_skipping=early_fen_skipping,
            param_index=param_index,
        )
        self.device = device

    def __iter__(self):
        return SparseBatchProvider(self.feature_set, self.filenames, self.batch_size, cyclic=self.cyclic,
                                   num_workers=self.num_workers, skip_config=self.skip_config, device=self.device)


class FixedNumBatchesDataset(torch.utils.data.Dataset):
    def __init__(self, dataset, num_batches):
        super(FixedNumBatchesDataset, self).__init__()
        self.dataset = dataset
        self.iter = None
        self.num_batches = num_batches

    def __len__(self):
        return self.num_batches

    def __getitem__(self, idx):
        if self.iter is None:
            self.iter = iter(self.dataset)
        return next(self.iter)
