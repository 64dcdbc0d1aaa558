# Copyright (c) 2021, Hitachi America Ltd. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from typing import Dict, List

import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler

FEATURE_KEYS = ('input_ids', 'attention_mask', 'token_type_ids', 'class_labels', 'span_labels', 'p_mask',
                'is_impossible')


class ContractNLIDataset(Dataset):
    """Wraps the list of features produced by ``convert_examples_to_features``.

    Every feature is one window (``max_seq_length`` tokens, stride ``doc_stride``) of a contract paired with
    one of the 17 hypotheses. Windows are kept on the host; the trainer moves each collated batch to the
    accelerator.
    """

    def __init__(self, features, evaluate: bool = False):
        self.features = features
        self.evaluate = evaluate

    def __len__(self):
        return len(self.features)

    def __getitem__(self, idx) -> Dict[str, torch.Tensor]:
        f = self.features[idx]
        item = {
            'input_ids': torch.tensor(f.input_ids, dtype=torch.long),
            'attention_mask': torch.tensor(f.attention_mask, dtype=torch.long),
            'token_type_ids': torch.tensor(f.token_type_ids, dtype=torch.long),
            'p_mask': torch.tensor(f.p_mask, dtype=torch.long),
        }
        if self.evaluate:
            item['feature_indices'] = torch.tensor(idx, dtype=torch.long)
        item['class_labels'] = torch.tensor(f.class_label, dtype=torch.long)
        item['span_labels'] = torch.tensor(f.span_labels, dtype=torch.long)
        item['is_impossible'] = torch.tensor(f.is_impossible, dtype=torch.float)
        return item


def collate_features(batch: List[Dict[str, torch.Tensor]]) -> Dict[str, torch.Tensor]:
    keys = batch[0].keys()
    out = {}
    for k in keys:
        out[k] = torch.stack([b[k] for b in batch], dim=0)
    # DeBERTa-v2 does not use segment ids; the model simply ignores them
    return out


def build_dataloader(dataset: Dataset, batch_size: int, shuffle: bool, distributed: bool,
                     num_workers: int = 4) -> DataLoader:
    if distributed:
        sampler = DistributedSampler(dataset, shuffle=shuffle)
    elif shuffle:
        sampler = RandomSampler(dataset)
    else:
        sampler = SequentialSampler(dataset)
    return DataLoader(
        dataset,
        sampler=sampler,
        batch_size=batch_size,
        collate_fn=collate_features,
        num_workers=num_workers,
        pin_memory=True,
        drop_last=False,
    )


def class_distribution(dataset: ContractNLIDataset) -> Dict[str, int]:
    names = ['Entailment', 'Contradiction', 'NotMentioned']
    counts = {n: 0 for n in names}
    for f in dataset.features:
        counts[names[f.class_label]] += 1
    return counts
