# -*- coding: utf-8 -*-
"""
Copyright TorchKGE developers
@author: Armand Boschin <aboschin@enst.fr>
"""

import shutil
import tarfile

from os import environ, makedirs, remove
from os.path import exists, expanduser, join

from torch import cat, tensor
from torch.cuda import is_available as cuda_is_available


def get_data_home(data_home=None):
    """Returns the path to the data directory. The path is created if
    it does not exist.

    If data_home is none, the data is downloaded into the home directory of
    of the user.

    Parameters
    ----------
    data_home: string
        The path to the data set.
    """
    if data_home is None:
        data_home = environ.get('TORCHKGE_DATA',
                                join('~', 'torchkge_data'))
    data_home = expanduser(data_home)
    if not exists(data_home):
        makedirs(data_home)
    return data_home


def get_n_batches(n, b_size):
    """Returns the number of bachtes. Let n be the number of samples in the data set,
    let batch_size be the number of samples per batch, then the number of batches is given by
                    n
        n_batches = ---------
                    batch_size

    Parameters
    ----------
    n: int
        Size of the data set.
    b_size: int
        Number of samples per batch.
    """
    n_batch = n // b_size
    if n % b_size > 0:
        n_batch += 1
    return n_batch


class DataLoader:
    """This class is inspired from :class:`torch.utils.dataloader.DataLoader`.
    It is however way simpler.

    Parameters
    ----------
    kg: torchkge.data_structures.KnowledgeGraph or torchkge.data_structures.SmallKG
        Knowledge graph in the form of an object implemented in
        torchkge.data_structures.
    batch_size: int
        Size of the required batches.
    use_cuda: str (opt, default = None)
        Can be either None (no use of cuda at all), 'all' to move all the
        dataset to cuda and then split in batches or 'batch' to simply move
        the batches to cuda before they are returned.
    """

    def __init__(self, kg, batch_size, use_cuda=None):
        self.h = kg.head_idx
        self.t = kg.tail_idx
        self.r = kg.relations

        self.use_cuda = use_cuda
        self.batch_size = batch_size

        if use_cuda is not None and not cuda_is_available():
            raise RuntimeError('use_cuda={} was requested but CUDA is not available '
                               'on this machine.'.format(use_cuda))

        if use_cuda is not None and use_cuda == 'all':
            self.h = self.h.cuda()
            self.t = self.t.cuda()
            self.r = self.r.cuda()

    def __len__(self):
        return get_n_batches(len(self.h), self.batch_size)

    def __iter__(self):
        return _DataLoaderIter(self)


class _DataLoaderIter:
    def __init__(self, loader):
        self.h = loader.h
        self.t = loader.t
        self.r = loader.r

        self.nb_facts = len(self.h)
        self.batch_size = loader.batch_size
        self.n_batches = get_n_batches(self.nb_facts, self.batch_size)
        self.use_cuda = loader.use_cuda

        self.current_batch = 0

    def __next__(self):
        if self.current_batch == self.n_batches:
            raise StopIteration
        else:
            i = self.current_batch
            self.current_batch += 1

            tmp_h = self.h[i * self.batch_size: (i + 1) * self.batch_size]
            tmp_t = self.t[i * self.batch_size: (i + 1) * self.batch_size]
            tmp_r = self.r[i * self.batch_size: (i + 1) * self.batch_size]

            if self.use_cuda is not None and self.use_cuda == 'batch':
                return tmp_h.cuda(), tmp_t.cuda(), tmp_r.cuda()
            else:
                return tmp_h, tmp_t, tmp_r

    def __iter__(self):
        return self


class Trainer:
    """This class simply wraps a simple training procedure.

    Parameters
    ----------
    model: torchkge.models.interfaces.Model
        Model to be trained.
    criterion:
        Criteria which should differentiate positive and negative scores. Can
        be an elements of torchkge.utils.losses
    kg_train: torchkge.data_structures.KnowledgeGraph
        KG used for training.
    n_epochs: int
        Number of epochs in the training procedure.
    batch_size: int
        Number of batches to use.
    sampling_type: str
        Either 'unif' (uniform negative sampling) or 'bern' (Bernoulli negative
        sampling).
    use_cuda: str (opt, default = None)
        Can be either None (no use of cuda at all), 'all' to move all the
        dataset to cuda and then split in batches or 'batch' to simply move
        the batches to cuda before they are returned.
    """

    def __init__(self, model, criterion, kg_train, n_epochs, batch_size,
                 optimizer, sampling_type='bern', use_cuda=None):

        self.model = model
        self.criterion = criterion
        self.kg_train = kg_train
        self.use_cuda = use_cuda
        self.n_epochs = n_epochs
        self.optimizer = optimizer
        self.sampling_type = sampling_type
        self.batch_size = batch_size
        self.n_triples = len(kg_train)

    def process_batch(self, current_batch):
        self.optimizer.zero_grad()

        h, t, r = current_batch[0], current_batch[1], current_batch[2]
        n_h, n_t = self.sampler.corrupt_batch(h, t, r)

        p, n = self.model(h, t, r, n_h, n_t)
        loss = self.criterion(p, n)
        loss.backward()
        self.optimizer.step()

        return loss.detach().item()

    def run(self):
        from torchkge.sampling import BernoulliNegativeSampler, UniformNegativeSampler
        from tqdm.autonotebook import tqdm

        if self.sampling_type == 'unif':
            self.sampler = UniformNegativeSampler(self.kg_train)
        else:
            self.sampler = BernoulliNegativeSampler(self.kg_train)

        if self.use_cuda in ['all', 'batch']:
            self.model.cuda()
            self.criterion.cuda()

        iterator = tqdm(range(self.n_epochs), unit='epoch')
        data_loader = DataLoader(self.kg_train, batch_size=self.batch_size, use_cuda=self.use_cuda)
        epochs_losses = []
        for epoch in iterator:
            sum_ = 0
            for i, batch in enumerate(data_loader):
                loss = self.process_batch(batch)
                sum_ += loss

            iterator.set_description(
                'Epoch {} | mean loss: {:.5f}'.format(epoch + 1,
                                                      sum_ / len(data_loader)))
            epochs_losses.append(sum_ / len(data_loader))
            self.model.normalize_parameters()

        return epochs_losses
