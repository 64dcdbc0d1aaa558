import argparse
import os
import warnings

import numpy as np
import onnx
import torch
import tensorrt as trt
from mmcv import Config
from mmcv.runner import load_checkpoint
from mmdeploy.apis.tensorrt import load_tensorrt_plugin
from mmdeploy.backend.tensorrt.utils import from_onnx
from mmdeploy.apis.utils import build_task_processor
from mmdeploy.utils import get_root_logger

from mmdet3d.datasets import build_dataloader, build_dataset
from mmdet3d.models import build_model
from mmdet.datasets import replace_ImageToTensor
from tools.misc.fuse_conv_bn import fuse_module


def parse_args():
    parser = argparse.ArgumentParser(description='Deploy BEVDet / FlashOcc with Tensorrt')
    parser.add_argument('config', help='deploy config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('work_dir', help='work dir to save file')
    parser.add_argument(
        '--prefix', default='bevdet', help='prefix of the save file name')
    parser.add_argument(
        '--fp16', action='store_true', help='Whether to use tensorrt fp16')
    parser.add_argument(
        '--int8', action='store_true', help='Whether to use tensorrt int8')
    parser.add_argument(
        '--fuse-conv-bn',
        action='store_true',
        help='Whether to fuse conv and bn, this will slightly increase'
        'the inference speed')
    args = parser.parse_args()
    return args


def get_plugin_names():
    return [pc.name for pc in trt.get_plugin_registry().plugin_creator_list]


def create_calib_input_data_impl(calib_file, deploy_cfg, model_cfg,
                                 model_checkpoint, dataset_cfg=None,
                                 dataset_type='val', device='cpu', metas=None):
    """Dump a few hundred val frames to an h5 file for the int8 calibrator."""
    import h5py
    task_processor = build_task_processor(model_cfg, deploy_cfg, device)
    dataset = task_processor.build_dataset(dataset_cfg or model_cfg.data[dataset_type])
    dataloader = task_processor.build_dataloader(dataset, 1, 1)
    model = task_processor.init_pytorch_model(model_checkpoint)
    with h5py.File(calib_file, mode='w') as file:
        calib_data_group = file.create_group('calib_data')
        input_data_group = calib_data_group.create_group('end2end')
        input_group = input_data_group.create_group('img')
        for data_id, input_data in enumerate(dataloader):
            img = input_data['img_inputs'][0][0].to(device)
            input_group.create_dataset(str(data_id), shape=img.shape,
                                       compression='gzip', compression_opts=4,
                                       data=img.detach().cpu().numpy())
            for name, value in zip(['ranks_depth', 'ranks_feat', 'ranks_bev',
                                    'interval_starts', 'interval_lengths'], metas):
                grp = input_data_group.require_group(name)
                grp.create_dataset(str(data_id), data=value.cpu().numpy())
            if data_id > 256:
                break
    del model


def main():
    args = parse_args()

    load_tensorrt_plugin()
    assert 'bev_pool_v2' in get_plugin_names(), \
        'bev_pool_v2 is not in the plugin list of tensorrt, ' \
        'please install mmdeploy from ' \
        'https://github.com/HuangJunJie2017/mmdeploy.git'

    if args.int8:
        assert args.fp16
    model_prefix = args.prefix
    if args.int8:
        model_prefix = model_prefix + '_int8'
    elif args.fp16:
        model_prefix = model_prefix + '_fp16'
    cfg = Config.fromfile(args.config)
    cfg.model.pretrained = None
    cfg.model.type = cfg.model.type + 'TRT'
    cfg.gpu_ids = [0]

    # import modules from plguin/xx, registry will be updated
    if hasattr(cfg, 'plugin') and cfg.plugin:
        import importlib
        plugin_dir = cfg.plugin_dir
        _module_dir = os.path.dirname(plugin_dir)
        _module_path = '.'.join(_module_dir.split('/'))
        print(_module_path)
        plg_lib = importlib.import_module(_module_path)

    # build the dataloader
    test_dataloader_default_args = dict(
        samples_per_gpu=1, workers_per_gpu=2, dist=False, shuffle=False)

    # in case the test dataset is concatenated
    if isinstance(cfg.data.test, dict):
        cfg.data.test.test_mode = True
        if cfg.data.test_dataloader.get('samples_per_gpu', 1) > 1:
            # Replace 'ImageToTensor' to 'DefaultFormatBundle'
            cfg.data.test.pipeline = replace_ImageToTensor(
                cfg.data.test.pipeline)
    test_loader_cfg = {
        **test_dataloader_default_args,
        **cfg.data.get('test_dataloader', {})
    }
    dataset = build_dataset(cfg.data.test)
    data_loader = build_dataloader(dataset, **test_loader_cfg)

    # build the model and load checkpoint
    model = build_model(cfg.model, test_cfg=cfg.get('test_cfg'))
    assert model.img_view_transformer.grid_size[0] == 200
    assert model.img_view_transformer.grid_size[1] == 200
    assert model.img_view_transformer.grid_size[2] == 1
    load_checkpoint(model, args.checkpoint, map_location='cpu')
    if args.fuse_conv_bn:
        model_prefix = model_prefix + '_fuse'
        model = fuse_module(model)
    model.cuda()
    model.eval()

    for i, data in enumerate(data_loader):
        inputs = [t.cuda() for t in data['img_inputs'][0]]
        img = inputs[0].squeeze(0)
        if img.shape[0] > 6:
            img = img[:6]
        metas = model.get_bev_pool_input(inputs)
        onnx_input = (img.float().contiguous(), metas[1].int().contiguous(),
                      metas[2].int().contiguous(), metas[0].int().contiguous(),
                      metas[3].int().contiguous(), metas[4].int().contiguous())
        with torch.no_grad():
            torch.onnx.export(
                model,
                onnx_input,
                args.work_dir + model_prefix + '.onnx',
                opset_version=11,
                input_names=[
                    'img', 'ranks_depth', 'ranks_feat', 'ranks_bev',
                    'interval_starts', 'interval_lengths'
                ],
                output_names=['cls_occ_label'])
        break
    # check onnx model
    onnx_model = onnx.load(args.work_dir + model_prefix + '.onnx')
    try:
        onnx.checker.check_model(onnx_model)
    except Exception:
        print('ONNX Model Incorrect')
    else:
        print('ONNX Model Correct')

    # convert to tensorrt
    num_points = metas[0].shape[0]
    num_intervals = metas[3].shape[0]
    img_shape = img.shape
    input_shapes = dict(
        img=dict(
            min_shape=img_shape, opt_shape=img_shape, max_shape=img_shape),
        ranks_depth=dict(
            min_shape=[num_points],
            opt_shape=[num_points],
            max_shape=[num_points]),
        ranks_feat=dict(
            min_shape=[num_points],
            opt_shape=[num_points],
            max_shape=[num_points]),
        ranks_bev=dict(
            min_shape=[num_points],
            opt_shape=[num_points],
            max_shape=[num_points]),
        interval_starts=dict(
            min_shape=[num_intervals],
            opt_shape=[num_intervals],
            max_shape=[num_intervals]),
        interval_lengths=dict(
            min_shape=[num_intervals],
            opt_shape=[num_intervals],
            max_shape=[num_intervals]))
    deploy_cfg = dict(
        backend_config=dict(
            type='tensorrt',
            common_config=dict(
                fp16_mode=args.fp16,
                max_workspace_size=1 << 30,
                int8_mode=args.int8),
            model_inputs=[dict(input_shapes=input_shapes)]),
        codebase_config=dict(
            type='mmdet3d', task='VoxelDetection', model_type='end2end'))

    if args.int8:
        calib_filename = 'calib_data.h5'
        calib_path = os.path.join(args.work_dir, calib_filename)
        create_calib_input_data_impl(
            calib_path,
            deploy_cfg,
            args.config,
            args.checkpoint,
            dataset_cfg=None,
            dataset_type='val',
            device='cuda:0',
            metas=metas)

    from_onnx(
        args.work_dir + model_prefix + '.onnx',
        args.work_dir + model_prefix,
        fp16_mode=args.fp16,
        int8_mode=args.int8,
        int8_param=dict(
            calib_file=os.path.join(args.work_dir, 'calib_data.h5'),
            model_type='end2end'),
        max_workspace_size=1 << 30,
        input_shapes=input_shapes)

    if args.int8:
        os.remove(calib_path)


if __name__ == '__main__':

    main()
