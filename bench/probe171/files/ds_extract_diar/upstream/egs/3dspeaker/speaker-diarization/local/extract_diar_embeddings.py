# Copyright 3D-Speaker (https://github.com/alibaba-damo-academy/3D-Speaker). All Rights Reserved.
# Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0)

"""
This script uses pretrained models to perform speaker embedding extraction on the
sub-segments produced by the VAD + chunking stage. Each rank processes its own
share of the wavs; ranks are launched by torchrun and only talk to each other for
the final barrier (gloo is enough for that).
"""

import os
import sys
import argparse
import pickle
import numpy as np
import torch
import torch.distributed as dist
import torchaudio

try:
    from speakerlab.process.processor import FBank
except ImportError:
    sys.path.append('%s/../../../..'%os.path.dirname(__file__))
    from speakerlab.process.processor import FBank

from speakerlab.utils.builder import dynamic_import
from speakerlab.utils.utils import circle_pad, get_logger
from speakerlab.utils.config import yaml_config_loader, Config

from modelscope.hub.snapshot_download import snapshot_download

parser = argparse.ArgumentParser(description='Extract speaker embeddings for diarization.')
parser.add_argument('--conf', default=None, help='Config file')
parser.add_argument('--model_id', default=None, help='Model id in modelscope')
parser.add_argument('--pretrained_model', default=None, type=str, help='Pretrained model path')
parser.add_argument('--subseg_json', default='', type=str, help='Sub-segments info')
parser.add_argument('--embs_out', default='', type=str, help='Out embedding dir')
parser.add_argument('--batchsize', default=64, type=int, help='Batchsize for extracting embeddings')
parser.add_argument('--use_gpu', action='store_true', help='Use gpu or not')
parser.add_argument('--gpu', nargs='+', help='GPU id to use.')
parser.add_argument('--fp16', action='store_true', help='Run the embedding model in half precision')

FEATURE_COMMON = {
    'obj': 'speakerlab.process.processor.FBank',
    'args': {
        'n_mels': 80,
        'sample_rate': 16000,
        'mean_nor': True,
    },
}

CAMPPLUS_COMMON = {
    'obj': 'speakerlab.models.campplus.DTDNN.CAMPPlus',
    'args': {
        'feat_dim': 80,
        'embedding_size': 192,
    },
}

supports = {
    'iic/speech_campplus_sv_zh-cn_16k-common': {
        'revision': 'v1.0.0',
        'model': CAMPPLUS_COMMON,
        'model_pt': 'campplus_cn_common.bin',
    },
    'iic/speech_campplus_sv_zh_en_16k-common_advanced': {
        'revision': 'v1.0.0',
        'model': CAMPPLUS_COMMON,
        'model_pt': 'campplus_cn_en_common.pt',
    },
}


def main():
    args = parser.parse_args()
    rank = int(os.environ['LOCAL_RANK'])
    threads_num = int(os.environ['WORLD_SIZE'])
    dist.init_process_group(backend='gloo')

    logger = get_logger()

    if args.model_id is not None:
        # use the model from modelscope
        assert args.model_id in supports, "Model id not currently supported."
        conf = supports[args.model_id]
        model_dir = snapshot_download(args.model_id, revision=conf['revision'])
        pretrained_model_path = os.path.join(model_dir, conf['model_pt'])
        pretrained_state = torch.load(pretrained_model_path, map_location='cpu')
        embedding_model = dynamic_import(conf['model']['obj'])(**conf['model']['args'])
        feature_extractor = FBank(**FEATURE_COMMON['args'])
    else:
        # use the local pretrained model
        config = Config(yaml_config_loader(args.conf))
        pretrained_state = torch.load(args.pretrained_model, map_location='cpu')
        embedding_model = dynamic_import(config.embedding_model['obj'])(**config.embedding_model['args'])
        feature_extractor = dynamic_import(config.feature_extractor['obj'])(**config.feature_extractor['args'])

    embedding_model.load_state_dict(pretrained_state)
    embedding_model.eval()

    if args.use_gpu:
        if torch.cuda.is_available():
            gpu = int(args.gpu[rank % len(args.gpu)])
            device = torch.device('cuda', gpu)
        else:
            msg = 'No cuda device is detected. Using the cpu device.'
            if rank == 0:
                logger.warning(msg)
            device = torch.device('cpu')
    else:
        device = torch.device('cpu')
    embedding_model.to(device)
    if args.fp16 and device.type == 'cuda':
        embedding_model.half()

    with open(args.subseg_json, "r") as f:
        import json
        subseg_json = json.load(f)

    all_keys = subseg_json.keys()
    A = [word.rsplit('_', 2)[0] for word in all_keys]
    all_rec_ids = list(set(A))
    all_rec_ids.sort()
    if len(all_rec_ids) <= rank:
        print("WARNING: The number of threads exceeds the number of files")
        sys.exit()

    local_rec_ids = all_rec_ids[rank::threads_num]

    os.makedirs(args.embs_out, exist_ok=True)
    for rec_id in local_rec_ids:
        meta = {}
        subsegs = [i for i in subseg_json.keys() if i.rsplit('_', 2)[0] == rec_id]
        subsegs = sorted(subsegs, key=lambda x: float(x.rsplit('_', 2)[1]))
        embs_file = os.path.join(args.embs_out, rec_id + '.pkl')
        if os.path.isfile(embs_file):
            continue

        wav_path = subseg_json[subsegs[0]]['file']
        wav, fs = torchaudio.load(wav_path)
        if fs != 16000:
            wav = torchaudio.functional.resample(wav, fs, 16000)
            fs = 16000
        # take the first channel
        wav = wav[0]

        wavs = [wav[int(float(subseg_json[i]['start'])*fs):int(float(subseg_json[i]['stop'])*fs)] for i in subsegs]
        max_len = max([x.shape[0] for x in wavs])
        wavs = [circle_pad(x, max_len) for x in wavs]
        wavs = torch.stack(wavs).unsqueeze(1)

        embeddings = []
        batch_st = 0
        with torch.no_grad():
            while batch_st < len(subsegs):
                wavs_batch = wavs[batch_st: batch_st+args.batchsize].to(device)
                feats_batch = torch.vmap(feature_extractor)(wavs_batch)
                if args.fp16 and device.type == 'cuda':  # match the model dtype
                    feats_batch = feats_batch.half()
                embeddings_batch = embedding_model(feats_batch).float().cpu()
                embeddings.append(embeddings_batch)
                batch_st += args.batchsize
        embeddings = torch.cat(embeddings, dim=0).numpy()

        meta = {
            'subseg_keys': subsegs,
            'embeddings': embeddings,
            'times': [[float(subseg_json[i]['start']), float(subseg_json[i]['stop'])] for i in subsegs],
        }
        with open(embs_file, "wb") as f:
            pickle.dump(meta, f)

    dist.barrier()
    if rank == 0:
        logger.info("Embedding extraction finished.")


if __name__ == "__main__":
    main()
