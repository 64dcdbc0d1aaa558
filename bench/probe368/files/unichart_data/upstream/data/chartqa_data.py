import json
import os
import random
from typing import Any, List, Tuple

import torch
from PIL import Image
from torch.utils.data import Dataset

added_tokens = []


class ChartQADataset(Dataset):
    """
    ChartQA dataset for UniChart fine-tuning. Each sample yields the chart image
    as pixel values plus the tokenized "<chartqa> question <s_answer> answer</s>" sequence.
    Image decoding and tokenization happen on the CPU inside DataLoader workers.
    """

    def __init__(
        self,
        dataset: str,
        images_folder: str,
        max_length: int,
        processor: Any = None,
        split: str = "train",
        ignore_id: int = -100,
        prompt_end_token: str = None,
        task_prefix: str = '<chartqa>',
        sort_json_key: bool = True,
    ):
        super().__init__()

        self.max_length = max_length
        self.split = split
        self.ignore_id = ignore_id

        self.prompt_end_token = prompt_end_token
        self.sort_json_key = sort_json_key
        self.images_folder = images_folder

        self.dataset = dataset
        self.dataset_length = len(self.dataset)

        self.processor = processor
        self.prompt_end_token_id = self.processor.tokenizer.convert_tokens_to_ids(self.prompt_end_token)
        self.task_prefix = task_prefix

    def __len__(self) -> int:
        return self.dataset_length

    def __getitem__(self, idx: int):

        sample = self.dataset[idx]

        # input_tensor
        img_path = os.path.join(self.images_folder, sample['imgname'])
        img = Image.open(img_path)
        pixel_values = self.processor(img.convert("RGB"), random_padding=self.split == "train",
                                      return_tensors="pt").pixel_values
        input_tensor = pixel_values.squeeze()

        # input_ids
        processed_parse = self.task_prefix + " " + sample['query'] + " " + self.prompt_end_token + " " + \
            sample['label'] + self.processor.tokenizer.eos_token
        input_ids = self.processor.tokenizer(
            processed_parse,
            add_special_tokens=False,
            max_length=self.max_length,
            padding="max_length",
            truncation=True,
            return_tensors="pt",
        )["input_ids"].squeeze(0)

        if self.split == "train":
            labels = input_ids.clone()
            labels[
                labels == self.processor.tokenizer.pad_token_id
            ] = self.ignore_id  # model doesn't need to predict pad token
            labels[
                : torch.nonzero(labels == self.prompt_end_token_id).sum() + 1
            ] = self.ignore_id  # model doesn't need to predict prompt
            return input_tensor, input_ids, labels
        else:
            prompt_end_index = torch.nonzero(
                input_ids == self.prompt_end_token_id
            ).sum()  # return prompt end index instead of target output labels
            return input_tensor, input_ids, prompt_end_index, processed_parse


class ChartToTableDataset(ChartQADataset):
    """
    Chart-to-table ("<extract_data_table>") variant used for the summarization /
    data-table extraction tasks. The target is the linearized table string.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("task_prefix", "<extract_data_table>")
        super().__init__(*args, **kwargs)

    def __getitem__(self, idx: int):
        sample = self.dataset[idx]
        img_path = os.path.join(self.images_folder, sample['imgname'])
        img = Image.open(img_path)
        pixel_values = self.processor(img.convert("RGB"), random_padding=self.split == "train",
                                      return_tensors="pt").pixel_values
        input_tensor = pixel_values.squeeze()

        processed_parse = self.task_prefix + " " + self.prompt_end_token + " " + \
            sample['table'].replace("\n", " & ") + self.processor.tokenizer.eos_token
        input_ids = self.processor.tokenizer(
            processed_parse, add_special_tokens=False, max_length=self.max_length,
            padding="max_length", truncation=True, return_tensors="pt",
        )["input_ids"].squeeze(0)

        if self.split == "train":
            labels = input_ids.clone()
            labels[labels == self.processor.tokenizer.pad_token_id] = self.ignore_id
            labels[: torch.nonzero(labels == self.prompt_end_token_id).sum() + 1] = self.ignore_id
            return input_tensor, input_ids, labels
        prompt_end_index = torch.nonzero(input_ids == self.prompt_end_token_id).sum()
        return input_tensor, input_ids, prompt_end_index, processed_parse
