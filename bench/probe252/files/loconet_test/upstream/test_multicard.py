"""Multi-GPU evaluation of a LoCoNet checkpoint on AVA-ActiveSpeaker val/test.

    torchrun --nproc_per_node 4 test_multicard.py --cfg configs/multi.yaml RESUME_PATH exps/model_0025.model

Every rank scores a shard of the val set, predictions are gathered on rank 0
which writes the csv and calls the official AVA evaluation script.
Also works with a single GPU: CUDA_VISIBLE_DEVICES=0 python test_multicard.py ...
"""
import os
import sys
import time
import argparse
import warnings
import subprocess
from subprocess import PIPE

import numpy as np
import pandas
import torch
import torch.distributed as dist
import tqdm
from torch.utils.data.distributed import DistributedSampler

from dlhammer import bootstrap
from utils.tools import init_args
from dataLoader_multiperson import val_loader
from loconet import Loconet

os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")


def is_dist():
    return dist.is_available() and dist.is_initialized()


def init_distributed():
    if "LOCAL_RANK" not in os.environ:
        return 0, 0, 1
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return local_rank, rank, world_size


def load_model(cfg, device):
    model = Loconet(cfg)
    state = torch.load(cfg.RESUME_PATH, map_location="cuda:%d" % device.index)
    new_state = {}
    for k, v in state.items():
        # checkpoints are saved from the DDP-wrapped `loconet` object
        k = k.replace("model.module.", "")
        new_state[k] = v
    info = model.load_state_dict(new_state, strict=False)
    print("loaded %s: %s" % (cfg.RESUME_PATH, info))
    return model.to(device).eval()


@torch.no_grad()
def score_shard(model, loader, device, tta=False, rank=0):
    """Returns a list of (global_index, score) for the samples of this rank."""
    results = []
    it = tqdm.tqdm(loader, disable=rank != 0)
    for batch_idx, (audioFeature, visualFeature, labels, masks, index) in enumerate(it):
        audioFeature = audioFeature.to(device, non_blocking=True)
        visualFeature = visualFeature.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        b, s, t = visualFeature.shape[0], visualFeature.shape[1], visualFeature.shape[2]
        v = visualFeature.view(b * s, *visualFeature.shape[2:])
        enc = model.model
        audioEmbed = enc.forward_audio_frontend(audioFeature)
        visualEmbed = enc.forward_visual_frontend(v)
        if tta:
            visualEmbed = 0.5 * (visualEmbed + enc.forward_visual_frontend(torch.flip(v, dims=[-1])))
        audioEmbed = audioEmbed.repeat(s, 1, 1)
        audioEmbed, visualEmbed = enc.forward_cross_attention(audioEmbed, visualEmbed)
        outsAV = enc.forward_audio_visual_backend(audioEmbed, visualEmbed, b, s)
        outsAV = outsAV.view(b, s, t, -1)[:, 0, :, :].reshape(b * t, -1)
        m = masks.view(b, s, t)[:, 0, :].reshape(b * t)
        _, predScore, _, _ = model.lossAV.forward(outsAV, labels.view(b, s, t)[:, 0, :].reshape(b * t).to(device), m)
        predScore = predScore[:, -1].float().cpu().numpy()
        m = m.bool().cpu().numpy()
        per_sample = predScore.reshape(b, t)
        for j in range(b):
            results.append((int(index[j]), per_sample[j][m.reshape(b, t)[j]]))
    return results


def gather_results(local_results, world_size):
    if world_size == 1:
        return local_results
    gathered = [None for _ in range(world_size)]
    dist.all_gather_object(gathered, local_results)
    merged = []
    for part in gathered:
        merged.extend(part)
    return merged


def write_and_evaluate(cfg, merged, out_csv):
    merged.sort(key=lambda x: x[0])
    seen, predScores = set(), []
    for idx, scores in merged:
        if idx in seen:     # DistributedSampler pads the last shard with duplicates
            continue
        seen.add(idx)
        predScores.extend(scores.tolist())
    evalLines = open(cfg.evalOrig).read().splitlines()[1:]
    evalRes = pandas.read_csv(cfg.evalOrig)
    if len(predScores) != len(evalLines):
        print("WARNING: %d predictions for %d rows" % (len(predScores), len(evalLines)))
    evalRes['score'] = pandas.Series(predScores)
    evalRes['label'] = pandas.Series(['SPEAKING_AUDIBLE' for _ in evalLines])
    evalRes.drop(['label_id'], axis=1, inplace=True)
    evalRes.drop(['instance_id'], axis=1, inplace=True)
    evalRes.to_csv(out_csv, index=False)
    cmd = "python -O utils/get_ava_active_speaker_performance.py -g %s -p %s " % (cfg.evalOrig, out_csv)
    out = str(subprocess.run(cmd, shell=True, stdout=PIPE, stderr=PIPE).stdout)
    return float(out.split(' ')[2][:5])


def main():
    warnings.filterwarnings("ignore")
    cfg = bootstrap(print_cfg=False)
    cfg = init_args(cfg)
    local_rank, rank, world_size = init_distributed()
    device = torch.device("cuda", local_rank)

    loader = val_loader(cfg, trialFileName=cfg.evalTrialAVA,
                        audioPath=os.path.join(cfg.audioPathAVA, cfg.evalDataType),
                        visualPath=os.path.join(cfg.visualPathAVA, cfg.evalDataType),
                        num_speakers=cfg.MODEL.NUM_SPEAKERS, return_index=True)
    sampler = DistributedSampler(loader, num_replicas=world_size, rank=rank, shuffle=False) if world_size > 1 else None
    valLoader = torch.utils.data.DataLoader(loader, batch_size=cfg.VAL.BATCH_SIZE, shuffle=False, sampler=sampler,
                                            num_workers=cfg.NUM_WORKERS, pin_memory=True)

    model = load_model(cfg, device)
    t0 = time.time()
    local = score_shard(model, valLoader, device, tta=cfg.get("TTA", False), rank=rank)
    torch.cuda.synchronize()
    merged = gather_results(local, world_size)
    if rank == 0:
        out_csv = os.path.join(cfg.WORKSPACE, "%s_res.csv" % cfg.evalDataType)
        mAP = write_and_evaluate(cfg, merged, out_csv)
        print("%s mAP %.2f%% (%d GPUs, %.1f min)" % (cfg.evalDataType, mAP, world_size, (time.time() - t0) / 60))
    if is_dist():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
