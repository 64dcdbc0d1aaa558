# Copyright 3D-Speaker (https://github.com/alibaba-damo-academy/3D-Speaker). All Rights Reserved.
# Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0)

"""
This script will download pretrained models from modelscope (https://www.modelscope.cn/models)
and perform speaker diarization on the input audio. Overlap detection uses pyannote's
segmentation-3.0 and needs a HuggingFace access token.
Usage:
    1. python infer_diarization.py --wav [wav_list OR wav_path] --out_dir [out_dir]
    2. python infer_diarization.py --wav [wav_list OR wav_path] --out_dir [out_dir] --include_overlap --hf_access_token [hf_access_token]
    3. python infer_diarization.py --wav [wav_list OR wav_path] --out_dir [out_dir] --nprocs [n]
"""

import os
import sys
import argparse
import json
import numpy as np
import torch
import torch.multiprocessing as mp
import torchaudio

from modelscope.hub.snapshot_download import snapshot_download
from modelscope.pipelines import pipeline
from modelscope.utils.constant import Tasks

sys.path.append('%s/../..'%os.path.dirname(__file__))
from speakerlab.models.campplus.DTDNN import CAMPPlus
from speakerlab.process.processor import FBank
from speakerlab.process.cluster import CommonClustering
from speakerlab.utils.utils import circle_pad, merge_vad, silent_print
from speakerlab.utils.fileio import load_audio

parser = argparse.ArgumentParser(description='Speaker diarization inference.')
parser.add_argument('--wav', type=str, required=True, help='Input wavs')
parser.add_argument('--out_dir', type=str, required=True, help='Out results dir')
parser.add_argument('--out_type', choices=['rttm', 'json'], default='rttm', type=str, help='Results format, rttm or json')
parser.add_argument('--include_overlap', action='store_true', help='Include overlapping region')
parser.add_argument('--hf_access_token', type=str, help='hf_access_token for pyannote/segmentation-3.0 model. It\'s required if --include_overlap is specified')
parser.add_argument('--diable_progress_bar', action='store_true', help='Close the progress bar')
parser.add_argument('--nprocs', default=None, type=int, help='Num of procs')
parser.add_argument('--speaker_num', default=None, type=int, help='Oracle num of speaker')


def get_speaker_embedding_model(device:torch.device = None, cache_dir:str = None):
    conf = {
        'model_id': 'iic/speech_campplus_sv_zh_en_16k-common_advanced',
        'revision': 'v1.0.0',
        'model_ckpt': 'campplus_cn_en_common.pt',
        'embedding_model': {
            'obj': 'speakerlab.models.campplus.DTDNN.CAMPPlus',
            'args': {
                'feat_dim': 80,
                'embedding_size': 192,
            },
        },
        'feature_extractor': {
            'obj': 'speakerlab.process.processor.FBank',
            'args': {
                'n_mels': 80,
                'sample_rate': 16000,
                'mean_nor': True,
                },
        }
    }

    cache_dir = snapshot_download(conf['model_id'], revision=conf['revision'], cache_dir=cache_dir)
    pretrained_state = torch.load(os.path.join(cache_dir, conf['model_ckpt']), map_location='cpu')

    embedding_model = CAMPPlus(**conf['embedding_model']['args'])
    embedding_model.load_state_dict(pretrained_state)
    embedding_model.eval()
    if device is not None:
        embedding_model.to(device)
    return embedding_model


def get_voice_activity_detection_model(device: torch.device=None, cache_dir:str = None):
    conf = {
        'model_id': 'iic/speech_fsmn_vad_zh-cn-16k-common-pytorch',
        'revision': 'v2.0.4',
    }
    cache_dir = snapshot_download(conf['model_id'], revision=conf['revision'], cache_dir=cache_dir)
    with silent_print():
        vad_pipeline = pipeline(
            task=Tasks.voice_activity_detection,
            model=cache_dir,
            device = 'cpu' if device is None else '%s:%s'%(device.type, device.index) if device.index else device.type,
            disable_pbar=True,
            disable_update=True,
        )
    return vad_pipeline


def get_segmentation_model(use_auth_token, device:torch.device=None):
    from pyannote.audio import Model, Inference
    segmentation_params = {
        'segmentation':'pyannote/segmentation-3.0',
        'segmentation_batch_size':32,
        'use_auth_token':use_auth_token,
        }
    model = Model.from_pretrained(
        segmentation_params['segmentation'],
        use_auth_token=segmentation_params['use_auth_token'],
        strict=False,
        )
    segmentation = Inference(
        model,
        duration=model.specifications.duration,
        step=0.1 * model.specifications.duration,
        skip_aggregation=True,
        batch_size=segmentation_params['segmentation_batch_size'],
        device = device,
        )
    return segmentation


def get_cluster_backend():
    conf = {
        'cluster':{
            'obj': 'speakerlab.process.cluster.CommonClustering',
            'args':{
                'cluster_type': 'spectral',
                'mer_cos': 0.8,
                'min_num_spks': 1,
                'max_num_spks': 15,
                'min_cluster_size': 4,
                'oracle_num': None,
                'pval': 0.012,
            }
        }
    }
    return CommonClustering(**conf['cluster']['args'])


class Diarization3Dspeaker():
    """
    This class is designed to handle the speaker diarization process,
    which involves identifying and segmenting audio by speaker identities.
    Args:
        device (str, default=None): The device on which models will run.
        include_overlap (bool, default=False): Indicates whether to include overlapping speech segments.
        hf_access_token (str, default=None): Access token for HuggingFace, required if include_overlap is True.
        speaker_num (int, default=None): Specify number of speakers.
        model_cache_dir (str, default=None): If specified, the pretrained model will be downloaded to this directory.
    """
    def __init__(self, device=None, include_overlap=False, hf_access_token=None, speaker_num=None, model_cache_dir=None):
        if include_overlap and hf_access_token is None:
            raise ValueError("hf_access_token is required when include_overlap is True.")

        self.device = self.normalize_device(device)
        self.include_overlap = include_overlap

        self.embedding_model = get_speaker_embedding_model(self.device, model_cache_dir)
        self.vad_model = get_voice_activity_detection_model(self.device, model_cache_dir)
        self.cluster = get_cluster_backend()

        if include_overlap:
            self.segmentation_model = get_segmentation_model(hf_access_token, self.device)

        self.batchsize = 64
        self.fs = 16000
        self.speaker_num = speaker_num
        self.feature_extractor = FBank(80, sample_rate=self.fs, mean_nor=True)

    def __call__(self, wav, wav_fs=None, speaker_num=None):
        wav_data = load_audio(wav, wav_fs, self.fs)

        # stage 1-1: do vad
        vad_time = self.do_vad(wav_data)
        if self.include_overlap:
            # stage 1-2: do segmentation
            segmentations, count = self.do_segmentation(wav_data)
            valid_field = get_valid_field(count)
            vad_time = merge_vad(vad_time, valid_field)

        # stage 2: prepare subseg
        chunks = [c for (st, ed) in vad_time for c in self.chunk(st, ed)]

        # stage 3: extract embeddings
        embeddings = self.do_emb_extraction(chunks, wav_data)

        # stage 4: clustering
        speaker_num, output_field_labels = self.do_clustering(chunks, embeddings, speaker_num)

        return output_field_labels

    def do_vad(self, wav):
        # wav: [1, T]
        vad_results = self.vad_model(wav[0])[0]
        vad_time = [[vad_t[0]/1000, vad_t[1]/1000] for vad_t in vad_results['value']]
        return vad_time

    def do_segmentation(self, wav):
        from pyannote.audio import Inference
        segmentations = self.segmentation_model({'waveform':wav, 'sample_rate': self.fs})
        frame_windows = self.segmentation_model.model.receptive_field
        count = Inference.aggregate(
            np.sum(segmentations, axis=-1, keepdims=True),
            frame_windows,
            hamming=False,
            missing=0.0,
            skip_average=False,
        )
        return segmentations, count

    def chunk(self, st, ed, dur=1.5, step=0.75):
        chunks = []
        subseg_st = st
        while subseg_st + dur < ed + step:
            subseg_ed = min(subseg_st + dur, ed)
            chunks.append([subseg_st, subseg_ed])
            subseg_st += step
        return chunks

    def do_emb_extraction(self, chunks, wav):
        # chunks: [[st1, ed1]...]
        # wav: [1, T]
        wavs = [wav[0, int(st*self.fs):int(ed*self.fs)] for st, ed in chunks]
        max_len = max([x.shape[0] for x in wavs])
        wavs = [circle_pad(x, max_len) for x in wavs]
        wavs = torch.stack(wavs).unsqueeze(1)

        embeddings = []
        batch_st = 0
        with torch.no_grad():
            while batch_st < len(chunks):
                wavs_batch = wavs[batch_st: batch_st+self.batchsize].to(self.device)
                feats_batch = torch.vmap(self.feature_extractor)(wavs_batch)
                embeddings_batch = self.embedding_model(feats_batch).cpu()
                embeddings.append(embeddings_batch)
                batch_st += self.batchsize
        embeddings = torch.cat(embeddings, dim=0).numpy()
        return embeddings

    def do_clustering(self, chunks, embeddings, speaker_num=None):
        cluster_labels = self.cluster(
            embeddings,
            speaker_num = speaker_num if speaker_num is not None else self.speaker_num
        )
        speaker_num = cluster_labels.max()+1
        output_field_labels = [[i[0], i[1], int(j)] for i, j in zip(chunks, cluster_labels)]
        output_field_labels = compressed_seg(output_field_labels)
        return speaker_num, output_field_labels

    def normalize_device(self, device=None):
        if device is None:
            device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
        elif isinstance(device, str):
            device = torch.device(device)
        else:
            assert isinstance(device, torch.device)
        return device


def get_valid_field(count):
    valid_field = []
    start = None
    for i, (c, data) in enumerate(count):
        if data.item()==0 or i==len(count)-1:
            if start is not None:
                end = c.middle
                valid_field.append([start, end])
                start = None
        else:
            if start is None:
                start = c.middle
    return valid_field


def compressed_seg(seg_list):
    new_seg_list = []
    for i, seg in enumerate(seg_list):
        seg_st, seg_ed, cluster_id = seg
        if i == 0:
            new_seg_list.append([seg_st, seg_ed, cluster_id])
        elif cluster_id == new_seg_list[-1][2]:
            if seg_st > new_seg_list[-1][1]:
                new_seg_list.append([seg_st, seg_ed, cluster_id])
            else:
                new_seg_list[-1][1] = seg_ed
        else:
            if seg_st < new_seg_list[-1][1]:
                p = (new_seg_list[-1][1]+seg_st) / 2
                new_seg_list[-1][1] = p
                seg_st = p
            new_seg_list.append([seg_st, seg_ed, cluster_id])
    return new_seg_list


def main_process(rank, nprocs, args, wav_list):
    ngpus = torch.cuda.device_count()
    if ngpus > 0:
        print(f'[INFO]: Use {ngpus} GPUs')
        device = torch.device('cuda:%d'%(rank%ngpus))
    else:
        print('[INFO]: No GPUs detected. Use CPU.')
        device = torch.device('cpu')
    diarization = Diarization3Dspeaker(device, args.include_overlap, args.hf_access_token, args.speaker_num)

    wav_list = wav_list[rank::nprocs]
    if rank == 0 and (not args.diable_progress_bar):
        from tqdm import tqdm
        wav_list = tqdm(wav_list, desc=f"Rank 0 processing")
    for wav_path in wav_list:
        output = diarization(wav_path)
        # write to file
        wav_id = os.path.basename(wav_path).rsplit('.', 1)[0]
        if args.out_dir is not None:
            out_dir = args.out_dir
        else:
            out_dir = os.path.dirname(wav_path)
        os.makedirs(out_dir, exist_ok=True)
        if args.out_type == 'rttm':
            line_str ="SPEAKER {} 0 {:.3f} {:.3f} <NA> <NA> {:d} <NA> <NA>\n"
            out_path = os.path.join(out_dir, wav_id+'.rttm')
            with open(out_path, 'w') as f:
                for seg in output:
                    seg_st, seg_ed, cluster_id = seg
                    f.write(line_str.format(wav_id, seg_st, seg_ed-seg_st, cluster_id))
        elif args.out_type == 'json':
            out_path = os.path.join(out_dir, wav_id+'.json')
            out_json = {}
            for seg in output:
                seg_st, seg_ed, cluster_id = seg
                item = {
                    'start': seg_st,
                    'stop': seg_ed,
                    'speaker': cluster_id,
                }
                segid = wav_id+'_'+str(round(seg_st, 3))+\
                    '_'+str(round(seg_ed, 3))
                out_json[segid] = item
            with open(out_path, mode='w') as f:
                json.dump(out_json, f, indent=2)


def main():
    args = parser.parse_args()
    if args.wav.endswith('.wav'):
        # input is a wav file
        wav_list = [args.wav]
    else:
        try:
            # input should be a wav list
            with open(args.wav,'r') as f:
                wav_list = [i.strip() for i in f.readlines()]
        except:
            raise Exception('[ERROR]: Input should be a wav file or a wav list.')
    assert len(wav_list) > 0

    if args.nprocs is None:
        ngpus = torch.cuda.device_count()  # one worker per visible gpu
        if ngpus > 0:
            args.nprocs = ngpus
        else:
            args.nprocs = 1
    args.nprocs = min(len(wav_list), args.nprocs)
    mp.spawn(main_process, nprocs=args.nprocs, args=(args.nprocs, args, wav_list))


if __name__ == '__main__':
    main()
