from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .custom import CustomDataset
from .s3dis import S3DISDataset
from .scannetv2 import ScanNetDataset
from .stpls3d import STPLS3DDataset
from .kitti import KITTIDataset

__all__ = [
    'CustomDataset', 'S3DISDataset', 'ScanNetDataset', 'STPLS3DDataset', 'KITTIDataset',
    'build_dataset', 'build_dataloader'
]

DATASETS = {
    's3dis': S3DISDataset,
    'scannetv2': ScanNetDataset,
    'stpls3d': STPLS3DDataset,
    'kitti': KITTIDataset,
}


def build_dataset(data_cfg, logger):
    assert 'type' in data_cfg
    _data_cfg = data_cfg.copy()
    _data_cfg['logger'] = logger
    data_type = _data_cfg.pop('type')
    if data_type not in DATASETS:
        raise ValueError(f'Unknown dataset type {data_type}')
    return DATASETS[data_type](**_data_cfg)


def build_dataloader(dataset,
                     batch_size=1,
                     num_workers=1,
                     training=True,
                     dist=False,
                     persistent_workers=True):
    """Build the loader; voxelization of each batch happens in ``dataset.collate_fn``.

    Batches are assembled on the host and copied to the GPU by ``@cuda_cast`` in the model,
    so the workers pin their output to make that copy asynchronous.
    """
    shuffle = training
    sampler = DistributedSampler(dataset, shuffle=shuffle) if dist else None
    if sampler is not None:
        shuffle = False
    if training:
        return DataLoader(
            dataset,
            batch_size=batch_size,
            num_workers=num_workers,
            collate_fn=dataset.collate_fn,
            shuffle=shuffle,
            sampler=sampler,
            drop_last=True,
            pin_memory=True,
            persistent_workers=persistent_workers and num_workers > 0)
    else:
        assert batch_size == 1
        return DataLoader(
            dataset,
            batch_size=batch_size,
            num_workers=num_workers,
            collate_fn=dataset.collate_fn,
            shuffle=False,
            sampler=sampler,
            drop_last=False,
            pin_memory=True)
