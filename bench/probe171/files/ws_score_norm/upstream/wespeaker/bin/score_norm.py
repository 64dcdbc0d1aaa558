# Copyright (c) 2022 Shuai Wang (wsstriving@gmail.com)
#               2023 Zhengyang Chen (chenzhengyang117@gmail.com)
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""Adaptive score normalization (AS-Norm / S-Norm) for speaker verification.

The cohort scoring is a (num_enroll_test_utts x num_cohort) matrix product
which is slow in numpy for VoxCeleb2-sized cohorts (~1M utterances), so it is
done in chunks on the GPU when one is available.
"""

import logging
import os

import fire
import kaldiio
import numpy as np
import torch
from tqdm import tqdm

from wespeaker.utils.file_utils import read_table


def get_mean_std(emb, cohort, top_n, device):
    """Mean/std of the top_n cohort scores for every row of emb.

    emb:    (N, D) tensor, L2-normalised
    cohort: (C, D) tensor, L2-normalised, already on `device`
    """
    means, stds = [], []
    chunk = 4096
    for start in range(0, emb.shape[0], chunk):
        e = emb[start:start + chunk].to(device, non_blocking=True)
        emb_cohort_score = torch.matmul(e, cohort.T)
        emb_cohort_score = torch.topk(emb_cohort_score, k=top_n,
                                      dim=1, largest=True)[0]
        means.append(torch.mean(emb_cohort_score, dim=1).cpu())
        stds.append(torch.std(emb_cohort_score, dim=1).cpu())
    return torch.cat(means), torch.cat(stds)


def split_embedding(utt_list, emb_scp, mean_vec):
    embs = []
    utt2idx = {}
    utt2emb = {}
    for utt, emb in kaldiio.load_scp_sequential(emb_scp):
        emb = emb - mean_vec
        utt2emb[utt] = emb

    for utt in utt_list:
        embs.append(utt2emb[utt])
        utt2idx[utt] = len(embs) - 1

    return np.array(embs), utt2idx


def load_cohort(cohort_emb_scp, mean_vec, device):
    cohort_embs = []
    cohort_utts = []
    for utt, emb in kaldiio.load_scp_sequential(cohort_emb_scp):
        cohort_embs.append(emb - mean_vec)
        cohort_utts.append(utt)
    cohort = torch.from_numpy(np.stack(cohort_embs)).float()
    cohort = cohort / torch.norm(cohort, p=2, dim=1, keepdim=True)
    return cohort_utts, cohort.to(device)


def main(score_norm_method,
         top_n,
         trial_score_file,
         score_norm_file,
         cohort_emb_scp,
         eval_emb_scp,
         mean_vec_path=None,
         device='cuda:0'):
    logging.basicConfig(level=logging.INFO,
                        format='%(asctime)s %(levelname)s %(message)s')

    if device.startswith('cuda') and not torch.cuda.is_available():
        logging.warning('CUDA is not available, falling back to CPU scoring')
        device = 'cpu'
    device = torch.device(device)
    if device.type == 'cuda':
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False

    # get embedding
    if not mean_vec_path:
        print("Do not do mean normalization for evaluation embeddings.")
        mean_vec = 0.0
    else:
        assert os.path.exists(
            mean_vec_path), "mean_vec file ({}) does not exist !!!".format(
                mean_vec_path)
        mean_vec = np.load(mean_vec_path)

    # get embedding
    enroll_list, test_list, _, _ = zip(*read_table(trial_score_file))
    enroll_list = sorted(list(set(enroll_list)))
    test_list = sorted(list(set(test_list)))
    enroll_emb, enroll_utt2idx = split_embedding(enroll_list, eval_emb_scp,
                                                 mean_vec)
    test_emb, test_utt2idx = split_embedding(test_list, eval_emb_scp,
                                             mean_vec)

    _, cohort_emb = load_cohort(cohort_emb_scp, mean_vec, device)
    logging.info('cohort size: {}'.format(cohort_emb.shape[0]))

    enroll_emb = torch.from_numpy(enroll_emb).float()
    test_emb = torch.from_numpy(test_emb).float()
    enroll_emb = enroll_emb / torch.norm(enroll_emb, p=2, dim=1, keepdim=True)
    test_emb = test_emb / torch.norm(test_emb, p=2, dim=1, keepdim=True)
    if device.type == 'cuda':  # pinned host buffers for async H2D copies
        enroll_emb = enroll_emb.pin_memory()
        test_emb = test_emb.pin_memory()

    if score_norm_method == "asnorm":
        top_n = top_n
    elif score_norm_method == "snorm":
        top_n = cohort_emb.shape[0]
    else:
        raise ValueError(score_norm_method)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    enroll_mean, enroll_std = get_mean_std(enroll_emb, cohort_emb, top_n,
                                           device)
    test_mean, test_std = get_mean_std(test_emb, cohort_emb, top_n, device)
    end.record()
    torch.cuda.synchronize()
    logging.info('cohort scoring took {:.1f} ms'.format(
        start.elapsed_time(end)))

    # free the cohort before writing scores, the next job on this node may
    # need the memory
    del cohort_emb
    torch.cuda.empty_cache()

    enroll_mean = enroll_mean.numpy()
    enroll_std = enroll_std.numpy()
    test_mean = test_mean.numpy()
    test_std = test_std.numpy()

    # score norm
    with open(trial_score_file, 'r', encoding='utf-8') as fin, \
            open(score_norm_file, 'w', encoding='utf-8') as fout:
        lines = fin.readlines()
        for line in tqdm(lines):
            line = line.strip().split()
            enroll_idx = enroll_utt2idx[line[0]]
            test_idx = test_utt2idx[line[1]]
            score = float(line[2])
            normed_score = 0.5 * (
                (score - enroll_mean[enroll_idx]) / enroll_std[enroll_idx] +
                (score - test_mean[test_idx]) / test_std[test_idx])
            fout.write('{} {} {:.5f} {}\n'.format(line[0], line[1],
                                                  normed_score, line[3]))
    logging.info("Over!")


if __name__ == "__main__":
    fire.Fire(main)
