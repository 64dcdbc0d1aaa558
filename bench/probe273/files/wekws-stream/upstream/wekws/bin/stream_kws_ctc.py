# Copyright (c) 2023 Jing Du(thuduj12@163.com)
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import argparse
import logging
import math
import os
import struct
import time
import wave
from collections import defaultdict

import numpy as np
import torch
import torchaudio.compliance.kaldi as kaldi
import yaml

from wekws.model.kws_model import init_model
from wekws.utils.checkpoint import load_checkpoint


def get_args():
    parser = argparse.ArgumentParser(description='streaming keyword spotting with ctc prefix beam search')
    parser.add_argument('--config', required=True, help='config file')
    parser.add_argument('--ckpt_path', required=True, help='checkpoint (.pt) or jit model (.zip)')
    parser.add_argument('--token_file', required=True, help='tokens.txt')
    parser.add_argument('--lexicon_file', required=True, help='lexicon.txt')
    parser.add_argument('--keywords', required=True, help='comma separated keywords')
    parser.add_argument('--wav_path', required=True, help='test wav')
    parser.add_argument('--threshold', type=float, default=0.0)
    parser.add_argument('--gpu', type=int, default=-1, help='gpu id, -1 for cpu')
    parser.add_argument('--jit_model', action='store_true', default=False)
    parser.add_argument('--chunk_ms', type=int, default=300, help='audio chunk fed per call')
    return parser.parse_args()


def read_token(token_file):
    tokens_table = {}
    with open(token_file, 'r', encoding='utf8') as fin:
        for line in fin:
            arr = line.strip().split()
            assert len(arr) == 2
            tokens_table[arr[0]] = int(arr[1]) - 1
    return tokens_table


def read_lexicon(lexicon_file):
    lexicon_table = {}
    with open(lexicon_file, 'r', encoding='utf8') as fin:
        for line in fin:
            arr = line.strip().replace('\t', ' ').split()
            assert len(arr) >= 2
            lexicon_table[arr[0]] = arr[1:]
    return lexicon_table


def is_sublist(main_list, check_list):
    if len(main_list) < len(check_list):
        return -1
    if len(main_list) == len(check_list):
        return 0 if main_list == check_list else -1
    for i in range(len(main_list) - len(check_list)):
        if main_list[i] == check_list[0]:
            for j in range(len(check_list)):
                if main_list[i + j] != check_list[j]:
                    break
            else:
                return i
    return -1


def ctc_prefix_beam_search(t, probs, cur_hyps, keywords_idxset, score_beam_size):
    '''One step of CTC prefix beam search restricted to keyword tokens.

    probs is a 1-D CPU tensor for frame t; hyps are kept as python tuples.
    '''
    next_hyps = defaultdict(lambda: (0.0, 0.0, []))
    top_k_probs, top_k_index = probs.topk(score_beam_size)
    filter_probs, filter_index = [], []
    for prob, idx in zip(top_k_probs.tolist(), top_k_index.tolist()):
        if keywords_idxset is not None:
            if prob > 0.05 and idx in keywords_idxset:
                filter_probs.append(prob)
                filter_index.append(idx)
        else:
            if prob > 0.05:
                filter_probs.append(prob)
                filter_index.append(idx)
    if len(filter_index) == 0:
        return cur_hyps

    for s in filter_index:
        ps = probs[s].item()
        for prefix, (pb, pnb, cur_nodes) in cur_hyps:
            last = prefix[-1] if len(prefix) > 0 else None
            if s == 0:  # blank
                n_pb, n_pnb, nodes = next_hyps[prefix]
                n_pb = n_pb + pb * ps + pnb * ps
                nodes = cur_nodes.copy()
                next_hyps[prefix] = (n_pb, n_pnb, nodes)
            elif s == last:
                if not math.isclose(pnb, 0.0, abs_tol=0.000001):
                    n_pb, n_pnb, nodes = next_hyps[prefix]
                    n_pnb = n_pnb + pnb * ps
                    nodes = cur_nodes.copy()
                    if ps > nodes[-1]['prob']:
                        nodes[-1]['prob'] = ps
                        nodes[-1]['frame'] = t
                    next_hyps[prefix] = (n_pb, n_pnb, nodes)
                if not math.isclose(pb, 0.0, abs_tol=0.000001):
                    n_prefix = prefix + (s, )
                    n_pb, n_pnb, nodes = next_hyps[n_prefix]
                    n_pnb = n_pnb + pb * ps
                    nodes = cur_nodes.copy()
                    nodes.append(dict(token=s, frame=t, prob=ps))
                    next_hyps[n_prefix] = (n_pb, n_pnb, nodes)
            else:
                n_prefix = prefix + (s, )
                n_pb, n_pnb, nodes = next_hyps[n_prefix]
                if nodes:
                    if ps > nodes[-1]['prob']:
                        nodes.pop()
                        nodes.append(dict(token=s, frame=t, prob=ps))
                else:
                    nodes = cur_nodes.copy()
                    nodes.append(dict(token=s, frame=t, prob=ps))
                n_pnb = n_pnb + pb * ps + pnb * ps
                next_hyps[n_prefix] = (n_pb, n_pnb, nodes)

    next_hyps = sorted(next_hyps.items(), key=lambda x: (x[1][0] + x[1][1]), reverse=True)
    return next_hyps


class KeyWordSpotter(torch.nn.Module):

    def __init__(self, ckpt_path, config_path, token_path, lexicon_path,
                 threshold, min_frames=5, max_frames=250, interval_frames=50,
                 score_beam=3, path_beam=20, gpu=-1, is_jit_model=False):
        super().__init__()
        os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
        with open(config_path, 'r') as fin:
            configs = yaml.load(fin, Loader=yaml.FullLoader)
        dataset_conf = configs['dataset_conf']

        # feature related
        self.sample_rate = 16000
        self.wave_remained = np.array([])
        self.num_mel_bins = dataset_conf['feature_extraction_conf']['num_mel_bins']
        self.frame_length = dataset_conf['feature_extraction_conf']['frame_length']  # in ms
        self.frame_shift = dataset_conf['feature_extraction_conf']['frame_shift']  # in ms
        self.downsampling = dataset_conf.get('frame_skip', 1)
        self.resolution = self.frame_shift / 1000  # in second
        # fsmn splice operation
        self.context_expansion = dataset_conf.get('context_expansion', False)
        self.left_context = 0
        self.right_context = 0
        if self.context_expansion:
            self.left_context = dataset_conf['context_expansion_conf']['left']
            self.right_context = dataset_conf['context_expansion_conf']['right']
        self.feature_remained = None
        self.feats_ctx_offset = 0  # after downsample, offset exist.

        # model related
        if is_jit_model:
            model = torch.jit.load(ckpt_path)
        else:
            model = init_model(configs['model'])
            load_checkpoint(model, ckpt_path)
        use_cuda = gpu >= 0 and torch.cuda.is_available()
        self.device = torch.device('cuda' if use_cuda else 'cpu')
        self.model = model.to(self.device)
        self.model.eval()
        logging.info(f'model {ckpt_path} loaded on {self.device}.')
        self.token_table = read_token(token_path)
        logging.info(f'tokens {token_path} with {len(self.token_table)} units loaded.')
        self.lexicon_table = read_lexicon(lexicon_path)
        logging.info(f'lexicons {lexicon_path} with {len(self.lexicon_table)} units loaded.')
        self.in_cache = torch.zeros(0, 0, 0, dtype=torch.float)

        # decoding and detection related
        self.score_beam = score_beam
        self.path_beam = path_beam
        self.threshold = threshold
        self.min_frames = min_frames
        self.max_frames = max_frames
        self.interval_frames = interval_frames
        self.cur_hyps = [(tuple(), (1.0, 0.0, []))]
        self.hit_score = 1.0
        self.hit_keyword = None
        self.activated = False
        self.total_frames = 0  # frame offset, for absolute time
        self.last_active_pos = -1  # the last frame of being activated
        self.result = {}

    def set_keywords(self, keywords):
        keywords_str = keywords
        keywords_list = keywords_str.strip().replace(' ', '').split(',')
        keywords_token = {}
        keywords_idxset = {0}
        keywords_strset = {'<blk>'}
        keywords_tokenmap = {'<blk>': 0}
        for keyword in keywords_list:
            strs, indexes = [], []
            for ch in keyword:
                for token in self.lexicon_table.get(ch, [ch]):
                    strs.append(token)
                    indexes.append(self.token_table.get(token, 1))
            keywords_token[keyword] = {'token_id': tuple(indexes), 'token_str': tuple(strs)}
            keywords_strset.update(strs)
            keywords_idxset.update(indexes)
            for txt, idx in zip(strs, indexes):
                keywords_tokenmap.setdefault(txt, idx)
        self.keywords_idxset = keywords_idxset
        self.keywords_token = keywords_token

    def accept_wave(self, wave):
        assert isinstance(wave, bytes), "please make sure the input format is bytes(raw PCM)"
        data = []
        for i in range(0, len(wave), 2):
            value = struct.unpack('<h', wave[i:i + 2])[0]
            data.append(value)
        wave = np.array(data)
        wave = np.append(self.wave_remained, wave)
        if wave.size < (self.frame_length * self.sample_rate / 1000) * self.right_context:
            self.wave_remained = wave
            return None
        wave_tensor = torch.from_numpy(wave).float().unsqueeze(0)
        feats = kaldi.fbank(wave_tensor,
                            num_mel_bins=self.num_mel_bins,
                            frame_length=self.frame_length,
                            frame_shift=self.frame_shift,
                            dither=0,
                            energy_floor=0.0,
                            sample_frequency=self.sample_rate)
        feat_len = len(feats)
        frame_shift = int(self.frame_shift / 1000 * self.sample_rate)
        self.wave_remained = wave[feat_len * frame_shift:]
        if self.context_expansion:
            assert feat_len > self.right_context, "make sure each chunk feat length is large than right context."
            if self.feature_remained is None:
                feats_pad = torch.nn.functional.pad(feats.T, (self.left_context, 0), mode='replicate').T
            else:
                feats_pad = torch.cat((self.feature_remained, feats))
            ctx_frm = feats_pad.shape[0] - (self.right_context + self.right_context)
            ctx_win = (self.left_context + self.right_context + 1)
            ctx_dim = feats.shape[1] * ctx_win
            feats_ctx = torch.zeros(ctx_frm, ctx_dim, dtype=torch.float32)
            for i in range(ctx_frm):
                feats_ctx[i] = torch.cat(tuple(feats_pad[i:i + ctx_win])).unsqueeze(0)
            self.feature_remained = feats_pad[-(self.left_context + self.right_context):]
            feats = feats_ctx
        if self.downsampling > 1:
            last_remainder = 0 if self.feats_ctx_offset == 0 else self.downsampling - self.feats_ctx_offset
            remainder = (feats.size(0) + last_remainder) % self.downsampling
            feats = feats[self.feats_ctx_offset::self.downsampling, :]
            self.feats_ctx_offset = remainder if remainder == 0 else self.downsampling - remainder
        return feats

    def forward(self, wave_chunk):
        feature = self.accept_wave(wave_chunk)
        if feature is None or feature.size(0) < 1:
            return {}
        feature = feature.unsqueeze(0).to(self.device)
        logits, self.in_cache = self.model(feature, self.in_cache)
        probs = logits.softmax(2)
        probs = probs[0].cpu()
        for t, prob in enumerate(probs):
            t *= self.downsampling
            absolute_time = t + self.total_frames
            self.cur_hyps = ctc_prefix_beam_search(absolute_time, prob, self.cur_hyps,
                                                   self.keywords_idxset, self.score_beam)
            for one_hyp in self.cur_hyps:
                prefix_ids = one_hyp[0]
                prefix_nodes = one_hyp[1][2]
                for word in self.keywords_token.keys():
                    lab = self.keywords_token[word]['token_id']
                    offset = is_sublist(prefix_ids, lab)
                    if offset != -1:
                        start = prefix_nodes[offset]['frame']
                        end = prefix_nodes[offset + len(lab) - 1]['frame']
                        score = 1.0
                        for i in range(offset, offset + len(lab)):
                            score *= prefix_nodes[i]['prob']
                        score = math.sqrt(score)
                        if self.min_frames <= end - start <= self.max_frames and score >= self.threshold:
                            self.activated = True
                            self.hit_score = score
                            self.hit_keyword = word
                            self.last_active_pos = end
                            self.result = dict(state=1, keyword=word, start=start * self.resolution,
                                               end=end * self.resolution, score=score)
        self.total_frames += len(probs) * self.downsampling
        return self.result

    def reset(self):
        self.cur_hyps = [(tuple(), (1.0, 0.0, []))]
        self.activated = False
        self.hit_score = 1.0
        self.hit_keyword = None
        self.result = {}

    def reset_all(self):
        self.reset()
        self.wave_remained = np.array([])
        self.feature_remained = None
        self.feats_ctx_offset = 0
        self.in_cache = torch.zeros(0, 0, 0, dtype=torch.float)
        self.total_frames = 0


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
    kws = KeyWordSpotter(args.ckpt_path, args.config, args.token_file, args.lexicon_file,
                         args.threshold, gpu=args.gpu, is_jit_model=args.jit_model)
    kws.set_keywords(args.keywords)

    with wave.open(args.wav_path, 'rb') as fin:
        assert fin.getnchannels() == 1
        wav = fin.readframes(fin.getnframes())
    interval = int(args.chunk_ms / 1000 * 16000) * 2
    elapsed = 0.0
    for i in range(0, len(wav), interval):
        chunk_wav = wav[i:min(i + interval, len(wav))]
        t0 = time.perf_counter()
        result = kws(chunk_wav)
        if kws.device.type == 'cuda':
            torch.cuda.synchronize()
        elapsed += time.perf_counter() - t0
        if result:
            print(result)
            kws.reset()
    audio_seconds = len(wav) / 2 / 16000
    print(f'RTF: {elapsed / audio_seconds:.4f} on {kws.device}')


if __name__ == '__main__':
    main()
