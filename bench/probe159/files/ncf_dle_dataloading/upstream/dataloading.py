# Copyright (c) 2018, deepakn94, robieta. All rights reserved.
# Copyright (c) 2019-2021, NVIDIA CORPORATION. All rights reserved.
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

import os
import torch
from feature_spec import FeatureSpec
from neumf_constants import USER_CHANNEL_NAME, ITEM_CHANNEL_NAME, LABEL_CHANNEL_NAME, TEST_SAMPLES_PER_SERIES


class TorchTensorDataset:
    """ Warning! This dataset/loader uses torch.load. Torch.load implicitly uses pickle. Pickle is insecure.
    It is trivial to achieve arbitrary code execution using a prepared pickle payload. Only unpickle data you trust."""

    def __init__(self, feature_spec: FeatureSpec, mapping_name: str, args):
        self.local_rank = args.local_rank
        self.mapping_name = mapping_name
        self.features = dict()
        self.feature_spec = feature_spec
        self._load_features()

    def _load_features(self):
        chunks = self.feature_spec.source_spec[self.mapping_name]
        for chunk in chunks:
            assert chunk['type'] == 'torch_tensor', "Only torch_tensor files supported in this loader"
            files_list = chunk['files']
            assert len(files_list) == 1, "Only one file per chunk supported in this loader"
            file_relative_path = files_list[0]
            path_to_load = os.path.join(self.feature_spec.base_directory, file_relative_path)
            chunk_data = torch.load(path_to_load, map_location=torch.device('cuda:{}'.format(self.local_rank)))
            running_pos = 0
            for feature_name in chunk['features']:
                next_running_pos = running_pos + 1
                feature_data = chunk_data[:, running_pos:next_running_pos]
                # This is needed because slicing instead of permuting makes the data non-contiguous
                feature_data = feature_data.contiguous()
                self.features[feature_name] = feature_data
                running_pos += 1

    def __len__(self):
        return len(self.features[list(self.features.keys())[0]])


class TestDataLoader:
    def __init__(self, dataset: TorchTensorDataset, args):
        self.dataset = dataset
        self.feature_spec = dataset.feature_spec
        self.channel_spec = self.feature_spec.channel_spec
        self.samples_in_series = self.feature_spec.metadata[TEST_SAMPLES_PER_SERIES]
        self.raw_dataset_length = None  # First feature loaded sets this. Total length before splitting across cards
        self.data = dict()
        self.world_size = args.world_size
        self.local_rank = args.local_rank
        self.batch_size = args.valid_batch_size

        self._build_channel_dict()
        self._deduplication_augmentation()
        self._split_between_devices()
        self._split_into_batches()

    def _build_channel_dict(self):
        for channel_name, channel_features in self.channel_spec.items():
            channel_tensors = dict()
            for feature_name in channel_features:
                channel_tensors[feature_name] = self.dataset.features[feature_name]

                if not self.raw_dataset_length:
                    self.raw_dataset_length = channel_tensors[feature_name].shape[0]
                else:
                    assert self.raw_dataset_length == channel_tensors[feature_name].shape[0]

            self.data[channel_name] = channel_tensors

    def _deduplication_augmentation(self):
        # Augmentation
        # This adds a duplication mask tensor.
        # This is here to exactly replicate the MLPerf training regime. Moving this deduplication to the candidate item
        # generation stage increases the real diversity of the candidates, which makes the ranking task harder
        # and results in a drop in HR@10 of approx 0.01. This has been deemed unacceptable (May 2021).

        # We need the duplication mask to determine if a given item should be skipped during ranking
        # If an item with label 1 is duplicated in the sampled ones, we need to skip all duplicates.
        # If an item with label 0 is duplicated, we need to skip all duplicates except one.
        # To easily compute candidates, we sort the items. This will impact the distribution of examples between
        # batches, but the final result will be unchanged.
        items_channel_name = ITEM_CHANNEL_NAME
        items_feature_name = self.channel_spec[items_channel_name][0]  # Works because there's only one item feature
        items = self.data[items_channel_name][items_feature_name].view(-1, self.samples_in_series)

        label_channel_name = LABEL_CHANNEL_NAME
        label_feature_name = self.channel_spec[label_channel_name][0]  # Works because there's only one label feature
        labels = self.data[label_channel_name][label_feature_name].view(-1, self.samples_in_series)

        sorted_items, indices = torch.sort(items)  # index of each sorted element in the original sequence
        sum_item_indices = sorted_items.float() + indices.float() / len(indices[0])  # Higher index => higher sum
        indices_order = torch.sort(sum_item_indices)[1]  # Each duplicate is now sorted by index
        sorted_items = torch.gather(sorted_items, 1, indices_order)  # Sorted items is now ordered by (item, index)
        # indices tell us where each element came from in the original sequence, gather them back
        indices = torch.gather(indices, 1, indices_order)

        # Elements equal to the previous element are marked as duplicates
        dup_mask = (sorted_items[:, 0:-1] == sorted_items[:, 1:])
        dup_mask = dup_mask.type(torch.bool)
        # The first element is never a duplicate
        dup_mask = torch.cat((torch.zeros_like(dup_mask[:, 0:1]), dup_mask), dim=1)
        # Reverse the mapping so every element is back at its original place
        _, indices = torch.sort(indices)
        dup_mask = torch.gather(dup_mask, 1, indices)

        # The positive item must never be ignored; every duplicate of it is removed from the negatives
        positive_items = items[:, 0:1].expand_as(items)
        positive_dups = (items == positive_items) & (labels == 0)
        ignore_mask = dup_mask | positive_dups

        self.data[LABEL_CHANNEL_NAME]['__mask__'] = ignore_mask.view(-1)

    def get_ignore_mask(self):
        return self.data[LABEL_CHANNEL_NAME]['__mask__']

    def _split_between_devices(self):
        if self.world_size > 1:
            # DO NOT REPLACE WITH torch.chunk (number of returned chunks can be lower than requested).
            # This is here to keep compatibility with the distributed evaluation in the MLPerf reference.
            series_num = self.raw_dataset_length // self.samples_in_series
            samples_per_card = (series_num // self.world_size) * self.samples_in_series
            bigger_cards = (series_num % self.world_size)
            examples_per_card = [samples_per_card + self.samples_in_series] * bigger_cards + \
                                [samples_per_card] * (self.world_size - bigger_cards)
            for channel, channel_dict in self.data.items():
                for feature, feature_tensor in channel_dict.items():
                    channel_dict[feature] = \
                        channel_dict[feature].view(-1).split(examples_per_card)[self.local_rank].view(-1, 1)

    def _split_into_batches(self):
        self.batches = None
        # This is the structure of each batch, waiting to be copied and filled in with data
        for channel, channel_dict in self.data.items():
            for feature, feature_tensor in channel_dict.items():
                feature_batches = feature_tensor.view(-1).split(self.batch_size)
                if not self.batches:
                    self.batches = list(
                        {channel_name: dict() for channel_name in self.data.keys()} for _ in feature_batches)
                for pos, feature_batch_data in enumerate(feature_batches):
                    self.batches[pos][channel][feature] = feature_batch_data

    def get_epoch_data(self):
        return self.batches


class TrainDataloader:
    def __init__(self, dataset: TorchTensorDataset, args):
        self.dataset = dataset
        self.local_rank = args.local_rank
        if args.distributed:
            self.local_batch = args.batch_size // args.world_size
        else:
            self.local_batch = args.batch_size

        self.feature_spec = dataset.feature_spec
        self.channel_spec = self.feature_spec.channel_spec
        self.negative_samples = args.negative_samples

        self.data = dict()
        self.raw_dataset_length = None  # first feature loaded sets this
        self._build_channel_dict()
        self.length_after_augmentation = self.raw_dataset_length * (self.negative_samples + 1)
        samples_per_worker = self.length_after_augmentation / args.world_size
        self.samples_begin = int(samples_per_worker * args.local_rank)
        self.samples_end = int(samples_per_worker * (args.local_rank + 1))

    def _build_channel_dict(self):
        for channel_name, channel_features in self.channel_spec.items():
            channel_tensors = dict()
            for feature_name in channel_features:
                channel_tensors[feature_name] = self.dataset.features[feature_name]
                if not self.raw_dataset_length:
                    self.raw_dataset_length = channel_tensors[feature_name].shape[0]
                else:
                    assert self.raw_dataset_length == channel_tensors[feature_name].shape[0]
            self.data[channel_name] = channel_tensors

    def get_epoch_data(self):

        # Augment, appending args.negative_samples times the same data but with the item replaced by a random one,
        # and the label set to zero
        epoch_data = {channel_name: dict() for channel_name in self.data.keys()}

        # Users: repeat each positive interaction (negative_samples + 1) times
        user_feature_name = self.channel_spec[USER_CHANNEL_NAME][0]
        user_features = self.data[USER_CHANNEL_NAME][user_feature_name]
        epoch_data[USER_CHANNEL_NAME][user_feature_name] = user_features.repeat(self.negative_samples + 1, 1)

        # Items: the original positive ones followed by uniformly sampled negatives, generated directly on the GPU
        item_feature_name = self.channel_spec[ITEM_CHANNEL_NAME][0]
        item_features = self.data[ITEM_CHANNEL_NAME][item_feature_name]
        nb_items = self.feature_spec.feature_spec[item_feature_name]['cardinality']
        neg_items = torch.randint(low=0, high=nb_items, size=(self.raw_dataset_length * self.negative_samples, 1),
                                  dtype=item_features.dtype, device=self.local_rank)
        epoch_data[ITEM_CHANNEL_NAME][item_feature_name] = torch.cat((item_features, neg_items))

        # Labels: ones for the positives, zeros for the sampled negatives
        label_feature_name = self.channel_spec[LABEL_CHANNEL_NAME][0]
        label_features = self.data[LABEL_CHANNEL_NAME][label_feature_name]
        neg_labels = torch.zeros((self.raw_dataset_length * self.negative_samples, 1),
                                 dtype=label_features.dtype, device='cuda:{}'.format(self.local_rank))
        epoch_data[LABEL_CHANNEL_NAME][label_feature_name] = torch.cat((label_features, neg_labels))

        # Shuffle, then keep this worker's contiguous slice
        permutation = torch.randperm(self.length_after_augmentation, device='cuda:{}'.format(self.local_rank))
        permutation = permutation[self.samples_begin:self.samples_end]
        for channel, channel_dict in epoch_data.items():
            for feature, feature_tensor in channel_dict.items():
                channel_dict[feature] = feature_tensor[permutation]

        # Split into batches; the last, possibly smaller batch is kept
        num_batches = (len(permutation) + self.local_batch - 1) // self.local_batch
        batches = [{channel_name: dict() for channel_name in epoch_data.keys()} for _ in range(num_batches)]
        for channel, channel_dict in epoch_data.items():
            for feature, feature_tensor in channel_dict.items():
                for pos, feature_batch in enumerate(feature_tensor.split(self.local_batch)):
                    batches[pos][channel][feature] = feature_batch

        return batches
