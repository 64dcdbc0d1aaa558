#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""Model and dataset loading for the verifier (PyTorch checkpoints, ONNX
models from VNN-COMP benchmarks, and the built-in vision datasets)."""
import os
import gzip
import hashlib
import warnings
import importlib
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms
import onnx
import onnxruntime as ort

import arguments
from model_defs import *
from utils import expand_path
from onnx_opt import compress_onnx


def Customized(def_file, callable_name, *args, **kwargs):
    """Fully customized model or dataloader."""
    if def_file.endswith('.py'):
        # Use the remaining part, which is a file path.
        spec = importlib.util.spec_from_file_location('customized', def_file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        # Treat it as a module name.
        module = importlib.import_module(def_file)
    # Load model from a specified file.
    model_func = getattr(module, callable_name)
    customized_func = partial(model_func, *args, **kwargs)
    # We need to return a Callable which returns the model.
    return customized_func


def deep_update(d, u):
    """Update a dictionary based another dictionary, recursively.
    (https://stackoverflow.com/a/3233356)."""
    for k, v in u.items():
        if isinstance(v, dict):
            d[k] = deep_update(d.get(k, {}), v)
        else:
            d[k] = v
    return d


def unzip_and_optimize_onnx(path, onnx_optimization_flags='none'):
    if onnx_optimization_flags == 'none':
        if path.endswith('.gz'):
            onnx_model = onnx.load(gzip.GzipFile(path))
        else:
            onnx_model = onnx.load(path)
        return onnx_model
    else:
        print(f'Onnx optimization with flags: {onnx_optimization_flags}')
        npath = path + '.optimized'
        if os.path.exists(npath):
            print(f'Found existed optimized onnx model at {npath}')
            return onnx.load(npath)
        else:
            print(f'Generate optimized onnx model to {npath}')
            if path.endswith('.gz'):
                onnx_model = onnx.load(gzip.GzipFile(path))
            else:
                onnx_model = onnx.load(path)
            return compress_onnx(onnx_model, path, npath, onnx_optimization_flags, debug=True)


def inference_onnx(path, input):
    # Workaround for onnx bug, see issue #150
    options = ort.SessionOptions()
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(unzip_and_optimize_onnx(path).SerializeToString(),
                                sess_options=options,
                                providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    assert len(sess.get_inputs()) == len(sess.get_outputs()) == 1
    res = sess.run(None, {sess.get_inputs()[0].name: input})[0]
    return res


def load_model_onnx(path, quirks=None, x=None):
    onnx_optimization_flags = arguments.Config['model']['onnx_optimization_flags']

    # pip install onnx2pytorch
    from onnx2pytorch import ConvertModel

    onnx_shape = None
    onnx_model = unzip_and_optimize_onnx(path, onnx_optimization_flags)
    onnx_input_dims = onnx_model.graph.input[-1].type.tensor_type.shape.dim
    onnx_shape = tuple(d.dim_value for d in onnx_input_dims)
    if len(onnx_shape) == 1:
        onnx_shape = (1, onnx_shape[0])
    else:
        onnx_shape = (1,) + onnx_shape[1:]

    pytorch_model = ConvertModel(onnx_model, experimental=True, quirks=quirks)
    pytorch_model.eval()
    pytorch_model.to(dtype=torch.get_default_dtype())

    conversion_check_result = True
    try:
        # check conversion correctness
        # FIXME dtype of dummy may not match the onnx model, which can cause runtime error
        if x is not None:
            x = x.reshape(1, *onnx_shape[1:])
        else:
            x = torch.randn([1, *onnx_shape[1:]])
        output_pytorch = pytorch_model(x).numpy()
        output_onnx = inference_onnx(path, x.numpy())
        conversion_check_result = np.allclose(
            output_pytorch, output_onnx, 1e-4, 1e-5)
    except:  # pylint: disable=broad-except
        warnings.warn('Not able to check model\'s conversion correctness')
        print('\n*************Error traceback*************')
        import traceback; print(traceback.format_exc())
        print('*****************************************\n')
    if not conversion_check_result:
        print('\n**************************')
        print('Model might not be converted correctly. Please check onnx conversion carefully.')
        print('**************************\n')

    return pytorch_model, onnx_shape


def load_model(weights_loaded=True):
    """
    Load the model architectures and weights
    """
    assert arguments.Config['model']['name'] is None or arguments.Config['model']['onnx_path'] is None, (
        'Conflict detected! User should specify model path by either --model or --onnx_path! '
        'The cannot be both specified.')

    assert arguments.Config['model']['name'] is not None or arguments.Config['model']['onnx_path'] is not None, (
        'No model is loaded, please set --model <modelname> for pytorch model or --onnx_path <filename> for onnx model.')

    if arguments.Config['model']['name'] is not None:
        # You can customize this function to load your own model based on model name.
        try:
            model_ori = eval(arguments.Config['model']['name'])()
        except Exception:
            print(f'Cannot load pytorch model definition "{arguments.Config["model"]["name"]}()". '
                  f'"{arguments.Config["model"]["name"]}()" must be a callable that returns a torch.nn.Module object.')
            import traceback
            traceback.print_exc()
            exit()
        model_ori.eval()

        if not weights_loaded:
            return model_ori

        if arguments.Config['model']['path'] is not None:
            # Load pytorch model
            # If the checkpoint was saved on a GPU, load it directly there when we can.
            map_location = 'cuda' if torch.cuda.is_available() else 'cpu'
            sd = torch.load(expand_path(arguments.Config['model']['path']),
                            map_location=torch.device(map_location))
            if 'state_dict' in sd:
                sd = sd['state_dict']
            if isinstance(sd, list):
                sd = sd[0]
            if not isinstance(sd, dict):
                raise NotImplementedError('Unknown model format, please modify model loader yourself.')
            try:
                model_ori.load_state_dict(sd)
            except RuntimeError:
                print('Failed to load the model')
                print('Keys in the state_dict of model_ori:')
                print(list(model_ori.state_dict().keys()))
                print('Keys in the state_dict trying to load:')
                print(list(sd.keys()))
                raise

    elif arguments.Config['model']['onnx_path'] is not None:
        # Load onnx model
        model_ori, _ = load_model_onnx(expand_path(
            arguments.Config['model']['onnx_path']))

    else:
        print('Warning: pretrained model path is not given!')

    print(model_ori)
    print('Parameters:')
    for p in model_ori.named_parameters():
        print(f'  {p[0]}: shape {p[1].shape}')

    return model_ori


def place_model(model_ori):
    """Move the model to the configured device before wrapping it with
    auto_LiRPA. For CUDA we also check that the weights really are on the GPU,
    since some ONNX-converted models keep buffers on the CPU."""
    device = arguments.Config['general']['device']
    if device == 'cuda':
        model_ori = model_ori.cuda()
        for name, buf in model_ori.named_buffers():
            if not buf.is_cuda:
                print(f'Moving buffer {name} to GPU')
                buf.data = buf.data.cuda()
    else:
        model_ori = model_ori.to(device)
    return model_ori


def load_verification_dataset(eps_before_normalization):
    if arguments.Config['data']['dataset'].startswith('Customized('):
        # FIXME (01/10/22): only support 1D eps
        return eval(arguments.Config['data']['dataset'])(eps=eps_before_normalization)
    # Load one of the predefined datasets.
    dataset = arguments.Config['data']['dataset']
    data_path = arguments.Config['data']['data_path'] or './datasets'
    if dataset == 'MNIST':
        test_data = torchvision.datasets.MNIST(
            data_path, train=False, download=True, transform=transforms.ToTensor())
        mean, std = torch.tensor([0.0]), torch.tensor([1.0])
    elif dataset == 'CIFAR':
        test_data = torchvision.datasets.CIFAR10(
            data_path, train=False, download=True, transform=transforms.ToTensor())
        mean = torch.tensor(arguments.Config['data']['mean'])
        std = torch.tensor(arguments.Config['data']['std'])
    else:
        raise ValueError(f'Unknown dataset {dataset}')
    loader = torch.utils.data.DataLoader(
        test_data, batch_size=10000, shuffle=False, num_workers=4,
        pin_memory=torch.cuda.is_available())
    X, labels = next(iter(loader))
    X = (X - mean.view(1, -1, 1, 1)) / std.view(1, -1, 1, 1)
    if eps_before_normalization is None:
        eps_before_normalization = arguments.Config['specification']['epsilon']
    eps = torch.tensor(eps_before_normalization).reshape(1, -1, 1, 1) / std.view(1, -1, 1, 1)
    data_max = ((1. - mean) / std).view(1, -1, 1, 1)
    data_min = ((0. - mean) / std).view(1, -1, 1, 1)
    return X, labels, data_max, data_min, eps
