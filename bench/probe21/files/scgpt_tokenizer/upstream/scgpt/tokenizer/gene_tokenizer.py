import json
import pickle
from pathlib import Path
from collections import Counter, OrderedDict
from typing import Dict, Iterable, List, Optional, Tuple, Union
from typing_extensions import Self

import numpy as np
import pandas as pd
import torch
import torchtext.vocab as torch_vocab
from torchtext.vocab import Vocab


class GeneVocab(Vocab):
    """
    Vocabulary for genes.
    """

    def __init__(
        self,
        gene_list_or_vocab: Union[List[str], Vocab],
        specials: Optional[List[str]] = None,
        special_first: bool = True,
        default_token: Optional[str] = "<pad>",
    ) -> None:
        """
        Initialize the vocabulary.
        Note: add specials only works when init from a gene list.
        """
        if isinstance(gene_list_or_vocab, Vocab):
            _vocab = gene_list_or_vocab
            if specials is not None:
                raise ValueError("receive non-empty specials when init from a Vocab object.")
        elif isinstance(gene_list_or_vocab, list):
            _vocab = self._build_vocab_from_iterator(gene_list_or_vocab, specials=specials, special_first=special_first)
        else:
            raise ValueError("gene_list_or_vocab must be a list of gene names or a Vocab object.")
        super().__init__(_vocab.vocab)

        if default_token is not None and default_token in self:
            self.set_default_token(default_token)

    @classmethod
    def from_file(cls, file_path: Union[Path, str]) -> Self:
        """
        Load the vocabulary from a file. The file should be either a pickle or a
        json file of token to index mapping.
        """
        if isinstance(file_path, str):
            file_path = Path(file_path)
        if file_path.suffix == ".pkl":
            with file_path.open("rb") as f:
                vocab = pickle.load(f)
                return cls(vocab)
        elif file_path.suffix == ".json":
            with file_path.open("r") as f:
                token2idx = json.load(f)
                return cls.from_dict(token2idx)
        else:
            raise ValueError(f"{file_path} is not a valid file type. Only .pkl and .json are supported.")

    @classmethod
    def from_dict(cls, token2idx: Dict[str, int], default_token: Optional[str] = "<pad>") -> Self:
        _vocab = cls([])
        # add the tokens to the vocab, GeneVocab requires consecutive indices
        for t, i in sorted(token2idx.items(), key=lambda x: x[1]):
            _vocab.insert_token(t, i)
        if default_token is not None and default_token in _vocab:
            _vocab.set_default_token(default_token)
        return _vocab

    def _build_vocab_from_iterator(self, iterator: Iterable, min_freq: int = 1, specials: Optional[List[str]] = None,
                                   special_first: bool = True) -> Vocab:
        counter = Counter()
        counter.update(iterator)

        if specials is not None:
            for tok in specials:
                del counter[tok]

        sorted_by_freq_tuples = sorted(counter.items(), key=lambda x: x[0])
        sorted_by_freq_tuples.sort(key=lambda x: x[1], reverse=True)
        ordered_dict = OrderedDict(sorted_by_freq_tuples)

        if specials is not None:
            if special_first:
                specials = specials[::-1]
            for symbol in specials:
                ordered_dict.update({symbol: min_freq})
                ordered_dict.move_to_end(symbol, last=not special_first)

        word_vocab = torch_vocab.vocab(ordered_dict, min_freq=min_freq)
        return word_vocab

    @property
    def pad_token(self) -> Optional[str]:
        if getattr(self, "_pad_token", None) is None:
            self._pad_token = None
        return self._pad_token

    def save_json(self, file_path: Union[Path, str]) -> None:
        if isinstance(file_path, str):
            file_path = Path(file_path)
        with file_path.open("w") as f:
            json.dump(self.get_stoi(), f, indent=2)

    def set_default_token(self, default_token: str) -> None:
        if default_token not in self:
            raise ValueError(f"{default_token} is not in the vocabulary.")
        self.set_default_index(self[default_token])


def tokenize_batch(data: np.ndarray, gene_ids: np.ndarray, return_pt: bool = True, append_cls: bool = True,
                   include_zero_gene: bool = False, cls_id: int = "<cls>", mod_type: np.ndarray = None,
                   cls_id_mod_type: int = None) -> List[Tuple[Union[torch.Tensor, np.ndarray]]]:
    """
    Tokenize a batch of data. Returns a list of tuple (gene_id, count).
    Everything here happens on the host; tensors are moved to the GPU later by the training loop.
    """
    if data.shape[1] != len(gene_ids):
        raise ValueError(f"Number of features in data ({data.shape[1]}) does not match number of gene_ids ({len(gene_ids)}).")

    tokenized_data = []
    for i in range(len(data)):
        row = data[i]
        if include_zero_gene:
            values = row
            genes = gene_ids
        else:
            idx = np.nonzero(row)[0]
            values = row[idx]
            genes = gene_ids[idx]
        if append_cls:
            genes = np.insert(genes, 0, cls_id)
            values = np.insert(values, 0, 0)
        if return_pt:
            genes = torch.from_numpy(genes).long()
            values = torch.from_numpy(values).float()
        tokenized_data.append((genes, values))
    return tokenized_data


def pad_batch(batch: List[Tuple], max_len: int, vocab: Vocab, pad_token: str = "<pad>", pad_value: int = 0,
              cls_appended: bool = True) -> Dict[str, torch.Tensor]:
    """Pad a batch of data. Returns a dict of gene_ids and values (CPU tensors)."""
    max_ori_len = max(len(batch[i][0]) for i in range(len(batch)))
    max_len = min(max_ori_len, max_len)

    pad_id = vocab[pad_token]
    gene_ids_list = []
    values_list = []
    for i in range(len(batch)):
        gene_ids, values = batch[i]
        if len(gene_ids) > max_len:
            # sample max_len genes
            if not cls_appended:
                idx = np.random.choice(len(gene_ids), max_len, replace=False)
            else:
                idx = np.random.choice(len(gene_ids) - 1, max_len - 1, replace=False)
                idx = idx + 1
                idx = np.insert(idx, 0, 0)
            gene_ids = gene_ids[idx]
            values = values[idx]
        if len(gene_ids) < max_len:
            gene_ids = torch.cat([gene_ids, torch.full((max_len - len(gene_ids),), pad_id, dtype=gene_ids.dtype)])
            values = torch.cat([values, torch.full((max_len - len(values),), pad_value, dtype=values.dtype)])
        gene_ids_list.append(gene_ids)
        values_list.append(values)

    return {"genes": torch.stack(gene_ids_list, dim=0), "values": torch.stack(values_list, dim=0)}


def random_mask_value(values: Union[torch.Tensor, np.ndarray], mask_ratio: float = 0.15, mask_value: int = -1,
                      pad_value: int = 0) -> torch.Tensor:
    """
    Randomly mask a batch of data. Works on CPU tensors; callers move the result to cuda themselves.
    """
    if isinstance(values, torch.Tensor):
        # it is crutial to clone the tensor, otherwise it changes the original tensor
        values = values.clone().detach().numpy()
    else:
        values = values.copy()

    for i in range(len(values)):
        row = values[i]
        non_padding_idx = np.nonzero(row - pad_value)[0]
        n_mask = int(len(non_padding_idx) * mask_ratio)
        mask_idx = np.random.choice(non_padding_idx, n_mask, replace=False)
        row[mask_idx] = mask_value
    return torch.from_numpy(values).float()
