import os.path as osp
import pickle
import shutil
import tempfile
import time

import mmcv
import numpy as np
import torch
import torch.distributed as dist
from mmcv.image import tensor2imgs
from mmcv.runner import get_dist_info

from mmdet.utils import get_root_logger
from projects.occ_plugin.utils.formating import cm_to_ious, format_SC_results, format_SSC_results


def custom_single_gpu_test(model, data_loader, show=False, out_dir=None, show_score_thr=0.3):
    model.eval()

    SC_metric = 0
    SSC_metric = 0
    SSC_metric_fine = 0
    dataset = data_loader.dataset
    prog_bar = mmcv.ProgressBar(len(dataset))

    logger = get_root_logger()
    for i, data in enumerate(data_loader):
        with torch.no_grad():
            result = model(return_loss=False, rescale=True, **data)

        if 'SC_metric' in result.keys():
            SC_metric += result['SC_metric']
        if 'SSC_metric' in result.keys():
            SSC_metric += result['SSC_metric']
        if 'SSC_metric_fine' in result.keys():
            SSC_metric_fine += result['SSC_metric_fine']

        # the fine (coarse-to-fine x4) branch fragments the caching allocator
        # badly on the 1600x900 configs; without this the 24G cards OOM after
        # a few hundred samples
        torch.cuda.empty_cache()

        batch_size = 1
        for _ in range(batch_size):
            prog_bar.update()

    res = {}
    if type(SC_metric) != int:
        res['SC_metric'] = SC_metric
        logger.info(format_SC_results(cm_to_ious(SC_metric)[1:], return_dic=False))
    if type(SSC_metric) != int:
        res['SSC_metric'] = SSC_metric
        logger.info(format_SSC_results(cm_to_ious(SSC_metric), return_dic=False))
    if type(SSC_metric_fine) != int:
        res['SSC_metric_fine'] = SSC_metric_fine
        logger.info(format_SSC_results(cm_to_ious(SSC_metric_fine), return_dic=False))

    return res


def custom_multi_gpu_test(model, data_loader, tmpdir=None, gpu_collect=False):
    """Test model with multiple gpus.

    The confusion matrices of every rank are summed with an all_reduce on the
    GPU, so `tmpdir` / `gpu_collect` are only kept for API compatibility with
    mmdet's multi_gpu_test.
    """
    model.eval()

    # init predictions
    SC_metric = []
    SSC_metric = []
    SSC_metric_fine = []

    dataset = data_loader.dataset
    rank, world_size = get_dist_info()
    if rank == 0:
        prog_bar = mmcv.ProgressBar(len(dataset))

    time.sleep(2)  # This line can prevent deadlock problem in some cases.
    logger = get_root_logger()

    for i, data in enumerate(data_loader):
        with torch.no_grad():
            result = model(return_loss=False, rescale=True, **data)

            if 'SC_metric' in result.keys():
                SC_metric.append(result['SC_metric'])
            if 'SSC_metric' in result.keys():
                SSC_metric.append(result['SSC_metric'])
            if 'SSC_metric_fine' in result.keys():
                SSC_metric_fine.append(result['SSC_metric_fine'])

        torch.cuda.empty_cache()  # same reason as in custom_single_gpu_test

        if rank == 0:
            for _ in range(data_loader.batch_size * world_size):
                prog_bar.update()

    # wait until all predictions are generated
    dist.barrier()

    res = {}
    if len(SC_metric) > 0:
        SC_metric = [sum(SC_metric)]
        SC_metric = torch.from_numpy(np.stack(SC_metric, axis=0)).cuda()
        dist.all_reduce(SC_metric, op=dist.ReduceOp.SUM)
        res['SC_metric'] = SC_metric.cpu().numpy()

    if len(SSC_metric) > 0:
        SSC_metric = [sum(SSC_metric)]
        SSC_metric = torch.from_numpy(np.stack(SSC_metric, axis=0)).cuda()
        dist.all_reduce(SSC_metric, op=dist.ReduceOp.SUM)
        res['SSC_metric'] = SSC_metric.cpu().numpy()

    if len(SSC_metric_fine) > 0:
        SSC_metric_fine = [sum(SSC_metric_fine)]
        SSC_metric_fine = torch.from_numpy(np.stack(SSC_metric_fine, axis=0)).cuda()
        dist.all_reduce(SSC_metric_fine, op=dist.ReduceOp.SUM)
        res['SSC_metric_fine'] = SSC_metric_fine.cpu().numpy()

    if rank == 0:
        if 'SC_metric' in res:
            logger.info(format_SC_results(cm_to_ious(res['SC_metric'][0])[1:], return_dic=False))
        if 'SSC_metric' in res:
            logger.info(format_SSC_results(cm_to_ious(res['SSC_metric'][0]), return_dic=False))
        if 'SSC_metric_fine' in res:
            logger.info(format_SSC_results(cm_to_ious(res['SSC_metric_fine'][0]), return_dic=False))

    return res


def collect_results_cpu(result_part, size, tmpdir=None):
    """Legacy file-based collection (unused by the occupancy metrics above,
    kept for the detection heads)."""
    rank, world_size = get_dist_info()
    if tmpdir is None:
        tmpdir = tempfile.mkdtemp(dir='.dist_test')
    mmcv.mkdir_or_exist(tmpdir)
    mmcv.dump(result_part, osp.join(tmpdir, f'part_{rank}.pkl'))
    dist.barrier()
    if rank != 0:
        return None
    part_list = []
    for i in range(world_size):
        part_list.append(mmcv.load(osp.join(tmpdir, f'part_{i}.pkl')))
    ordered_results = []
    for res in zip(*part_list):
        ordered_results.extend(list(res))
    ordered_results = ordered_results[:size]
    shutil.rmtree(tmpdir)
    return ordered_results
