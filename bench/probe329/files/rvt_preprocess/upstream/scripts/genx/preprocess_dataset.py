"""
Preprocess the Gen1 / 1Mpx (Prophesee GenX) automotive detection datasets.

For every sequence the raw .dat/.h5 events are sliced into fixed-duration windows and converted to
stacked histograms ("ev_repr") which are written, together with the timestamps, to a compressed h5 file.
The histogram construction runs on the GPU (one worker process per GPU, sequences are assigned round-robin);
use --device cpu on machines without a GPU (about 15x slower on 1Mpx).

    python preprocess_dataset.py /data/gen1 /data/gen1_preprocessed conf_preprocess/representation/stacked_hist.yaml \
        conf_preprocess/extraction/const_duration.yaml conf_preprocess/filter_gen1.yaml -ds gen1 -np 8
"""
import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse
import shutil
import sys
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import h5py
import hdf5plugin
import numpy as np
import torch
import torch.multiprocessing as mp
from omegaconf import OmegaConf, DictConfig, MISSING
from tqdm import tqdm

sys.path.append(str(Path(__file__).parent.parent.parent))

from utils.preprocessing import _blosc_opts  # noqa: E402
from data.utils.representations import StackedHistogram, MixedDensityEventStack  # noqa: E402
from scripts.genx.genx_readers import PSEELoader, H5Reader  # noqa: E402


class DataKeys(Enum):
    InNPY = auto()
    InH5 = auto()
    OutLabelDir = auto()
    OutEvReprDir = auto()
    SplitType = auto()


class SplitType(Enum):
    TRAIN = auto()
    VAL = auto()
    TEST = auto()


split_name_2_type = {
    'train': SplitType.TRAIN,
    'val': SplitType.VAL,
    'test': SplitType.TEST,
}

dataset_2_height = {'gen1': 240, 'gen4': 720}
dataset_2_width = {'gen1': 304, 'gen4': 1280}
# The following sequences would be discarded because all the labels would be removed after filtering:
dirs_to_ignore = {
    'gen1': ('17-04-06_09-57-37_6344500000_6404500000',
             '17-04-13_19-16-30_3172500000_3232500000',),
    'gen4': (),
}


@dataclass
class StackedHistogramConfig:
    name: str = 'stacked_histogram'
    nbins: int = MISSING
    count_cutoff: Optional[int] = MISSING
    event_window_extraction: Dict[str, Any] = field(default_factory=dict)
    fastmode: bool = True


def get_default_device() -> str:
    return 'cuda' if torch.cuda.is_available() else 'cpu'


class H5Writer:
    def __init__(self, outfile: Path, key: str, ev_repr_shape: Tuple, numpy_dtype: np.dtype):
        assert len(ev_repr_shape) == 3
        self.h5f = h5py.File(str(outfile), 'w')
        self.key = key
        self.numpy_dtype = numpy_dtype

        # create hdf5 datasets
        maxshape = (None,) + ev_repr_shape
        chunkshape = (1,) + ev_repr_shape
        self.maxshape = maxshape
        self.h5f.create_dataset(key, dtype=self.numpy_dtype.name, shape=chunkshape, chunks=chunkshape,
                                maxshape=maxshape, **_blosc_opts(complevel=1, shuffle='byte'))
        self.t_idx = 0

    def add_data(self, data: np.ndarray):
        assert data.dtype == self.numpy_dtype, f'{data.dtype=}, {self.numpy_dtype=}'
        new_size = self.t_idx + 1
        self.h5f[self.key].resize(new_size, axis=0)
        self.h5f[self.key][self.t_idx:new_size] = data
        self.t_idx = new_size

    def close(self):
        self.h5f.close()


def construct_ev_repr(ev_repr: StackedHistogram, events: Dict[str, np.ndarray], device: torch.device) -> torch.Tensor:
    x = torch.from_numpy(events['x'].astype('int64')).to(device, non_blocking=True)
    y = torch.from_numpy(events['y'].astype('int64')).to(device, non_blocking=True)
    p = torch.from_numpy(events['p'].astype('int64')).to(device, non_blocking=True)
    t = torch.from_numpy(events['t'].astype('int64')).to(device, non_blocking=True)
    return ev_repr.construct(x=x, y=y, pol=p, time=t)


def process_sequence(dataset: str,
                     filter_config: DictConfig,
                     mode: SplitType,
                     readpath: Path,
                     npy_file: Path,
                     out_labels_dir: Path,
                     out_ev_repr_dir: Path,
                     ev_repr_cfg: StackedHistogramConfig,
                     ts_step_ev_repr_ms: int,
                     device: torch.device):
    height = dataset_2_height[dataset]
    width = dataset_2_width[dataset]

    # labels ------------------------------------------------------------------------------------
    labels = np.load(str(npy_file))
    labels = labels[labels['w'] * labels['h'] >= filter_config.min_box_area]
    out_labels_dir.mkdir(parents=True, exist_ok=True)
    np.savez(str(out_labels_dir / 'labels.npz'), labels=labels)

    # event representation ----------------------------------------------------------------------
    ev_repr = StackedHistogram(bins=ev_repr_cfg.nbins,
                               height=height,
                               width=width,
                               count_cutoff=ev_repr_cfg.count_cutoff,
                               fastmode=ev_repr_cfg.fastmode)
    out_ev_repr_dir.mkdir(parents=True, exist_ok=True)
    writer = H5Writer(out_ev_repr_dir / 'event_representations.h5',
                      key='data',
                      ev_repr_shape=ev_repr.get_shape(),
                      numpy_dtype=np.dtype('uint8'))

    reader = H5Reader(readpath, height=height, width=width) if readpath.suffix == '.h5' else PSEELoader(str(readpath))
    t_start_us = reader.start_time_us()
    t_end_us = reader.end_time_us()
    ts_step_us = ts_step_ev_repr_ms * 1000
    timestamps_us = np.arange(t_start_us + ts_step_us, t_end_us, ts_step_us, dtype='int64')

    with torch.no_grad():
        for ts_us in timestamps_us:
            events = reader.get_events_between(ts_us - ts_step_us, ts_us)
            ev_tensor = construct_ev_repr(ev_repr, events, device)
            writer.add_data(ev_tensor.to(torch.uint8).cpu().numpy())

    writer.close()
    np.save(str(out_ev_repr_dir / 'timestamps_us.npy'), timestamps_us)
    return len(timestamps_us)


def worker(rank: int, world: int, jobs: List[Dict], common: Dict):
    if common['device'] == 'cuda':
        torch.cuda.set_device(rank)
        device = torch.device(f'cuda:{rank}')
    else:
        device = torch.device('cpu')
    my_jobs = jobs[rank::world]
    pbar = tqdm(my_jobs, position=rank, desc=f'worker {rank} ({device})')
    for job in pbar:
        n = process_sequence(device=device, **job, **{k: v for k, v in common.items() if k != 'device'})
        pbar.set_postfix(windows=n)
        if device.type == 'cuda':
            torch.cuda.empty_cache()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('input_dir')
    parser.add_argument('target_dir')
    parser.add_argument('ev_repr_yaml_config', help='Path to event representation yaml config file')
    parser.add_argument('extraction_yaml_config', help='Path to event window extraction yaml config file')
    parser.add_argument('bbox_filter_yaml_config', help='Path to bbox filter yaml config file')
    parser.add_argument('-ds', '--dataset', default='gen1', help='gen1 or gen4')
    parser.add_argument('-np', '--num_processes', type=int, default=1,
                        help='Number of worker processes (capped at the number of GPUs when --device cuda)')
    parser.add_argument('--device', default=get_default_device(), choices=['cuda', 'cpu'])
    args = parser.parse_args()

    num_processes = args.num_processes
    if args.device == 'cuda':
        num_processes = min(num_processes, torch.cuda.device_count())
        assert num_processes > 0, 'no visible CUDA device'

    dataset = args.dataset
    assert dataset in ('gen1', 'gen4')

    config = OmegaConf.merge(OmegaConf.structured(StackedHistogramConfig),
                             OmegaConf.load(args.ev_repr_yaml_config),
                             OmegaConf.load(args.extraction_yaml_config))
    filter_config = OmegaConf.load(args.bbox_filter_yaml_config)
    ts_step_ev_repr_ms = config.event_window_extraction.value

    input_dir = Path(args.input_dir)
    train_path = input_dir / 'train'
    val_path = input_dir / 'val'
    test_path = input_dir / 'test'
    target_dir = Path(args.target_dir)
    os.makedirs(target_dir, exist_ok=True)
    assert target_dir.is_dir()

    jobs = []
    for split in [train_path, val_path, test_path]:
        split_out = target_dir / split.name
        for npy_file in sorted(split.iterdir()):
            if npy_file.suffix != '.npy':
                continue
            dirname = npy_file.stem.replace('_bbox', '')
            if dirname in dirs_to_ignore[dataset]:
                continue
            ev_file = npy_file.parent / (dirname + '_td.dat')
            if not ev_file.exists():
                ev_file = npy_file.parent / (dirname + '_td.h5')
            out_seq_dir = split_out / dirname
            jobs.append(dict(mode=split_name_2_type[split.name],
                             readpath=ev_file,
                             npy_file=npy_file,
                             out_labels_dir=out_seq_dir / 'labels_v2',
                             out_ev_repr_dir=out_seq_dir / 'event_representations_v2' / f'stacked_histogram_dt={ts_step_ev_repr_ms}_nbins={config.nbins}'))

    common = dict(dataset=dataset, filter_config=filter_config, ev_repr_cfg=config,
                  ts_step_ev_repr_ms=ts_step_ev_repr_ms, device=args.device)
    print(f'{len(jobs)} sequences, {num_processes} worker(s) on {args.device}')
    if num_processes > 1:
        mp.set_start_method('spawn', force=True)
        mp.spawn(worker, args=(num_processes, jobs, common), nprocs=num_processes, join=True)
    else:
        worker(0, 1, jobs, common)
