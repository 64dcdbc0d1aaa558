import numpy as np
import cupy as cp
from scipy.cluster.hierarchy import linkage, fcluster, to_tree

# A helper class for KitNET which performs a correlation-based incremental clustering of the dimensions in X
# n: the number of dimensions in the dataset
# For more information and citation, please see our NDSS'18 paper: Kitsune: An Ensemble of Autoencoders for Online Network Intrusion Detection
#
# The running sums are kept on the GPU with CuPy: for the 115 AfterImage
# features the n x n outer-product update dominates the feature-mapping grace
# period when done in numpy.


class corClust:
    def __init__(self, n):
        # parameter:
        self.n = n
        # varaibles
        self.c = cp.zeros(n)  # linear num of features
        self.c_r = cp.zeros(n)  # linear sum of feature residules
        self.c_rs = cp.zeros(n)  # linear sum of feature residules
        self.C = cp.zeros((n, n))  # partial correlation matrix
        self.N = 0  # number of updates performed

    # x: a numpy vector of length n
    def update(self, x):
        self.N += 1
        x = cp.asarray(x, dtype=cp.float64)
        self.c += x
        c_rt = x - self.c / self.N
        self.c_r += c_rt
        self.c_rs += c_rt ** 2
        self.C += cp.outer(c_rt, c_rt)

    # creates the current correlation distance matrix between the features
    def corrDist(self):
        c_rs_sqrt = cp.sqrt(self.c_rs)
        C_rs_sqrt = cp.outer(c_rs_sqrt, c_rs_sqrt)
        C_rs_sqrt[C_rs_sqrt == 0] = 1e-100  # this protects against dive by zero erros (occurs when a feature is a constant)
        D = 1 - self.C / C_rs_sqrt  # the correlation distance matrix
        D[D < 0] = 0  # small negatives may appear due to the incremental fashion in which we update the mean. Therefore, we 'fix' them
        return cp.asnumpy(D)

    # clusters the features together, having no more than maxClust features per cluster
    def cluster(self, maxClust):
        D = self.corrDist()
        Z = linkage(D[np.triu_indices(self.n, 1)])  # create a linkage matrix based on the distance matrix
        if maxClust < 1:
            maxClust = 1
        if maxClust > self.n:
            maxClust = self.n
        map = self.__breakClust__(to_tree(Z), maxClust)
        return map

    # a recursive helper function which breaks down the dendrogram branches until all clusters have no more than maxClust elements
    def __breakClust__(self, dendro, maxClust):
        if dendro.count <= maxClust:  # base case: we found a minimal cluster, so mark it
            return [dendro.pre_order()]  # return the origional ids of the features in this cluster
        return self.__breakClust__(dendro.get_left(), maxClust) + self.__breakClust__(dendro.get_right(), maxClust)

# Copyright (c) 2017 Yisroel Mirsky
#
# MIT License
