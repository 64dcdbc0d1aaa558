import numpy as np
import networkx as nx
import scipy.sparse as sp
import scipy.io as sio
import torch


def load_anomaly_detection_dataset(dataset, datadir='data'):
    data_mat = sio.loadmat(f'{datadir}/{dataset}.mat')
    adj = data_mat['Network']
    feat = data_mat['Attributes']
    truth = data_mat['Label']
    truth = truth.flatten()

    adj_norm = normalize_adj(adj + sp.eye(adj.shape[0]))
    adj_norm = adj_norm.toarray()
    adj = adj + sp.eye(adj.shape[0])
    adj = adj.toarray()
    feat = feat.toarray()
    return adj_norm, feat, truth, adj


def normalize_adj(adj):
    """Symmetrically normalize adjacency matrix."""
    adj = sp.coo_matrix(adj)
    rowsum = np.array(adj.sum(1))
    d_inv_sqrt = np.power(rowsum, -0.5).flatten()
    d_inv_sqrt[np.isinf(d_inv_sqrt)] = 0.
    d_mat_inv_sqrt = sp.diags(d_inv_sqrt)
    return adj.dot(d_mat_inv_sqrt).transpose().dot(d_mat_inv_sqrt).tocoo()


def sparse_to_tuple(sparse_mx):
    """Convert sparse matrix to tuple representation (kept from the TF version)."""
    def to_tuple(mx):
        if not sp.isspmatrix_coo(mx):
            mx = mx.tocoo()
        coords = np.vstack((mx.row, mx.col)).transpose()
        values = mx.data
        shape = mx.shape
        return coords, values, shape

    if isinstance(sparse_mx, list):
        for i in range(len(sparse_mx)):
            sparse_mx[i] = to_tuple(sparse_mx[i])
    else:
        sparse_mx = to_tuple(sparse_mx)

    return sparse_mx


def preprocess_features(features):
    """Row-normalize feature matrix and convert to tuple representation"""
    rowsum = np.array(features.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    r_mat_inv = sp.diags(r_inv)
    features = r_mat_inv.dot(features)
    return features.todense(), sparse_to_tuple(features)


def precision_at_k(label, score, k):
    """Fraction of true anomalies among the k highest scored nodes."""
    order = np.argsort(-score)
    return float(np.sum(label[order[:k]])) / k


def make_ad_dataset(G, feat, m=15, n=10, k=50, seed=0):
    """Inject structural (clique) and attribute anomalies as in the DOMINANT
    paper and return (adjacency, attributes, label) ready for sio.savemat."""
    rng = np.random.RandomState(seed)
    num_nodes = G.number_of_nodes()
    feat = feat.copy()
    label = np.zeros(num_nodes, dtype=np.int64)

    # structural anomalies: n cliques of size m
    nodes = rng.choice(num_nodes, m * n, replace=False)
    for c in range(n):
        clique = nodes[c * m:(c + 1) * m]
        for i in clique:
            for j in clique:
                if i != j:
                    G.add_edge(int(i), int(j))
        label[clique] = 1

    # attribute anomalies: copy the farthest of k random candidates
    normal = np.where(label == 0)[0]
    targets = rng.choice(normal, m * n, replace=False)
    for t in targets:
        cand = rng.choice(num_nodes, k, replace=False)
        dist = np.linalg.norm(feat[cand] - feat[t], axis=1)
        feat[t] = feat[cand[np.argmax(dist)]]
        label[t] = 1

    adj = nx.to_scipy_sparse_matrix(G, nodelist=range(num_nodes), format='csr')
    return adj, sp.csr_matrix(feat), label


def sparse_mx_to_torch_sparse_tensor(sparse_mx):
    """Convert a scipy sparse matrix to a torch sparse tensor."""
    sparse_mx = sparse_mx.tocoo().astype(np.float32)
    indices = torch.from_numpy(
        np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    shape = torch.Size(sparse_mx.shape)
    return torch.sparse.FloatTensor(indices, values, shape)
