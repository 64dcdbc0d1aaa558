import os
import numpy as np
import torch

# --------------------------------------
# Learned whitening (Radenovic et al. 2016), numpy reference implementation.
# These run on the host: the descriptors are moved to CPU/numpy by the callers.
# --------------------------------------

def whitenapply(X, m, P, dimensions=None):

    if not dimensions:
        dimensions = P.shape[0]

    X = np.dot(P[:dimensions, :], X-m)
    X = X / (np.linalg.norm(X, ord=2, axis=0, keepdims=True) + 1e-6)

    return X

def pcawhitenlearn(X):

    N = X.shape[1]

    # Learning PCA w/o annotations
    m = X.mean(axis=1, keepdims=True)
    Xc = X - m
    Xcov = np.dot(Xc, Xc.T)
    Xcov = (Xcov + Xcov.T) / (2*N)
    eigval, eigvec = np.linalg.eig(Xcov)
    order = eigval.argsort()[::-1]
    eigval = eigval[order]
    eigvec = eigvec[:, order]

    P = np.dot(np.linalg.inv(np.sqrt(np.diag(eigval))), eigvec.T)

    return m, P

def whitenlearn(X, qidxs, pidxs):

    # Learning Lw w annotations
    m = X[:, qidxs].mean(axis=1, keepdims=True)
    df = X[:, qidxs] - X[:, pidxs]
    S = np.dot(df, df.T) / df.shape[1]
    P = np.linalg.inv(cholesky(S))
    df = np.dot(P, X-m)
    D = np.dot(df, df.T)
    eigval, eigvec = np.linalg.eig(D)
    order = eigval.argsort()[::-1]
    eigval = eigval[order]
    eigvec = eigvec[:, order]

    P = np.dot(eigvec.T, P)

    return m, P

def cholesky(S):
    # Cholesky decomposition
    # with adding a small value on the diagonal
    # until matrix is positive definite
    alpha = 0
    while 1:
        try:
            L = np.linalg.cholesky(S + alpha*np.eye(*S.shape))
            return L
        except:
            if alpha == 0:
                alpha = 1e-10
            else:
                alpha *= 10
            print(">>>> {}::cholesky: Matrix is not positive definite, adding {:.0e} on the diagonal"
                .format(os.path.basename(__file__), alpha))


# --------------------------------------
# Torch versions, used by the GLDv2 fine-tuning scripts where the whitening
# is learned on ~1M descriptors and numpy.linalg gets too slow.
# --------------------------------------

def whitenlearn_torch(X, qidxs, pidxs, device=None):
    """X: D x N float32 numpy array or tensor. Returns (m, P) as numpy float32."""
    if not torch.is_tensor(X):
        X = torch.from_numpy(X)
    X = X.cuda() if device is None else X.to(device)
    # accumulate the covariance in double precision, the single precision
    # version loses the small eigenvalues on 2048-d descriptors
    X = X.double()
    qidxs = torch.as_tensor(qidxs, device=X.device)
    pidxs = torch.as_tensor(pidxs, device=X.device)

    m = X[:, qidxs].mean(dim=1, keepdim=True)
    df = X[:, qidxs] - X[:, pidxs]
    S = df @ df.t() / df.shape[1]
    L = torch.linalg.cholesky(S + 1e-10 * torch.eye(S.shape[0], dtype=S.dtype, device=S.device))
    P = torch.linalg.inv(L)
    df = P @ (X - m)
    D = df @ df.t()
    eigval, eigvec = torch.linalg.eigh(D)
    order = torch.argsort(eigval, descending=True)
    eigvec = eigvec[:, order]
    P = eigvec.t() @ P
    return m.float().cpu().numpy(), P.float().cpu().numpy()


def whitenapply_torch(X, m, P, dimensions=None):
    """Same as whitenapply, but keeps everything on X's device."""
    if not dimensions:
        dimensions = P.shape[0]
    m = torch.as_tensor(m, device=X.device, dtype=X.dtype)
    P = torch.as_tensor(P, device=X.device, dtype=X.dtype)
    X = P[:dimensions, :] @ (X - m)
    return X / (X.norm(p=2, dim=0, keepdim=True) + 1e-6)
