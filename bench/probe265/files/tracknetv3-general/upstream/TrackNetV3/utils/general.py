import os
import cv2
import math
import random
import parse
import shutil
import numpy as np
import pandas as pd
from PIL import Image, ImageDraw
from collections import deque

import torch
import torch.nn as nn

from model import TrackNet, InpaintNet

# Global variables
HEIGHT = 288
WIDTH = 512
SIGMA = 2.5
DELTA_T = 1 / math.sqrt(HEIGHT ** 2 + WIDTH ** 2)
COOR_TH = DELTA_T * 50
IMG_FORMAT = 'png'


class ResumeArgumentParser():
    """ A argument parser for parsing the parameter dictionary from checkpoint file."""

    def __init__(self, param_dict):
        self.model_name = param_dict['model_name']
        self.seq_len = param_dict['seq_len']
        self.epochs = param_dict['epochs']
        self.batch_size = param_dict['batch_size']
        self.optim = param_dict['optim']
        self.learning_rate = param_dict['learning_rate']
        self.lr_scheduler = param_dict['lr_scheduler']
        self.bg_mode = param_dict['bg_mode']
        self.alpha = param_dict['alpha']
        self.frame_alpha = param_dict['frame_alpha']
        self.mask_ratio = param_dict['mask_ratio']
        self.tolerance = param_dict['tolerance']
        self.resume_training = param_dict['resume_training']
        self.seed = param_dict['seed']
        self.save_dir = param_dict['save_dir']
        self.debug = param_dict['debug']
        self.verbose = param_dict['verbose']


###################################  Helper Functions ###################################
def set_seed(seed):
    """ Make training reproducible across runs (cuDNN determinism costs ~10% speed). """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    os.environ['PYTHONHASHSEED'] = str(seed)


def select_device(device_str=''):
    """ Resolve a device string such as '', 'cpu', '0' or '0,1' into a torch.device.

        An empty string picks the first visible GPU when one is available.
    """
    device_str = str(device_str).strip().lower().replace('cuda:', '')
    if device_str == 'cpu':
        return torch.device('cpu')
    if device_str:
        os.environ['CUDA_VISIBLE_DEVICES'] = device_str
        assert torch.cuda.is_available() and torch.cuda.device_count() >= len(device_str.split(',')), \
            f'Invalid CUDA device {device_str} requested'
    if torch.cuda.is_available():
        n = torch.cuda.device_count()
        for i in range(n):
            p = torch.cuda.get_device_properties(i)
            print(f'CUDA:{i} ({p.name}, {p.total_memory / 1024 ** 2:.0f}MiB)')
        return torch.device('cuda:0')
    print('No GPU found, running on CPU (this will be slow)')
    return torch.device('cpu')


def get_model(model_name, seq_len=None, bg_mode=None):
    """ Create model by name and the configuration parameter.

        Args:
            model_name (str): type of model to create
                Choices:
                    - 'TrackNet': Return TrackNet model
                    - 'InpaintNet': Return InpaintNet model
            seq_len (int, optional): Length of input sequence of TrackNet
            bg_mode (str, optional): Background mode of TrackNet
                Choices:
                    - '': Return TrackNet with L x 3 input channels (RGB)
                    - 'subtract': Return TrackNet with L x 1 input channel (Difference frame)
                    - 'subtract_concat': Return TrackNet with L x 4 input channels (RGB + Difference frame)
                    - 'concat': Return TrackNet with (L+1) x 3 input channels (RGB)

        Returns:
            model (torch.nn.Module): Model with specified configuration
    """

    if model_name == 'TrackNet':
        if bg_mode == 'subtract':
            model = TrackNet(in_dim=seq_len, out_dim=seq_len)
        elif bg_mode == 'subtract_concat':
            model = TrackNet(in_dim=seq_len * 4, out_dim=seq_len)
        elif bg_mode == 'concat':
            model = TrackNet(in_dim=(seq_len + 1) * 3, out_dim=seq_len)
        else:
            model = TrackNet(in_dim=seq_len * 3, out_dim=seq_len)
    elif model_name == 'InpaintNet':
        model = InpaintNet()
    else:
        raise ValueError('Invalid model name.')

    return model


def list_dirs(directory):
    """ Extension of os.listdir which return the directory pathes including input directory.

        Args:
            directory (str): Directory path

        Returns:
            (List[str]): Directory pathes with pathes including input directory
    """

    return sorted([os.path.join(directory, path) for path in os.listdir(directory)])


def to_img(image):
    """ Convert the normalized image back to image format.

        Args:
            image (numpy.ndarray): Images with range in [0, 1]

        Returns:
            image (numpy.ndarray): Images with range in [0, 255]
    """

    image = image * 255
    image = image.astype('uint8')
    return image


def to_img_format(input, num_ch=1):
    """ Helper function for transforming model input sequence format to image sequence format.

        Args:
            input (numpy.ndarray): model input with shape (N, L*C, H, W)
            num_ch (int): Number of channels of each frame.

        Returns:
            (numpy.ndarray): Image sequences with shape (N, L, H, W) or (N, L, H, W, 3)
    """

    assert len(input.shape) == 4, 'Input must be 4D tensor.'

    if num_ch == 1:
        # (N, L, H ,W)
        return input
    else:
        # (N, L*C, H ,W)
        input = np.transpose(input, (0, 2, 3, 1))  # (N, H ,W, L*C)
        seq_len = int(input.shape[-1] / num_ch)
        img_seq = np.array([]).reshape(0, seq_len, HEIGHT, WIDTH, 3)  # (N, L, H, W, 3)
        # For each sample in the batch
        for n in range(input.shape[0]):
            frame = np.array([]).reshape(0, HEIGHT, WIDTH, 3)
            # Get each frame in the sequence
            for f in range(0, input.shape[-1], num_ch):
                img = input[n, :, :, f:f + 3]
                frame = np.concatenate((frame, img.reshape(1, HEIGHT, WIDTH, 3)), axis=0)
            img_seq = np.concatenate((img_seq, frame.reshape(1, seq_len, HEIGHT, WIDTH, 3)), axis=0)

        return img_seq


def get_num_frames(rally_dir):
    """ Return the number of frames in the video.

        Args:
            rally_dir (str): File path of the rally frame directory
                Format: '{data_dir}/{split}/match{match_id}/frame/{rally_id}'

        Returns:
            (int): Number of frames in the rally frame directory
    """

    try:
        frame_files = os.listdir(rally_dir)
    except:
        raise ValueError(f'{rally_dir} does not exist.')
    frame_files = [f for f in frame_files if f.split('.')[-1] == IMG_FORMAT]
    return len(frame_files)


def get_rally_dirs(data_dir, split):
    """ Return all rally directories in the split.

        Args:
            data_dir (str): File path of the data root directory
            split (str): Split name

        Returns:
            rally_dirs: (List[str]): Rally directories in the split
                Format: ['{split}/match{match_id}/frame/{rally_id}', ...]
    """

    rally_dirs = []

    # Get all match directories in the split
    match_dirs = os.listdir(os.path.join(data_dir, split))
    match_dirs = [os.path.join(split, d) for d in match_dirs]
    match_dirs = sorted(match_dirs, key=lambda s: int(s.split('match')[-1]))

    # Get all rally directories in the match directory
    for match_dir in match_dirs:
        rally_dir = os.listdir(os.path.join(data_dir, match_dir, 'frame'))
        rally_dir = sorted(rally_dir)
        rally_dir = [os.path.join(match_dir, 'frame', d) for d in rally_dir]
        rally_dirs.extend(rally_dir)

    return rally_dirs


def generate_frames(video_file):
    """ Sample frames from the video.

        Args:
            video_file (str): File path of video file

        Returns:
            frame_list (List[numpy.ndarray]): List of sampled frames
    """

    assert video_file[-4:] == '.mp4', 'Invalid video file format.'

    # Get camera parameters
    cap = cv2.VideoCapture(video_file)
    frame_list = []
    success = True

    # Sample frames until video end
    while success:
        success, frame = cap.read()
        if success:
            frame_list.append(frame)

    return frame_list


def write_pred_video(video_file, pred_dict, save_file, traj_len=8, label_df=None):
    """ Write a video with prediction result.

        Args:
            video_file (str): File path of video file
            pred_dict (Dict): Prediction result
                Format: {'Frame': frame_id (List[int]),
                         'X': x_pred (List[int]),
                         'Y': y_pred (List[int]),
                         'Visibility': vis_pred (List[int])}
            save_file (str): File path of output video file
            traj_len (int, optional): Length of trajectory to draw
            label_df (pandas.DataFrame, optional): Ground truth label dataframe

        Returns:
            None
    """

    # Read video
    cap = cv2.VideoCapture(video_file)
    fps = cap.get(cv2.CAP_PROP_FPS)
    w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))

    # Read ground truth label if exists
    if label_df is not None:
        f_i, x, y, vis = label_df['Frame'], label_df['X'], label_df['Y'], label_df['Visibility']

    # Read prediction result
    x_pred, y_pred, vis_pred = pred_dict['X'], pred_dict['Y'], pred_dict['Visibility']

    # Video config
    fourcc = cv2.VideoWriter_fourcc(*'mp4v')
    out = cv2.VideoWriter(save_file, fourcc, fps, (w, h))

    # Create a queue for storing trajectory
    pred_queue = deque()
    if label_df is not None:
        gt_queue = deque()

    # Draw label and prediction trajectory
    i = 0
    while cap.isOpened():
        success, frame = cap.read()
        if not success:
            break

        # Check capacity of queue
        if len(pred_queue) >= traj_len:
            pred_queue.pop()
        if label_df is not None and len(gt_queue) >= traj_len:
            gt_queue.pop()

        # Push ball coordinates for each frame
        if label_df is not None:
            gt_queue.appendleft([x[i], y[i]]) if vis[i] and i < len(label_df) else gt_queue.appendleft(None)
        pred_queue.appendleft([x_pred[i], y_pred[i]]) if vis_pred[i] else pred_queue.appendleft(None)

        # Draw ground truth trajectory if exists
        if label_df is not None:
            frame = draw_traj(frame, gt_queue, color='red')

        # Draw prediction trajectory
        frame = draw_traj(frame, pred_queue, color='yellow')

        out.write(frame)
        i += 1

    out.release()


def write_pred_csv(pred_dict, save_file, save_inpaint_mask=False):
    """ Write prediction result to csv file.

        Args:
            pred_dict (Dict): Prediction result
            save_file (str): File path of output csv file
            save_inpaint_mask (bool, optional): Whether to save inpaint mask

        Returns:
            None
    """

    if save_inpaint_mask:
        # Save temporary data for InpaintNet training
        assert 'Inpaint_Mask' in pred_dict, 'Inpaint mask is not in prediction result.'
        pred_df = pd.DataFrame({'Frame': pred_dict['Frame'],
                                'Visibility_GT': pred_dict['Visibility_GT'],
                                'X_GT': pred_dict['X_GT'],
                                'Y_GT': pred_dict['Y_GT'],
                                'Visibility': pred_dict['Visibility'],
                                'X': pred_dict['X'],
                                'Y': pred_dict['Y'],
                                'Inpaint_Mask': pred_dict['Inpaint_Mask']})
    else:
        pred_df = pd.DataFrame({'Frame': pred_dict['Frame'],
                                'Visibility': pred_dict['Visibility'],
                                'X': pred_dict['X'],
                                'Y': pred_dict['Y']})
    pred_df.to_csv(save_file, index=False)


def draw_traj(img, traj, radius=3, color='red'):
    """ Draw trajectory on the image.

        Args:
            img (numpy.ndarray): Image with shape (H, W, C)
            traj (deque): Trajectory to draw
            radius (int): Radius of the drawn circles
            color (str): Color of the trajectory

        Returns:
            img (numpy.ndarray): Image with trajectory drawn
    """

    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    img = Image.fromarray(img)

    for i in range(len(traj)):
        if traj[i] is not None:
            draw_x = traj[i][0]
            draw_y = traj[i][1]
            bbox = (draw_x - radius, draw_y - radius, draw_x + radius, draw_y + radius)
            draw = ImageDraw.Draw(img)
            draw.ellipse(bbox, fill='rgb(255,255,255)', outline=color)
            del draw
    img = cv2.cvtColor(np.array(img), cv2.COLOR_RGB2BGR)
    return img
