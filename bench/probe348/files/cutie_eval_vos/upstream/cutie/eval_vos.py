import os
from os import path
import logging
from time import perf_counter

import hydra
from omegaconf import DictConfig, open_dict
from hydra.core.hydra_config import HydraConfig
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm

from cutie.inference.data.vos_test_dataset import VOSTestDataset
from cutie.inference.data.burst_test_dataset import BURSTTestDataset
from cutie.inference.data.mask_mapper import MaskMapper
from cutie.model.cutie import CUTIE
from cutie.inference.inference_core import InferenceCore
from cutie.inference.utils.results_utils import ResultSaver, make_zip
from cutie.inference.utils.burst_utils import BURSTResultHandler
from cutie.inference.utils.args_utils import get_dataset_cfg

log = logging.getLogger()


def setup_device(cfg: DictConfig):
    """Returns (device, rank, world_size). Multi-GPU evaluation splits videos across ranks."""
    if cfg.distributed_eval:
        local_rank = int(os.environ['LOCAL_RANK'])
        dist.init_process_group(backend='nccl')
        torch.cuda.set_device(local_rank)
        return torch.device(f'cuda:{local_rank}'), dist.get_rank(), dist.get_world_size()
    return torch.device(cfg.device), 0, 1


@torch.inference_mode()
@hydra.main(version_base='1.3.2', config_path='config', config_name='eval_config.yaml')
def eval_vos(cfg: DictConfig):
    if cfg['output_dir'] is not None:
        run_dir = cfg['output_dir']
    else:
        run_dir = HydraConfig.get().run.dir
    log.info(f'All configuration: {cfg}')

    device, rank, world_size = setup_device(cfg)
    if device.type == 'cuda':
        log.info(f'Running on {torch.cuda.get_device_name(device)}')

    # Load the network weights
    cutie = CUTIE(cfg).to(device).eval()
    if cfg.weights is not None:
        model_weights = torch.load(cfg.weights, map_location=device)
        cutie.load_weights(model_weights)
    else:
        log.warning('No model weights loaded. Are you sure about this?')

    data_cfg = get_dataset_cfg(cfg)
    is_burst = ('burst' in cfg.dataset)

    # setup dataset
    image_dir, mask_dir = data_cfg.image_directory, data_cfg.mask_directory
    if is_burst:
        json_dir = data_cfg.json_directory
        size_dir = data_cfg.size_directory
        meta_dataset = BURSTTestDataset(image_dir, json_dir, size=data_cfg.size,
                                        skip_frames=data_cfg.skip_frames)
        burst_handler = BURSTResultHandler(meta_dataset.json)
    else:
        meta_dataset = VOSTestDataset(image_dir, mask_dir, use_all_masks=data_cfg.use_all_masks,
                                      req_frames_json=data_cfg.get('json_directory'),
                                      size=data_cfg.size, size_dir=data_cfg.get('size_directory'),
                                      subset=data_cfg.get('subset'))
    use_amp = cfg.amp and not cfg.benchmark

    # multi-GPU: every rank takes every world_size-th video
    meta_loader = meta_dataset.get_datasets()
    if world_size > 1:
        meta_loader = meta_loader[rank::world_size]

    total_process_time = 0
    total_frames = 0

    # Start eval
    pbar = tqdm(meta_loader, total=len(meta_loader), disable=(rank != 0))
    for vid_reader in pbar:

        loader = DataLoader(vid_reader, batch_size=1, shuffle=False, num_workers=4, pin_memory=True)
        vid_name = vid_reader.vid_name
        pbar.set_description(vid_name)
        vid_length = len(loader)

        try:
            processor = InferenceCore(cutie, cfg=cfg)
            saver = ResultSaver(path.join(run_dir, 'Annotations'), vid_name,
                                dataset=cfg.dataset, object_manager=processor.object_manager,
                                use_long_id=vid_reader.use_long_id, palette=vid_reader.get_palette(),
                                save_mask=True, save_scores=cfg.save_scores, score_output=path.join(run_dir, 'Scores'),
                                visualize=cfg.visualize, visualize_output=path.join(run_dir, 'Visualizations'),
                                init_json=burst_handler.json if is_burst else None)
            first_mask_loaded = False

            for ti, data in enumerate(loader):
                with torch.cuda.amp.autocast(enabled=use_amp):
                    image = data['rgb'].cuda()[0]
                    mask = data.get('mask')
                    if mask is not None:
                        mask = mask.cuda()[0]
                    valid_labels = data.get('valid_labels')
                    if valid_labels is not None:
                        valid_labels = valid_labels.tolist()[0]
                    info = data['info']
                    frame_name = info['frame'][0]
                    shape = info['shape']
                    resize_needed = info['resize_needed'][0]
                    path_to_image = info['path_to_image'][0]

                    if cfg.benchmark:
                        torch.cuda.synchronize()
                    start_time = perf_counter()

                    if not first_mask_loaded:
                        if mask is not None:
                            first_mask_loaded = True
                        else:
                            # no point to do anything without a mask
                            continue

                    if cfg.flip_aug:
                        image = torch.flip(image, dims=[-1])
                        mask = torch.flip(mask, dims=[-1]) if mask is not None else None

                    # Run the model on this frame
                    prob = processor.step(image, mask, valid_labels, end=(ti == vid_length - 1))

                    if cfg.flip_aug:
                        prob = torch.flip(prob, dims=[-1])

                    if cfg.benchmark:
                        torch.cuda.synchronize(device)
                    total_process_time += (perf_counter() - start_time)
                    total_frames += 1

                    if info['save'][0]:
                        saver.process(prob, frame_name, resize_needed=resize_needed,
                                      shape=shape, last_frame=(ti == vid_length - 1),
                                      path_to_image=path_to_image)

            saver.end()
            with open(path.join(run_dir, 'TIME.txt'), 'a') as f:
                f.write(f'{vid_name}\t{saver.total_process_time:.4f}\t{vid_length}\n')

        except Exception as e:
            log.error(f'Runtime error at {vid_name}')
            log.error(e)
            saver.end()
            raise e

    log.info(f'Total processing time: {total_process_time:.2f}s')
    log.info(f'Total processed frames: {total_frames}')
    log.info(f'FPS: {total_frames / total_process_time:.2f}')
    log.info(f'Max allocated memory (MB): {torch.cuda.max_memory_allocated() / (2**20):.1f}')

    if world_size > 1:
        dist.barrier()
        if rank != 0:
            return

    make_zip(cfg.dataset, run_dir, cfg.exp_id, path.join(run_dir, 'Annotations'))


if __name__ == '__main__':
    eval_vos()
