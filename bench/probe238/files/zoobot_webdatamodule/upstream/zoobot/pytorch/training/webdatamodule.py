import os
import logging
from functools import partial
from itertools import islice

import torch
import lightning as L
import webdataset as wds

from galaxy_datasets.transforms import default_transforms

from zoobot.pytorch.datasets import webdatamodule_utils


class WebDataModule(L.LightningDataModule):
    """
    LightningDataModule streaming galaxy images + vote counts from webdataset tar shards.

    Shards are made with zoobot.pytorch.datasets.webdataset_utils.df_to_wds, one jpg + one json of labels per galaxy.
    On the cluster we keep shards on local NVMe scratch (see cache_dir) because the shared filesystem
    can't keep 8x A100 fed at batch 256.
    """

    def __init__(
        self,
        train_urls=None,
        val_urls=None,
        test_urls=None,
        predict_urls=None,
        label_cols=None,
        # hardware
        batch_size=64,
        num_workers=4,
        prefetch_factor=4,
        cache_dir=None,
        # augmentation args
        color=False,
        crop_scale_bounds=(0.7, 0.8),
        crop_ratio_bounds=(0.9, 1.1),
        resize_after_crop=224,
        train_transform=None,
        inference_transform=None,
    ):
        super().__init__()

        self.train_urls = train_urls
        self.val_urls = val_urls
        self.test_urls = test_urls
        self.predict_urls = predict_urls

        if train_urls is not None:
            # assume the size of each shard is encoded in the filename as ..._{size}.tar
            self.train_size = interpret_dataset_size_from_urls(train_urls)
        if val_urls is not None:
            self.val_size = interpret_dataset_size_from_urls(val_urls)
        if test_urls is not None:
            self.test_size = interpret_dataset_size_from_urls(test_urls)
        if predict_urls is not None:
            self.predict_size = interpret_dataset_size_from_urls(predict_urls)

        self.label_cols = label_cols

        self.batch_size = batch_size
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor

        self.cache_dir = cache_dir

        # could use mixin
        self.color = color
        self.resize_after_crop = resize_after_crop
        self.crop_scale_bounds = crop_scale_bounds
        self.crop_ratio_bounds = crop_ratio_bounds

        if train_transform is None:
            logging.info('Using default transform')
            self.train_transform = self.make_image_transform(mode='train')
        else:
            logging.info('Ignoring other arguments to WebDataModule and using directly-passed transforms')
            self.train_transform = train_transform
        if inference_transform is None:
            self.inference_transform = self.make_image_transform(mode='val')
        else:
            self.inference_transform = inference_transform

        for url_name in ['train', 'val', 'test', 'predict']:
            urls = getattr(self, f'{url_name}_urls')
            if urls is not None:
                logging.info(f"{url_name} (before hardware splits) = {len(urls)} e.g. {urls[0]}", )

        logging.info(f"batch_size: {self.batch_size}, num_workers: {self.num_workers}")

    def make_image_transform(self, mode="train"):
        augmentation_transform = default_transforms(
            crop_scale_bounds=self.crop_scale_bounds,
            crop_ratio_bounds=self.crop_ratio_bounds,
            resize_after_crop=self.resize_after_crop,
            pytorch_greyscale=not self.color,
            to_float=False,  # True was wrong, webdataset rgb decoder already converts to 0-1 float
            # TODO now changed on dev branch will be different for new model training runs
        )  # A.Compose object

        # logging.warning('Minimal augmentations for speed test')
        # augmentation_transform = transforms.fast_transform(
        #     resize_after_crop=self.resize_after_crop,
        #     pytorch_greyscale=not self.color
        # )  # A.Compose object

        def do_transform(img):
            # img is 0-1 np array, intended for albumentations
            assert img.shape[2] < 4  # 1 or 3 channels in shape[2] dim, i.e. numpy/pil/albumentations convention
            # return np.transpose(augmentation_transform(image=np.array(img))["image"], axes=[2, 0, 1]).astype(np.float32)
            # torchvision, not albumentations
            return augmentation_transform(torch.from_numpy(img).permute(2, 0, 1))  # to CHW
        return do_transform

    def make_label_transform(self):
        if self.label_cols is not None:
            def label_transform(label_dict):
                return torch.from_numpy(webdatamodule_utils.label_dict_to_arr(label_dict, self.label_cols)).float()
            return label_transform
        else:
            return identity  # do nothing

    def make_loader(self, urls, mode="train"):
        logging.info('Making loader with mode {}'.format(mode))

        dataset_size = getattr(self, f'{mode}_size')
        if mode == "train":
            shuffle = min(dataset_size, 5000)
        else:
            assert mode in ['val', 'test', 'predict'], mode
            shuffle = 0

        transform_image = self.train_transform if mode == 'train' else self.inference_transform

        transform_label = self.make_label_transform()

        dataset = wds.WebDataset(urls, cache_dir=self.cache_dir, shardshuffle=shuffle > 0, nodesplitter=nodesplitter_func)
        # https://webdataset.github.io/webdataset/multinode/
        # WDS 'knows' which worker it is running on and selects a subset of urls accordingly

        if shuffle > 0:
            dataset = dataset.shuffle(shuffle)

        dataset = dataset.decode("rgb")

        if mode == 'predict':
            if self.label_cols != ['id_str']:
                logging.info('Will return images only')
                # dataset = dataset.extract_keys('image.jpg').map(transform_image)
                dataset = dataset.to_tuple('image.jpg').map_tuple(transform_image)  # (im,) tuple. But map applied to all elements
                # .map(get_first)
            else:
                logging.info('Will return id_str only')
                dataset = dataset.to_tuple('__key__')
        else:
            dataset = (
                dataset.to_tuple('image.jpg', 'labels.json')
                .map_tuple(transform_image, transform_label)
            )

        # torch collate stacks dicts nicely while webdataset only lists them
        # so use the torch collate instead
        dataset = dataset.batched(self.batch_size, torch.utils.data.default_collate, partial=False)

        # temp hack instead
        if mode in ['train', 'val']:
            assert dataset_size % self.batch_size == 0, (dataset_size, self.batch_size, dataset_size % self.batch_size)
        # for test/predict, always single GPU anyway

        # if mode == 'train':
        # ensure same number of batches in all clients
        # loader = loader.ddp_equalize(dataset_size // self.batch_size)
        # print("# loader length", len(loader))

        loader = wds.WebLoader(
            dataset,
            batch_size=None,  # already batched
            shuffle=False,  # already shuffled
            num_workers=self.num_workers,
            pin_memory=True,
            prefetch_factor=self.prefetch_factor
        )

        loader.length = dataset_size // self.batch_size

        # if mode == 'train':
        #     # ensure same number of batches in all clients
        #     loader = loader.ddp_equalize(dataset_size // self.batch_size)

        return loader

    def train_dataloader(self):
        return self.make_loader(self.train_urls, mode="train")

    def val_dataloader(self):
        return self.make_loader(self.val_urls, mode="val")

    def test_dataloader(self):
        return self.make_loader(self.test_urls, mode="test")

    def predict_dataloader(self):
        return self.make_loader(self.predict_urls, mode="predict")


def nodesplitter_func(urls):  # SimpleShardList
    # print(urls)
    try:
        node_id, node_count = torch.distributed.get_rank(), torch.distributed.get_world_size()
        urls_to_use = list(urls)[node_id::node_count]
        logging.info(f'id: {node_id}, of count {node_count}. \nURLS: {len(urls_to_use)} of {len(urls)} ({urls_to_use})\n\n')
        return urls_to_use
    except RuntimeError:
        # print('Distributed not initialised. Hopefully single node.')
        return urls


def interpret_shard_size_from_url(url):
    assert isinstance(url, str), TypeError(url)
    return int(url.rstrip('.tar').split('_')[-1])


def interpret_dataset_size_from_urls(urls):
    return sum([interpret_shard_size_from_url(url) for url in urls])


def get_first(x):
    return x[0]


def custom_collate(x):
    if isinstance(x, list) and len(x) == 1:
        x = x[0]
    return torch.utils.data.default_collate(x)


def identity(x):
    # no lambda to be pickleable
    return x


def peek(urls, n=4):
    """Debug helper: print the first few samples of a shard list without touching the GPU."""
    dataset = wds.WebDataset(urls).decode("rgb").to_tuple('image.jpg', 'labels.json')
    for im, label in islice(dataset, n):
        print(im.shape, im.dtype, label)
