"""Helper functions for preparing dataloaders, as well as
a class to implement loading data from a sparse matrix in mini-batches.
"""

import logging
from typing import Callable, Optional, Tuple

import numpy as np
import scipy.sparse as sp
import torch

import cellbender.remove_background.consts as consts

logger = logging.getLogger("cellbender")


class SparseDataset(torch.utils.data.Dataset):
    """Sparse dataset: defines how sparse rows become dense tensors.

    Used by the torch DataLoader path (`--num-workers > 0`).
    """

    def __init__(self, csr: sp.csr_matrix):
        self.csr = csr

    def __len__(self):
        return self.csr.shape[0]

    def __getitem__(self, idx):
        return torch.from_numpy(self.csr[idx].toarray().squeeze(0)).float()


def prep_sparse_data_for_training(
    dataset: sp.csr_matrix,
    empty_drop_dataset: sp.csr_matrix,
    training_fraction: float = consts.TRAINING_FRACTION,
    fraction_empties: float = consts.FRACTION_EMPTIES,
    batch_size: int = consts.DEFAULT_BATCH_SIZE,
    shuffle: bool = True,
    use_cuda: bool = True,
) -> Tuple["DataLoader", "DataLoader"]:
    """Create torch.utils.data.DataLoaders for train and tests set.

    Args:
        dataset: Matrix of gene counts, where rows are cell barcodes and
            columns are genes.
        empty_drop_dataset: Matrix of gene counts, where rows are surely-empty
            droplet barcodes and columns are genes.
        training_fraction: Fraction of data to use as the training set.  The
            rest becomes the test set.
        fraction_empties: Fraction of each minibatch to be composed of empty
            droplets.
        batch_size: Number of cell barcodes per mini-batch of data.
        shuffle: Passed as an argument to torch.utils.data.DataLoader.  If
            True, the data is reshuffled at every epoch.
        use_cuda: If True, the data loader will load tensors on GPU.

    Returns:
        train_loader: torch.utils.data.DataLoader object for training set.
        test_loader: torch.utils.data.DataLoader object for tests set.

    """

    # Choose train and test indices from analysis dataset.
    training_mask = np.random.rand(dataset.shape[0]) < training_fraction
    training_indices = [idx for idx in range(dataset.shape[0]) if training_mask[idx]]
    test_indices = [idx for idx in range(dataset.shape[0]) if not training_mask[idx]]

    # Choose train and test indices from empty drop dataset.
    training_mask_empty = np.random.rand(empty_drop_dataset.shape[0]) < training_fraction
    training_indices_empty = [idx for idx in range(empty_drop_dataset.shape[0]) if training_mask_empty[idx]]
    test_indices_empty = [idx for idx in range(empty_drop_dataset.shape[0]) if not training_mask_empty[idx]]

    # Set up training dataloader.
    train_dataset = dataset[training_indices, ...]
    train_dataset_empty = empty_drop_dataset[training_indices_empty, ...]
    train_loader = DataLoader(
        train_dataset,
        empty_drop_dataset=train_dataset_empty,
        batch_size=batch_size,
        fraction_empties=fraction_empties,
        shuffle=shuffle,
        use_cuda=use_cuda,
    )

    # Set up test dataloader.
    test_dataset = dataset[test_indices, ...]
    test_dataset_empty = empty_drop_dataset[test_indices_empty, ...]
    test_loader = DataLoader(
        test_dataset,
        empty_drop_dataset=test_dataset_empty,
        batch_size=batch_size,
        fraction_empties=fraction_empties,
        shuffle=shuffle,
        use_cuda=use_cuda,
    )

    logger.info(f"Training on {len(train_dataset.nonzero()[0])} nonzero entries "
                f"({len(training_indices)} cells + {len(training_indices_empty)} empties)")
    return train_loader, test_loader


def make_torch_dataloader(
    csr: sp.csr_matrix,
    batch_size: int,
    num_workers: int = 4,
    use_cuda: bool = True,
) -> torch.utils.data.DataLoader:
    """Standard torch DataLoader over the cell rows (no empty-droplet mixing).

    Only used for posterior computation when multiple workers help with the
    sparse -> dense conversion.
    """
    return torch.utils.data.DataLoader(
        SparseDataset(csr),
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        pin_memory=use_cuda,
        pin_memory_device="cuda" if use_cuda else "",
        persistent_workers=num_workers > 0,
    )


class DataLoader:
    """Dataloader.

    This dataloader loads a specified fraction of empty droplets, and shuffles
    every time you iterate.

    Args:
        dataset: Sparse matrix of cell counts, [barcodes, genes]
        empty_drop_dataset: Sparse matrix of empty-droplet counts
        batch_size: Number of barcodes per minibatch
        fraction_empties: Fraction of each minibatch made of empties
        shuffle: Shuffle each epoch
        sort_by: Optional function to sort the rows for deterministic batches
        use_cuda: Put minibatches on the GPU
    """

    def __init__(
        self,
        dataset: sp.csr_matrix,
        empty_drop_dataset: Optional[sp.csr_matrix],
        batch_size: int = consts.DEFAULT_BATCH_SIZE,
        fraction_empties: float = 0.0,
        shuffle: bool = True,
        sort_by: Optional[Callable[[sp.csr_matrix], np.ndarray]] = None,
        use_cuda: bool = True,
    ):
        self.dataset = dataset
        if sort_by is not None:
            self.sort_fn = sort_by
            self.ind_list = np.argsort(sort_by(self.dataset))
        else:
            self.sort_fn = None
            self.ind_list = np.arange(self.dataset.shape[0])
        self.empty_drop_dataset = empty_drop_dataset
        if self.empty_drop_dataset is None:
            self.empty_ind_list = np.array([])
        else:
            self.empty_ind_list = np.arange(self.empty_drop_dataset.shape[0])
        self.batch_size = batch_size
        self.fraction_empties = fraction_empties
        self.cell_batch_size = int(batch_size * (1.0 - fraction_empties))
        self.shuffle = shuffle
        self.random = np.random.RandomState(seed=1234)
        self.device = "cpu"
        self.use_cuda = use_cuda
        if self.use_cuda:
            self.device = "cuda"
        self._length = None
        self._reset()

    def _reset(self):
        if self.shuffle:
            self.random.shuffle(self.ind_list)  # Shuffle cell inds in place
        self.ptr = 0

    def reset_ptr(self):
        self.ptr = 0

    def __len__(self):
        if self._length is None:
            self._length = int(np.ceil(self.ind_list.size / self.cell_batch_size))
        return self._length

    def _get_random_state(self):
        return self.random.get_state()

    def _set_random_state(self, state):
        return self.random.set_state(state)

    def __iter__(self):
        return self

    def sort_order(self):
        """Return the order in which the rows will be served (for resorting)."""
        if self.sort_fn is None:
            return self.ind_list
        return np.argsort(self.ind_list)

    def __next__(self):
        if self.ptr == self.ind_list.size:
            self._reset()
            raise StopIteration()

        else:

            # Move the pointer by the number of cells in this minibatch.
            next_ptr = min(self.ind_list.size, self.ptr + self.cell_batch_size)

            # Decide on cell (non-empty) indices.
            cell_inds = self.ind_list[self.ptr:next_ptr]

            # Decide on empty droplet indices. (Number chosen at random.)
            n_empties = int(min(self.random.binomial(self.batch_size, self.fraction_empties),
                                self.empty_ind_list.size))
            if n_empties > 0:
                empty_inds = self.random.choice(self.empty_ind_list, size=n_empties, replace=True)
                if empty_inds.size > 0:
                    csr_list = [self.dataset[cell_inds, :], self.empty_drop_dataset[empty_inds, :]]
                else:
                    csr_list = [self.dataset[cell_inds, :]]
            else:
                csr_list = [self.dataset[cell_inds, :]]

            # Get a dense tensor from the sparse matrix.
            dense_tensor = torch.tensor(sp.vstack(csr_list).todense(), dtype=torch.float32).to(device=self.device)

            # Increment the pointer and return the minibatch.
            self.ptr = next_ptr
            return dense_tensor
