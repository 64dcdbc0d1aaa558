import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.autograd import Variable
from .strategy import Strategy
from sklearn.metrics import pairwise_distances
from scipy import stats
import pdb
import time


# kmeans ++ initialization
def init_centers(X, K):
    ind = np.argmax([np.linalg.norm(s, 2) for s in X])
    mu = [X[ind]]
    indsAll = [ind]
    centInds = [0.] * len(X)
    cent = 0
    print('#Samps\tTotal Distance')
    while len(mu) < K:
        if len(mu) == 1:
            D2 = pairwise_distances(X, mu).ravel().astype(float)
        else:
            newD = pairwise_distances(X, [mu[-1]]).ravel().astype(float)
            for i in range(len(X)):
                if D2[i] >  newD[i]:
                    centInds[i] = cent
                    D2[i] = newD[i]
        print(str(len(mu)) + '\t' + str(sum(D2)), flush=True)
        if sum(D2) == 0.0: pdb.set_trace()
        D2 = D2.ravel().astype(float)
        Ddist = (D2 ** 2)/ sum(D2 ** 2)
        customDist = stats.rv_discrete(name='custm', values=(np.arange(len(D2)), Ddist))
        ind = customDist.rvs(size=1)[0]
        while ind in indsAll: ind = customDist.rvs(size=1)[0]
        mu.append(X[ind])
        indsAll.append(ind)
        cent += 1
    return indsAll


# same k-means++ seeding, but the D^2 bookkeeping stays on the GPU.  On
# CIFAR10 with resnet18 the gradient embeddings are 5120-d and the pool is 50k,
# where the sklearn version above takes ~40 min per round.
def init_centers_gpu(X, K, verbose=False):
    X_gpu = torch.cuda.FloatTensor(X)
    norms = torch.norm(X_gpu, dim=1)
    ind = int(torch.argmax(norms).item())
    indsAll = [ind]
    D2 = torch.cdist(X_gpu, X_gpu[ind].unsqueeze(0)).squeeze(1)
    D2 = D2.type(torch.cuda.DoubleTensor)
    while len(indsAll) < K:
        if verbose:
            print(str(len(indsAll)) + '\t' + str(D2.sum().item()), flush=True)
        total = (D2 ** 2).sum()
        if total.item() == 0.0:
            raise RuntimeError('all remaining points coincide with a center')
        Ddist = (D2 ** 2) / total
        ind = int(torch.multinomial(Ddist.float(), 1).item())
        while ind in indsAll:
            ind = int(torch.multinomial(Ddist.float(), 1).item())
        indsAll.append(ind)
        newD = torch.cdist(X_gpu, X_gpu[ind].unsqueeze(0)).squeeze(1).double()
        D2 = torch.minimum(D2, newD)
    torch.cuda.synchronize()
    return indsAll


class BadgeSampling(Strategy):
    def __init__(self, X, Y, idxs_lb, net, handler, args, use_gpu_kmeans=True):
        super(BadgeSampling, self).__init__(X, Y, idxs_lb, net, handler, args)
        self.use_gpu_kmeans = use_gpu_kmeans

    def query(self, n):
        idxs_unlabeled = np.arange(self.n_pool)[~self.idxs_lb]
        gradEmbedding = self.get_grad_embedding(self.X[idxs_unlabeled], self.Y.numpy()[idxs_unlabeled]).numpy()
        t0 = time.time()
        if self.use_gpu_kmeans and torch.cuda.is_available():
            chosen = init_centers_gpu(gradEmbedding, n)
        else:
            chosen = init_centers(gradEmbedding, n),
            chosen = chosen[0]
        print('k-means++ seeding took {:.1f}s'.format(time.time() - t0), flush=True)
        return idxs_unlabeled[chosen]
