import numpy as np
import torch

import KitNET.dA as AE
import KitNET.corClust as CC

# This class represents a KitNET machine learner.
# KitNET is a lightweight online anomaly detection algorithm based on an ensemble of autoencoders.
# For more information and citation, please see our NDSS'18 paper: Kitsune: An Ensemble of Autoencoders for Online Network Intrusion Detection
# For licensing information, see the end of this document
#
# This version keeps the ensemble on a torch device. During training packets are
# still processed one at a time (the autoencoders learn online), but execution
# can be batched with execute_batch(), which is where a GPU pays off.


class KitNET:
    # n: the number of features in your input dataset (i.e., x \in R^n)
    # m: the maximum size of any autoencoder in the ensemble layer
    # AD_grace_period: the number of instances the network will learn from before producing anomaly scores
    # FM_grace_period: the number of instances which will be taken to learn the feature mapping. If 'None', then FM_grace_period=AM_grace_period
    # learning_rate: the default stochastic gradient descent learning rate for all autoencoders in the KitNET instance.
    # hidden_ratio: the default ratio of hidden to visible neurons. E.g., 0.75 will cause roughly a 25% compression in the hidden layer.
    # feature_map: One may optionally provide a feature map instead of learning one. The map must be a list,
    #           where the i-th entry contains a list of the feature indices to be assingned to the i-th autoencoder in the ensemble.
    #           For example, [[2,5,3],[4,0,1],[6,7]]
    def __init__(self, n, max_autoencoder_size=10, FM_grace_period=None, AD_grace_period=10000, learning_rate=0.1,
                 hidden_ratio=0.75, feature_map=None, device=None):
        # Parameters:
        self.AD_grace_period = AD_grace_period
        if FM_grace_period is None:
            self.FM_grace_period = AD_grace_period
        else:
            self.FM_grace_period = FM_grace_period
        if max_autoencoder_size <= 0:
            self.m = 1
        else:
            self.m = max_autoencoder_size
        self.lr = learning_rate
        self.hr = hidden_ratio
        self.n = n

        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)

        # Variables
        self.n_trained = 0  # the number of training instances so far
        self.n_executed = 0  # the number of executed instances so far
        self.v = feature_map
        if self.v is None:
            print("Feature-Mapper: train-mode, Anomaly-Detector: off-mode")
        else:
            self.__createAD__()
            print("Feature-Mapper: execute-mode, Anomaly-Detector: train-mode")
        self.FM = CC.corClust(self.n)  # incremental feature cluatering for the feature mapping process
        self.ensembleLayer = []
        self.outputLayer = None

    # If FM_grace_period+AM_grace_period has passed, then this function executes KitNET on x. Otherwise, this function learns from x.
    # x: a numpy array of length n
    # Note: KitNET automatically performs 0-1 normalization on all attributes.
    def process(self, x):
        if self.n_trained > self.FM_grace_period + self.AD_grace_period:  # If both the FM and AD are in execute-mode
            return self.execute(x)
        else:
            self.train(x)
            return 0.0

    # force train KitNET on x
    # returns the anomaly score of x during training (do not use for alerting)
    def train(self, x):
        if self.n_trained <= self.FM_grace_period and self.v is None:  # If the FM is in train-mode, and the user has not supplied a feature mapping
            # update the incremetnal correlation matrix
            self.FM.update(x)
            if self.n_trained == self.FM_grace_period:  # If the feature mapping should be instantiated
                self.v = self.FM.cluster(self.m)
                self.__createAD__()
                print("The Feature-Mapper found a mapping: " + str(self.n) + " features to " + str(len(self.v)) + " autoencoders.")
                print("Feature-Mapper: execute-mode, Anomaly-Detector: train-mode")
        else:  # train
            xt = torch.as_tensor(x, dtype=torch.float32, device=self.device)
            ## Ensemble Layer
            S_l1 = torch.zeros(len(self.ensembleLayer), device=self.device)
            for a in range(len(self.ensembleLayer)):
                # make sub instance for autoencoder 'a'
                xi = xt[self.v_idx[a]]
                S_l1[a] = self.ensembleLayer[a].train(xi)
            ## OutputLayer
            self.outputLayer.train(S_l1)
            if self.n_trained == self.AD_grace_period + self.FM_grace_period:
                print("Feature-Mapper: execute-mode, Anomaly-Detector: execute-mode")
        self.n_trained += 1

    # force execute KitNET on x
    def execute(self, x):
        if self.v is None:
            raise RuntimeError('KitNET Cannot execute x, because a feature mapping has not yet been learned or provided. Try running process(x) instead.')
        else:
            self.n_executed += 1
            xt = torch.as_tensor(x, dtype=torch.float32, device=self.device)
            ## Ensemble Layer
            S_l1 = torch.zeros(len(self.ensembleLayer), device=self.device)
            for a in range(len(self.ensembleLayer)):
                # make sub inst
                xi = xt[self.v_idx[a]]
                S_l1[a] = self.ensembleLayer[a].execute(xi)
            ## OutputLayer
            return self.outputLayer.execute(S_l1).item()

    @torch.no_grad()
    def execute_batch(self, X):
        """Score a (B, n) numpy batch. Only valid once both grace periods are over."""
        if self.v is None:
            raise RuntimeError('KitNET has no feature map yet')
        Xt = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)).pin_memory().to(self.device, non_blocking=True)
        S_l1 = torch.stack([ae.execute_batch(Xt[:, idx]) for ae, idx in zip(self.ensembleLayer, self.v_idx)], dim=1)
        scores = self.outputLayer.execute_batch(S_l1)
        self.n_executed += X.shape[0]
        return scores.cpu().numpy()

    def __createAD__(self):
        # construct ensemble layer
        self.v_idx = [torch.as_tensor(map_, dtype=torch.long, device=self.device) for map_ in self.v]
        for map_ in self.v:
            params = AE.dA_params(n_visible=len(map_), n_hidden=0, lr=self.lr, corruption_level=0, gracePeriod=0,
                                  hiddenRatio=self.hr)
            self.ensembleLayer.append(AE.dA(params, device=self.device))

        # construct output layer
        params = AE.dA_params(len(self.v), n_hidden=0, lr=self.lr, corruption_level=0, gracePeriod=0,
                              hiddenRatio=self.hr)
        self.outputLayer = AE.dA(params, device=self.device)

    def state_dict(self):
        return {
            "v": self.v,
            "n_trained": self.n_trained,
            "ensemble": [ae.state_dict() for ae in self.ensembleLayer],
            "output": self.outputLayer.state_dict() if self.outputLayer is not None else None,
        }

    def load_state_dict(self, sd):
        self.v = sd["v"]
        self.n_trained = sd["n_trained"]
        self.ensembleLayer = []
        self.__createAD__()
        for ae, s in zip(self.ensembleLayer, sd["ensemble"]):
            ae.load_state_dict(s)
        if sd["output"] is not None:
            self.outputLayer.load_state_dict(sd["output"])

# Copyright (c) 2017 Yisroel Mirsky
#
# MIT License
