import argparse
import os
import pickle
import random
import subprocess
from pathlib import Path
from typing import Dict, List, Union

import numpy as np
import omegaconf
import torch
import torch.nn.functional as F
from omegaconf.dictconfig import DictConfig

IMAGENET_CLASS_PATH = './utils/IN_label_map.txt'
KINETICS_CLASS_PATH = './utils/K400_label_map.txt'


def show_predictions_on_dataset(logits: torch.FloatTensor, dataset: Union[str, List]):
    '''Prints out predictions for each feature

    Args:
        logits (torch.FloatTensor): after-classification layer vector (B, classes)
        dataset (str): which dataset to use to show the predictions on. In ('imagenet', 'kinetics')
    '''
    if dataset == 'kinetics':
        path_to_class_list = KINETICS_CLASS_PATH
    elif dataset == 'imagenet':
        path_to_class_list = IMAGENET_CLASS_PATH
    else:
        # if the dataset is a list of class names
        path_to_class_list = None

    if path_to_class_list is not None:
        dataset_classes = [x.strip() for x in open(path_to_class_list)]
    else:
        dataset_classes = dataset

    softmaxes = F.softmax(logits, dim=-1)
    top_val, top_idx = torch.sort(softmaxes, dim=-1, descending=True)

    k = 5
    logits_score = logits.gather(1, top_idx[:, :k]).tolist()
    softmax_score = softmaxes.gather(1, top_idx[:, :k]).tolist()
    class_labels = [[dataset_classes[idx] for idx in i_row] for i_row in top_idx[:, :k]]

    for b in range(len(logits)):
        for (logit, smax, cls) in zip(logits_score[b], softmax_score[b], class_labels[b]):
            print(f'{logit:.3f} {smax:.3f} {cls}')
        print()


def action_on_extraction(feats_dict: Dict[str, np.ndarray], video_path, output_path, on_extraction: str):
    '''What is going to be done with the extracted features.

    Args:
        feats_dict (Dict[str, np.ndarray]): A dict with features and possibly some meta. Key will be used as
                                            suffixes to the saved files if `save_numpy` or `save_pickle` is
                                            used.
        video_path (str): A path to the video.
        on_extraction (str): What to do with the features on extraction.
        output_path (str): Where to save the features if `save_numpy` or `save_pickle` is used.
    '''
    # since the features are enclosed in a dict with another meta information we will iterate on kv
    action2ext = {'save_numpy': '.npy', 'save_pickle': '.pkl'}
    for key, value in feats_dict.items():
        if on_extraction == 'print':
            print(key)
            print(value)
            print(f'max: {value.max():.8f}; mean: {value.mean():.8f}; min: {value.min():.8f}')
            print()
        elif on_extraction in ['save_numpy', 'save_pickle']:
            # make dir if doesn't exist
            os.makedirs(output_path, exist_ok=True)
            fname = f'{Path(video_path).stem}_{key}{action2ext[on_extraction]}'
            if key == 'features':
                fname = fname.replace(f'_{key}', '')
            fpath = os.path.join(output_path, fname)
            if len(value) == 0:
                print(f'Warning: the value is empty for {key} @ {fpath}')
            # save the info behind the each key
            if on_extraction == 'save_numpy':
                np.save(fpath, value)
            else:
                pickle.dump(value, open(fpath, 'wb'))
        else:
            raise NotImplementedError(f'on_extraction: {on_extraction} is not implemented')


def form_list_from_user_input(
        video_paths: Union[str, List[str]] = None,
        file_with_video_paths: str = None,
        to_shuffle: bool = True,
    ) -> list:
    '''User specifies either list of videos in the cmd or a path to a file with video paths. This function
       transforms the user input into a list of paths.

    Args:
        video_paths (Union[str, ListConfig, None], optional): a list of video paths. Defaults to None.
        file_with_video_paths (str, optional): a path to a file with video files for extraction.
                                               Defaults to None.
        to_shuffle (bool, optional): if the list of paths should be shuffled. If True, should prevent
                                     potential worker collisions (the same video is processed by several
                                     workers). Defaults to True.

    Returns:
        list: list with paths
    '''
    if file_with_video_paths is not None:
        with open(file_with_video_paths) as rfile:
            # remove carriage return
            path_list = [line.replace('\n', '') for line in rfile.readlines()]
            # remove empty lines
            path_list = [path for path in path_list if len(path) > 0]
    else:
        path_list = video_paths
        if isinstance(video_paths, (str, Path)):
            path_list = [video_paths]

    # sanity check: prints paths which do not exist
    for path in path_list:
        if not Path(path).exists():
            print(f'The path does not exist: {path}')

    if to_shuffle:
        random.shuffle(path_list)

    return path_list


def sanity_check(args: Union[argparse.Namespace, DictConfig]):
    '''Checks the prased user arguments.

    Args:
        args (Union[argparse.Namespace, DictConfig]): Parsed user arguments
    '''
    if 'device_ids' in args:
        print('WARNING: Running feature extraction on multiple devices in a _single_ process is no longer supported.')
        print('To use several GPUs, you simply need to start the extraction with another GPU ordinal.')
        print('For instance, in one terminal: `device="cuda:0"` and `device="cuda:1"` in the second, etc.')
        print(f'Your device specification (device_ids={args.device_ids}) is converted to `device="cuda:0"`.')
        args.device = 'cuda:0'
    if 'cuda' in args.device:
        assert torch.cuda.is_available(), f'device={args.device} was requested but torch.cuda.is_available() is False'
    assert args.file_with_video_paths or args.video_paths, '`video_paths` or `file_with_video_paths` must be specified'
    filenames = [Path(p).stem for p in form_list_from_user_input(args.video_paths, args.file_with_video_paths)]
    assert len(filenames) == len(set(filenames)), 'Non-unique filenames. See video_features/issues/54'
    assert os.path.relpath(args.output_path) != os.path.relpath(args.tmp_path), 'The same path for out & tmp'
    if args.show_pred:
        print('You want to see predictions. So, I will use only the first GPU from the list you specified.')
        args.device_ids = [args.device_ids[0]] if 'device_ids' in args else None
    if args.feature_type == 'vggish':
        assert args.step_size is None and args.stack_size is None, 'vggish uses fixed 0.96 sec windows'
    if args.feature_type == 'pwc' or (args.feature_type == 'i3d' and args.flow_type == 'pwc'):
        assert 'cuda' in args.device, 'PWC-Net relies on a cupy CUDA kernel for the correlation layer; cannot run on CPU'
    if args.feature_type == 'i3d':
        message = 'Flow type should be one of: pwc, raft'
        assert args.flow_type in ['pwc', 'raft'], message
        assert args.stack_size is None or args.stack_size >= 10, 'I3D needs at least 10 frames per stack'
    if args.on_extraction in ['save_numpy', 'save_pickle'] and args.output_path == './output':
        print(f'Saving features to the default output path: {args.output_path}')


def build_cfg_path(feature_type: str) -> os.PathLike:
    '''Makes a path to the default config file for each feature family.

    Args:
        feature_type (str): the type (e.g. 'vggish')

    Returns:
        os.PathLike: the path to the default config for the type
    '''
    path_base = Path('./configs')
    path = path_base / f'{feature_type}.yml'
    return path


def dp_state_to_normal(state_dict):
    '''Converts a torch.DataParallel checkpoint to regular'''
    new_state_dict = {}
    for k, v in state_dict.items():
        if k.startswith('module.'):
            new_state_dict[k.replace('module.', '')] = v
        else:
            new_state_dict[k] = v
    return new_state_dict


def load_numpy(fpath):
    return np.load(fpath)


def write_numpy(fpath, value):
    return np.save(fpath, value)


def which_ffmpeg() -> str:
    '''Determines the path to ffmpeg library

    Returns:
        str -- path to the library
    '''
    result = subprocess.run(['which', 'ffmpeg'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ffmpeg_path = result.stdout.decode('utf-8').replace('\n', '')
    return ffmpeg_path


def reencode_video_with_diff_fps(video_path: str, tmp_path: str, extraction_fps: int) -> str:
    '''Reencodes the video given the path and saves it to the tmp_path folder.

    Args:
        video_path (str): original video
        tmp_path (str): the folder where tmp files are stored (will be appended with a proper filename).
        extraction_fps (int): target fps value

    Returns:
        str: The path where the tmp file is stored. To be used to load the video from
    '''
    assert which_ffmpeg() != '', 'Is ffmpeg installed? Check if the conda environment is activated.'
    assert video_path.endswith('.mp4'), 'The file does not end with .mp4. Comment this if expected'
    # create tmp dir if doesn't exist
    os.makedirs(tmp_path, exist_ok=True)

    # form the path to tmp directory
    new_path = os.path.join(tmp_path, f'{Path(video_path).stem}_new_fps.mp4')
    cmd = f'{which_ffmpeg()} -hide_banner -loglevel panic '
    cmd += f'-y -i {video_path} -filter:v fps=fps={extraction_fps} {new_path}'
    subprocess.call(cmd.split())
    return new_path
