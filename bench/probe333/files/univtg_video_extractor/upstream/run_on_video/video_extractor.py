"""Extract CLIP (ViT-B/32) and SlowFast (R50) clip-level features for a single video.

Used by the demo (main_gradio.py) and by scripts/extract_custom.sh to prepare
features for new videos in the UniVTG format:
    <save_dir>/vid_clip/<vid>.npz      {"features": (T, 512)}
    <save_dir>/vid_slowfast/<vid>.npz  {"features": (T, 2304)}
    <save_dir>/txt_clip/<qid>.npz      {"last_hidden_state": (L, 512), "pooler_output": (512,)}

Requires a GPU with >= 8GB memory for the default batch size.
"""
import os
import argparse
import numpy as np
import torch as th
import torch.nn.functional as F

from run_on_video import clip
from run_on_video.video_loader import VideoLoader
from run_on_video.preprocessing import Preprocessing
from run_on_video.random_sequence_shuffler import RandomSequenceSampler
from run_on_video.slowfast.config.defaults import get_cfg
import run_on_video.slowfast.utils.checkpoint as cu
from run_on_video.slowfast.models import build_model as build_slowfast

device = th.device("cuda" if th.cuda.is_available() else "cpu")
th.backends.cudnn.benchmark = True


def get_args():
    parser = argparse.ArgumentParser(description="Easy video feature extractor")
    parser.add_argument("--vid_path", type=str, required=True, help="input video (mp4/webm/mkv)")
    parser.add_argument("--save_dir", type=str, default="./tmp", help="output directory")
    parser.add_argument("--clip_len", type=float, default=2.0, help="seconds per clip")
    parser.add_argument("--batch_size", type=int, default=64, help="batch size (frames)")
    parser.add_argument("--half_precision", type=int, default=1, help="output half precision float")
    parser.add_argument("--num_decoding_thread", type=int, default=4, help="num parallel threads for video decoding")
    parser.add_argument("--l2_normalize", type=int, default=0, help="l2 normalize feature")
    parser.add_argument("--slowfast_cfg", type=str,
                        default="run_on_video/slowfast/configs/Kinetics/SLOWFAST_8x8_R50.yaml")
    parser.add_argument("--slowfast_ckpt", type=str, default="run_on_video/weights/SLOWFAST_8x8_R50.pkl")
    parser.add_argument("--clip_model", type=str, default="ViT-B/32")
    return parser.parse_args()


def load_clip(name="ViT-B/32"):
    clip_model, _ = clip.load(name, device=device, jit=False)
    clip_model.eval()
    return clip_model


def load_slowfast(cfg_file, ckpt_path):
    cfg = get_cfg()
    cfg.merge_from_file(cfg_file)
    cfg.NUM_GPUS = 1
    cfg.TEST.CHECKPOINT_FILE_PATH = ckpt_path
    cfg.TEST.CHECKPOINT_TYPE = "caffe2"
    model = build_slowfast(cfg, gpu_id=0)
    cu.load_test_checkpoint(cfg, model)
    model.eval()
    model = model.cuda()
    return model, cfg


def pack_pathway_output(cfg, frames):
    """frames: (C, T, H, W) -> [slow, fast]"""
    fast_pathway = frames
    slow_pathway = th.index_select(
        frames, 1,
        th.linspace(0, frames.shape[1] - 1, frames.shape[1] // cfg.SLOWFAST.ALPHA).long().to(frames.device),
    )
    return [slow_pathway, fast_pathway]


@th.no_grad()
def vid2clip(model, vid_path, output_file, args):
    dataset = VideoLoader(
        vid_path,
        framerate=1 / args.clip_len,
        size=224,
        centercrop=True,
        overwrite=True,
    )
    n_dataset = len(dataset)
    sampler = RandomSequenceSampler(n_dataset, 10)
    loader = th.utils.data.DataLoader(
        dataset,
        batch_size=1,
        shuffle=False,
        num_workers=args.num_decoding_thread,
        sampler=sampler if n_dataset > 10 else None,
    )
    preprocess = Preprocessing("2d")
    for k, data in enumerate(loader):
        input_file = data["input"][0]
        if len(data["video"].shape) > 3:
            video = data["video"].squeeze()
            if len(video.shape) == 4:
                video = preprocess(video)
                n_chunk = len(video)
                vid_features = th.cuda.FloatTensor(n_chunk, 512).fill_(0)
                n_iter = int(np.ceil(n_chunk / float(args.batch_size)))
                for i in range(n_iter):
                    min_ind = i * args.batch_size
                    max_ind = (i + 1) * args.batch_size
                    video_batch = video[min_ind:max_ind].to(device, non_blocking=True)
                    batch_features = model.encode_image(video_batch)
                    if args.l2_normalize:
                        batch_features = F.normalize(batch_features, dim=1)
                    vid_features[min_ind:max_ind] = batch_features
                vid_features = vid_features.cpu().numpy()
                if args.half_precision:
                    vid_features = vid_features.astype("float16")
                np.savez(output_file, features=vid_features)
                return vid_features
        else:
            print("Video {} already processed / could not be decoded.".format(input_file))
    return None


@th.no_grad()
def vid2slowfast(model, cfg, vid_path, output_file, args):
    dataset = VideoLoader(
        vid_path,
        framerate=30,
        size=224,
        centercrop=True,
        overwrite=True,
    )
    data = dataset[0]
    video = data["video"]  # (T, 3, H, W) uint8 at 30fps
    preprocess = Preprocessing("3d", target_fps=30, size=224, clip_len=args.clip_len, padding_mode="tile")
    video = preprocess(video)  # (n_clips, 3, T, H, W)
    n_chunk = len(video)
    features = []
    for i in range(0, n_chunk, 8):
        clips = video[i:i + 8].cuda()
        inputs = pack_pathway_output(cfg, clips.transpose(0, 1).contiguous())
        inputs = [x.transpose(0, 1).contiguous() for x in inputs]
        feat = model(inputs)  # (b, 2304)
        features.append(feat.cpu())
    features = th.cat(features, dim=0).numpy()
    if args.half_precision:
        features = features.astype("float16")
    np.savez(output_file, features=features)
    th.cuda.empty_cache()
    return features


@th.no_grad()
def txt2clip(model, text, output_file):
    encoded_texts = clip.tokenize(text).to(device)
    text_feature = model.encode_text(encoded_texts)["last_hidden_state"]
    valid_lengths = (encoded_texts != 0).sum(1).tolist()[0]
    text_feature = text_feature[0, :valid_lengths].cpu().numpy()
    np.savez(output_file, features=text_feature)
    return text_feature


def main():
    args = get_args()
    vid = os.path.splitext(os.path.basename(args.vid_path))[0]
    for sub in ["vid_clip", "vid_slowfast", "txt_clip"]:
        os.makedirs(os.path.join(args.save_dir, sub), exist_ok=True)

    print("Running on", device, "-", th.cuda.get_device_name(0))
    clip_model = load_clip(args.clip_model)
    # tensor cores (sm_70+) make the fp16 CLIP forward ~2x faster; older cards (e.g. P100) run it in fp32
    if th.cuda.get_device_capability(0)[0] < 7:
        clip_model.float()
    vid2clip(clip_model, args.vid_path, os.path.join(args.save_dir, "vid_clip", vid + ".npz"), args)

    sf_model, sf_cfg = load_slowfast(args.slowfast_cfg, args.slowfast_ckpt)
    vid2slowfast(sf_model, sf_cfg, args.vid_path, os.path.join(args.save_dir, "vid_slowfast", vid + ".npz"), args)
    print("Saved features to", args.save_dir)


if __name__ == "__main__":
    main()
