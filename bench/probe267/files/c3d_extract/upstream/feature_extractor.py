"""C3D (Sports-1M) feature extractor for the Sultani et al. MIL ranking baseline.

Writes one text file per video with 32 segment features of size 4096 (fc6).
"""
import argparse
import logging
import os
from os import mkdir, path

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from data_loader import VideoIter
from utils.utils import build_transforms, register_logger


class C3D(nn.Module):
    """The C3D network as described in [1]."""

    def __init__(self, pretrained=None):
        super(C3D, self).__init__()

        self.conv1 = nn.Conv3d(3, 64, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool1 = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))

        self.conv2 = nn.Conv3d(64, 128, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool2 = nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2))

        self.conv3a = nn.Conv3d(128, 256, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.conv3b = nn.Conv3d(256, 256, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool3 = nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2))

        self.conv4a = nn.Conv3d(256, 512, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.conv4b = nn.Conv3d(512, 512, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool4 = nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2))

        self.conv5a = nn.Conv3d(512, 512, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.conv5b = nn.Conv3d(512, 512, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool5 = nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 1, 1))

        self.fc6 = nn.Linear(8192, 4096)
        self.relu = nn.ReLU()
        if pretrained is not None:
            self.__load_pretrained_weights(pretrained)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.pool1(x)
        x = self.relu(self.conv2(x))
        x = self.pool2(x)
        x = self.relu(self.conv3a(x))
        x = self.relu(self.conv3b(x))
        x = self.pool3(x)
        x = self.relu(self.conv4a(x))
        x = self.relu(self.conv4b(x))
        x = self.pool4(x)
        x = self.relu(self.conv5a(x))
        x = self.relu(self.conv5b(x))
        x = self.pool5(x)
        x = x.view(-1, 8192)
        x = self.relu(self.fc6(x))
        return x

    def __load_pretrained_weights(self, model_path):
        """Initialiaze network."""
        corresp_name = [
            # Conv1
            "conv1.weight", "conv1.bias",
            # Conv2
            "conv2.weight", "conv2.bias",
            # Conv3a / Conv3b
            "conv3a.weight", "conv3a.bias", "conv3b.weight", "conv3b.bias",
            # Conv4a / Conv4b
            "conv4a.weight", "conv4a.bias", "conv4b.weight", "conv4b.bias",
            # Conv5a / Conv5b
            "conv5a.weight", "conv5a.bias", "conv5b.weight", "conv5b.bias",
            # fc6
            "fc6.weight", "fc6.bias",
        ]

        ignored_weights = [f"{layer}.{type_}" for layer in ['fc7', 'fc8'] for type_ in ['weight', 'bias']]

        p_dict = torch.load(model_path)
        s_dict = self.state_dict()
        for name in p_dict:
            if name not in corresp_name:
                if name in ignored_weights:
                    continue
                logging.warning("no corresponding layer for {}".format(name))
                continue
            s_dict[name] = p_dict[name]
        self.load_state_dict(s_dict)


def get_torch_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_args():
    parser = argparse.ArgumentParser(description="Video Feature Extraction Parser")

    # I/O
    parser.add_argument('--dataset_path', default='../kinetics2/kinetics2/AnomalyDetection',
                        help="path to dataset")
    parser.add_argument('--clip-length', type=int, default=16,
                        help="define the length of each input sample.")
    parser.add_argument('--num_workers', type=int, default=8,
                        help="define the number of workers used for loading the videos")
    parser.add_argument('--frame-interval', type=int, default=1,
                        help="define the sampling interval between frames.")
    parser.add_argument('--log-every', type=int, default=50,
                        help="log the writing of clips every n steps.")
    parser.add_argument('--log-file', type=str,
                        help="set logging file.")
    parser.add_argument('--save_dir', type=str, default="features",
                        help="set output directory for the features.")

    # optimization
    parser.add_argument('--batch-size', type=int, default=8,
                        help="batch size")
    parser.add_argument('--fp16', action='store_true',
                        help="run the backbone in half precision (GPU only)")

    # model
    parser.add_argument('--pretrained_3d', type=str, default='pretrained/c3d.pickle',
                        help="load default 3D pretrained model.")

    return parser.parse_args()


def to_segments(data, num=32):
    """
    These code is taken from:
    https://github.com/rajanjitenpatel/C3D_feature_extraction/blob/b5894fa06d43aa62b3b64e85b07feb0853e7011a/extract_C3D_feature.py#L805
    :param data: list of features of a certain video
    :return: list of 32 segments
    """
    data = np.array(data)
    Segments_Features = []
    thirty2_shots = np.round(np.linspace(0, len(data) - 1, num=num + 1)).astype(int)
    for ss, ee in zip(thirty2_shots[:-1], thirty2_shots[1:]):
        if ss == ee:
            temp_vect = data[min(ss, data.shape[0] - 1), :]
        else:
            temp_vect = data[ss:ee, :].mean(axis=0)

        temp_vect = temp_vect / np.linalg.norm(temp_vect)

        if np.linalg.norm(temp_vect) == 0:
            logging.error("Feature norm is 0")
            exit()
        if len(temp_vect) != 0:
            Segments_Features.append(temp_vect.tolist())

    return Segments_Features


class FeaturesWriter:
    def __init__(self, num_videos, chunk_size=16):
        self.path = None
        self.dir = None
        self.data = None
        self.chunk_size = chunk_size
        self.num_videos = num_videos
        self.dump_count = 0

    def _init_video(self, video_name, dir):
        self.path = path.join(dir, f"{video_name}.txt")
        self.dir = dir
        self.data = dict()

    def has_video(self):
        return self.data is not None

    def dump(self):
        logging.info(f'{self.dump_count} / {self.num_videos}:	Dumping {self.path}')
        self.dump_count += 1
        if not path.exists(self.dir):
            os.mkdir(self.dir)

        features = to_segments([self.data[key] for key in sorted(self.data)])
        with open(self.path, 'w') as fp:
            for d in features:
                d = [str(x) for x in d]
                fp.write(' '.join(d) + '\n')

    def _is_new_video(self, video_name, dir):
        new_path = path.join(dir, f"{video_name}.txt")
        if self.path != new_path and self.path is not None:
            return True

        return False

    def store(self, feature, idx):
        self.data[idx] = list(feature)

    def write(self, feature, video_name, idx, dir):
        if not self.has_video():
            self._init_video(video_name, dir)

        if self._is_new_video(video_name, dir):
            self.dump()
            self._init_video(video_name, dir)

        self.store(feature, idx)


def get_features_loader(dataset_path, clip_length, frame_interval, batch_size, num_workers):
    data_loader = VideoIter(dataset_path=dataset_path,
                            clip_length=clip_length,
                            frame_stride=frame_interval,
                            video_transform=build_transforms(mode='c3d'),
                            return_label=False)

    data_iter = torch.utils.data.DataLoader(data_loader,
                                            batch_size=batch_size,
                                            shuffle=False,
                                            num_workers=num_workers,
                                            pin_memory=True)

    return data_loader, data_iter


if __name__ == "__main__":
    device = get_torch_device()

    args = get_args()
    register_logger(log_file=args.log_file)

    cudnn.benchmark = True

    data_loader, data_iter = get_features_loader(args.dataset_path,
                                                 args.clip_length,
                                                 args.frame_interval,
                                                 args.batch_size,
                                                 args.num_workers)

    network = C3D(pretrained=args.pretrained_3d)
    n_gpu = torch.cuda.device_count()
    if n_gpu > 1:
        logging.info("using {} GPUs".format(n_gpu))
        network = nn.DataParallel(network)
    network = network.to(device).eval()
    use_half = args.fp16 and device.type == 'cuda'
    if use_half:
        network = network.half()

    if not path.exists(args.save_dir):
        mkdir(args.save_dir)

    features_writer = FeaturesWriter(num_videos=data_loader.video_count)
    loop_i = 0
    with torch.no_grad():
        for data, clip_idxs, dirs, vid_names in tqdm(data_iter):
            if use_half:
                data = data.type(torch.cuda.HalfTensor)
            outputs = network(data.to(device)).detach().cpu().numpy()

            for i, (dir, vid_name, clip_idx) in enumerate(zip(dirs, vid_names, clip_idxs)):
                if loop_i == 0:
                    logging.info(f"Video {features_writer.dump_count} / {features_writer.num_videos} : Writing clip {clip_idx} of video {vid_name}")

                loop_i += 1
                loop_i %= args.log_every

                dir = path.join(args.save_dir, dir)
                features_writer.write(feature=outputs[i],
                                      video_name=vid_name,
                                      idx=clip_idx,
                                      dir=dir)

    features_writer.dump()
