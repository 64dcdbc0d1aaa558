import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader
from sklearn.model_selection import KFold

AMINO_MAP = {'<pad>': 24, '*': 23, 'A': 0, 'C': 4, 'B': 20,
             'E': 6, 'D': 3, 'G': 7, 'F': 13, 'I': 9, 'H': 8,
             'K': 11, 'M': 12, 'L': 10, 'N': 2, 'Q': 5, 'P': 14,
             'S': 15, 'R': 1, 'T': 16, 'W': 17, 'V': 19, 'Y': 18,
             'X': 22, 'Z': 21}

AMINO_MAP_REV = ['A', 'R', 'N', 'D', 'C', 'Q', 'E', 'G', 'H', 'I', 'L', 'K',
                 'M', 'F', 'P', 'S', 'T', 'W', 'Y', 'V', 'B', 'Z', 'X', '*', '@']

AMINO_MAP_REV_ = ['A', 'R', 'N', 'D', 'C', 'Q', 'E', 'G', 'H', 'I', 'L', 'K',
                  'M', 'F', 'P', 'S', 'T', 'W', 'Y', 'V', 'N', 'Q', '*', '*', '@']


def enc_list_bl_max_len(aa_seqs, blosum, max_seq_len, padding='mid'):
    '''
    blosum encoding of a list of amino acid sequences with padding
    to a max length

    parameters:
        - aa_seqs : list with AA sequences
        - blosum : dictionnary: key= AA, value= blosum encoding
        - max_seq_len: common length for padding
        - padding : front, end, mid
    returns:
        - enc_aa_seq : list of np.ndarrays containing padded, encoded amino acid sequences
    '''

    # encode sequences
    sequences = []
    for seq in aa_seqs:
        e_seq = np.zeros((len(seq), len(blosum["A"])))
        count = 0
        for aa in seq:
            if aa in blosum:
                e_seq[count] = blosum[aa]
                count += 1
            else:
                raise ValueError("Unknown amino acid in peptides: " + aa)
        sequences.append(e_seq)

    # pad sequences
    n_seqs = len(aa_seqs)
    n_features = sequences[0].shape[1]

    enc_aa_seq = -np.ones((n_seqs, max_seq_len, n_features))
    for i in range(0, n_seqs):
        if padding == 'front':
            enc_aa_seq[i, -sequences[i].shape[0]:, :n_features] = sequences[i][-max_seq_len:]
        elif padding == 'end':
            enc_aa_seq[i, :sequences[i].shape[0], :n_features] = sequences[i][:max_seq_len]
        else:
            cut = max(0, sequences[i].shape[0] - max_seq_len)
            start = cut // 2
            s = sequences[i][start:start + max_seq_len]
            enc_aa_seq[i, :s.shape[0], :n_features] = s

    return enc_aa_seq


def pad_index(seq_list, maxlen, padding='mid', pad_value=AMINO_MAP['<pad>']):
    """Map each sequence to amino-acid indices and pad/trim it to maxlen."""
    out = np.full((len(seq_list), maxlen), pad_value, dtype=np.int64)
    for i, seq in enumerate(seq_list):
        idx = [AMINO_MAP.get(a, AMINO_MAP['X']) for a in seq]
        if len(idx) > maxlen:
            if padding == 'front':
                idx = idx[-maxlen:]
            elif padding == 'end':
                idx = idx[:maxlen]
            else:
                cut = len(idx) - maxlen
                idx = idx[cut // 2: cut // 2 + maxlen]
        if padding == 'front':
            out[i, maxlen - len(idx):] = idx
        elif padding == 'end':
            out[i, :len(idx)] = idx
        else:
            left = (maxlen - len(idx)) // 2
            out[i, left:left + len(idx)] = idx
    return out


class TCRDataset(Dataset):
    def __init__(self, x_pep, x_tcr, y):
        self.x_pep = torch.as_tensor(x_pep, dtype=torch.long)
        self.x_tcr = torch.as_tensor(x_tcr, dtype=torch.long)
        self.y = torch.as_tensor(y, dtype=torch.float32)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return {'pep': self.x_pep[idx], 'tcr': self.x_tcr[idx], 'y': self.y[idx]}


def define_dataloader(X_pep, X_tcr, y=None, maxlen_pep=None, maxlen_tcr=None,
                      padding='mid', batch_size=50, device='cpu', num_workers=0, pin_memory=False):

    if maxlen_pep is None:
        maxlen_pep = max(len(x) for x in X_pep)
    if maxlen_tcr is None:
        maxlen_tcr = max(len(x) for x in X_tcr)

    x_pep = pad_index(X_pep, maxlen_pep, padding)
    x_tcr = pad_index(X_tcr, maxlen_tcr, padding)
    if y is None:
        y = np.zeros(len(X_pep), dtype=np.float32)

    dataset = TCRDataset(x_pep, x_tcr, y)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False,
                        num_workers=num_workers, pin_memory=pin_memory, drop_last=False)

    return {'loader': loader, 'pep_amino_idx': x_pep, 'tcr_amino_idx': x_tcr,
            'pep_length': maxlen_pep, 'tcr_length': maxlen_tcr, 'device': device}


def load_embedding(filename):
    '''
    read in BLOSUM matrix

    parameters:
        - filename : file containing BLOSUM matrix

    returns:
        - blosum embedding matrix: list
    '''
    if filename is None or filename.lower() == 'none':
        filename = 'data/blosum/BLOSUM45'

    embedding_file = open(filename, "r")
    lines = embedding_file.readlines()[7:]
    embedding_file.close()

    embedding = [[float(x) for x in l.strip().split()[1:]] for l in lines]
    embedding.append([0.0] * len(embedding[0]))

    return embedding


def load_data_split(x_pep, x_tcr, args, fold=None):
    '''
    Split the data based on the method specified
    random: randomly split
    tcr: split based on unique TCRs
    epitope: split based on unique epitopes

    If fold is given, it is used as the held-out fold instead of args.idx_test_fold.
    '''
    split_type = args.split_type
    idx_test_fold = args.idx_test_fold if fold is None else fold
    n_fold = args.n_fold
    rng = np.random.RandomState(args.seed)

    if split_type == 'random':
        n_total = len(x_pep)
        idx_shuffled = np.arange(n_total)
        rng.shuffle(idx_shuffled)
        folds = np.array_split(idx_shuffled, n_fold)
        idx_test = folds[idx_test_fold]
        idx_train = np.concatenate([f for i, f in enumerate(folds) if i != idx_test_fold])
        idx_test_remove = np.array([], dtype=int)
    elif split_type in ('tcr', 'epitope'):
        key = x_tcr if split_type == 'tcr' else x_pep
        unique = np.unique(key)
        rng.shuffle(unique)
        kf = KFold(n_splits=n_fold)
        splits = list(kf.split(unique))
        _, test_groups = splits[idx_test_fold]
        test_set = set(unique[test_groups])
        is_test = np.array([k in test_set for k in key])
        idx_test = np.where(is_test)[0]
        idx_train = np.where(~is_test)[0]
        idx_test_remove = np.array([], dtype=int)
    else:
        raise ValueError('unknown split type: %s' % split_type)

    return idx_train, idx_test, idx_test_remove
