"""Extract 10-crop I3D-ResNet50 features for UCF-Crime / ShanghaiTech / XD-Violence.

One output file per video: ``<name>_i3d.npy`` with shape (num_snippets, 10, 2048).
Multiple GPUs are used by splitting the video list, one worker process per card.
"""
import argparse
import os
import shutil
import time
from pathlib import Path

import ffmpeg
import numpy as np
import torch
import torch.multiprocessing as mp
from PIL import Image
from torch.autograd import Variable

from resnet import i3_res50

torch.backends.cudnn.benchmark = True

MEAN = np.array([114.75, 114.75, 114.75], dtype=np.float32)
STD = np.array([57.375, 57.375, 57.375], dtype=np.float32)


def load_frame(frame_file):
    data = Image.open(frame_file)
    data = data.resize((340, 256), Image.ANTIALIAS)
    data = np.array(data)
    data = data.astype(float)
    data = (data * 2 / 255) - 1
    assert (data.max() <= 1.0)
    assert (data.min() >= -1.0)
    return data


def oversample_data(data):
    # return the 10 standard crops (4 corners + centre, and their flips)
    data_flip = np.array(data[:, :, :, ::-1, :])

    data_1 = np.array(data[:, :, :224, :224, :])
    data_2 = np.array(data[:, :, :224, -224:, :])
    data_3 = np.array(data[:, :, 16:240, 58:282, :])
    data_4 = np.array(data[:, :, -224:, :224, :])
    data_5 = np.array(data[:, :, -224:, -224:, :])

    data_f_1 = np.array(data_flip[:, :, :224, :224, :])
    data_f_2 = np.array(data_flip[:, :, :224, -224:, :])
    data_f_3 = np.array(data_flip[:, :, 16:240, 58:282, :])
    data_f_4 = np.array(data_flip[:, :, -224:, :224, :])
    data_f_5 = np.array(data_flip[:, :, -224:, -224:, :])

    return [data_1, data_2, data_3, data_4, data_5,
            data_f_1, data_f_2, data_f_3, data_f_4, data_f_5]


def load_rgb_batch(frames_dir, rgb_files, frame_indices):
    batch_data = np.zeros(frame_indices.shape + (256, 340, 3))
    for i in range(frame_indices.shape[0]):
        for j in range(frame_indices.shape[1]):
            batch_data[i, j, :, :, :] = load_frame(os.path.join(frames_dir, rgb_files[frame_indices[i][j]]))
    return batch_data


def forward_batch(b_data, net):
    b_data = b_data.transpose([0, 4, 1, 2, 3])
    b_data = torch.from_numpy(b_data)  # b,c,t,h,w  # 40x3x16x224x224
    with torch.no_grad():
        b_data = Variable(b_data.cuda()).float()
        inp = {'frames': b_data}
        features = net(inp)
    return features.cpu().numpy()


def run(i3d, frequency, frames_dir, batch_size, sample_mode):
    assert (sample_mode in ['oversample', 'center_crop'])
    chunk_size = 16

    rgb_files = natsorted([i for i in os.listdir(frames_dir)])
    frame_cnt = len(rgb_files)
    # Cut frames
    assert (frame_cnt > chunk_size)
    clipped_length = frame_cnt - chunk_size
    clipped_length = (clipped_length // frequency) * frequency  # The start of last chunk
    frame_indices = []  # Frames to chunks
    for i in range(clipped_length // frequency + 1):
        frame_indices.append([j for j in range(i * frequency, i * frequency + chunk_size)])
    frame_indices = np.array(frame_indices)
    chunk_num = frame_indices.shape[0]
    batch_num = int(np.ceil(chunk_num / batch_size))  # Chunks to batches
    frame_indices = np.array_split(frame_indices, batch_num, axis=0)

    if sample_mode == 'oversample':
        full_features = [[] for i in range(10)]
    else:
        full_features = [[]]

    for batch_id in range(batch_num):
        batch_data = load_rgb_batch(frames_dir, rgb_files, frame_indices[batch_id])
        if sample_mode == 'oversample':
            batch_data_ten_crop = oversample_data(batch_data)
            for i in range(10):
                assert (batch_data_ten_crop[i].shape[-2] == 224)
                assert (batch_data_ten_crop[i].shape[-3] == 224)
                temp = forward_batch(batch_data_ten_crop[i], i3d)
                full_features[i].append(temp)

        elif sample_mode == 'center_crop':
            batch_data = batch_data[:, :, 16:240, 58:282, :]
            assert (batch_data.shape[-2] == 224)
            assert (batch_data.shape[-3] == 224)
            temp = forward_batch(batch_data, i3d)
            full_features[0].append(temp)

    full_features = [np.concatenate(i, axis=0) for i in full_features]
    full_features = [np.expand_dims(i, axis=0) for i in full_features]
    full_features = np.concatenate(full_features, axis=0)
    full_features = full_features[:, :, :, 0, 0, 0]
    full_features = np.array(full_features).transpose([1, 0, 2])
    return full_features


def natsorted(names):
    return sorted(names, key=lambda s: int(os.path.splitext(s)[0]) if os.path.splitext(s)[0].isdigit() else s)


def worker(rank, videos, args):
    torch.cuda.set_device(rank)
    i3d = i3_res50(400, args.pretrainedpath)
    i3d.cuda()
    i3d.train(False)  # Set model to evaluate mode

    temppath = os.path.join(args.outputpath, "temp_gpu{}".format(rank)) + "/"
    for video in videos[rank::args.num_gpus]:
        videoname = os.path.splitext(os.path.basename(video))[0]
        out_file = os.path.join(args.outputpath, videoname + "_i3d.npy")
        if os.path.exists(out_file):
            continue
        startime = time.time()
        print("[gpu{}] Generating for {}".format(rank, video))
        Path(temppath).mkdir(parents=True, exist_ok=True)
        ffmpeg.input(video).output('{}%d.jpg'.format(temppath), start_number=0).global_args('-loglevel', 'quiet').run()
        features = run(i3d, args.frequency, temppath, args.batch_size, args.sample_mode)
        np.save(out_file, features)
        print("[gpu{}] {} -> {} in {:.1f}s".format(rank, videoname, features.shape, time.time() - startime))
        shutil.rmtree(temppath)


def compare_with_reference(ours_dir, ref_dir, atol=1e-3):
    """Compare our features with the released ones (cosine similarity per video)."""
    sims = []
    for f in sorted(os.listdir(ref_dir)):
        a_path = os.path.join(ours_dir, f)
        if not os.path.exists(a_path):
            continue
        a = np.load(a_path).reshape(-1, 2048)
        b = np.load(os.path.join(ref_dir, f)).reshape(-1, 2048)
        n = min(len(a), len(b))
        a, b = a[:n], b[:n]
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-8)
        sims.append(cos.mean())
        if np.abs(a - b).max() > atol:
            print('{}: max abs diff {:.4f}, mean cos {:.4f}'.format(f, np.abs(a - b).max(), cos.mean()))
    print('mean cosine similarity over {} videos: {:.4f}'.format(len(sims), float(np.mean(sims)) if sims else float('nan')))


def generate(args):
    Path(args.outputpath).mkdir(parents=True, exist_ok=True)
    videos = sorted(str(f) for f in Path(args.datasetpath).glob('**/*.mp4'))
    print("{} videos, {} GPU worker(s)".format(len(videos), args.num_gpus))
    if args.num_gpus == 1:
        worker(0, videos, args)
    else:
        mp.spawn(worker, args=(videos, args), nprocs=args.num_gpus, join=True)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--datasetpath', type=str, default="samplevideos/")
    parser.add_argument('--outputpath', type=str, default="output")
    parser.add_argument('--pretrainedpath', type=str, default="pretrained/i3d_r50_kinetics.pth")
    parser.add_argument('--frequency', type=int, default=16)
    parser.add_argument('--batch_size', type=int, default=20)
    parser.add_argument('--sample_mode', type=str, default="oversample")
    parser.add_argument('--num_gpus', type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    generate(args)
