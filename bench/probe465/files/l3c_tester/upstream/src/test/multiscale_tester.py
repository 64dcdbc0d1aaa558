"""
Copyright 2019, ETH Zurich

This file is part of L3C-PyTorch.

L3C-PyTorch is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
any later version.

--------------------------------------------------------------------------------

Evaluates a trained L3C model on a set of images: either by computing the
theoretical bitrate (bpsp) from the predicted distributions, or by actually
running the arithmetic coder (--write_to_files / --recursive).
"""
import os
import time
from collections import defaultdict, namedtuple

import numpy as np
import torch
from torch.utils.data import DataLoader
from torchvision import transforms

import pytorch_ext as pe
from fjcommon import config_parser, functools_ext as ft
import vis.summarizable_module
from bitcoding.bitcoding import Bitcoding
from blueprints.multiscale_blueprint import MultiscaleBlueprint
from dataloaders import images_loader
from helpers import logdir_helpers
from helpers.global_config import global_config
from helpers.paths import CKPTS_DIR_NAME
from helpers.saver import Saver
from test.image_saver import ImageSaver
from test.test_helpers import TestID, TestResults, QStrategy, CropLoop


TestOutputCache = namedtuple('TestOutputCache', ['bpsp', 'bpsp_per_scale', 'timing'])


def _sync():
    # the coder runs on CPU; make sure all GPU work is done before reading the clock
    if torch.cuda.is_available():
        torch.cuda.synchronize()


class MultiscaleTester(object):
    def __init__(self, log_date, flags, restore_itr, l=print):
        """
        :param flags:
            log_dir
            img
            filter_filenames
            max_imgs_per_folder
            crop
            recursive
            sample
            write_to_files
            compare_theory
            time_report
            overwrite_cache
        """
        self.flags = flags

        test_log_dir_root = self.flags.log_dir.rstrip(os.path.sep) + '_test'
        global_config.reset()

        config_ps, experiment_dir = MultiscaleTester.get_configs_experiment_dir('ms', self.flags.log_dir, log_date)
        self.log_date = logdir_helpers.log_date_from_log_dir(experiment_dir)
        (self.config_ms, _), _ = ft.unzip(map(config_parser.parse, config_ps))
        global_config.update_config(self.config_ms)

        self.recursive = _parse_recursive_flag(self.flags.recursive, config_ms=self.config_ms)
        if self.flags.write_to_files and self.recursive:
            raise NotImplementedError('--write_to_file not implemented for --recursive')

        if self.recursive:
            print(f'--recursive={self.recursive}')

        blueprint = MultiscaleBlueprint(self.config_ms)
        blueprint.set_eval()
        self.blueprint = blueprint

        self.restorer = Saver(experiment_dir, pe.DEVICE)
        self.restore_itr = self.restorer.restore_latest_persistent(self.blueprint.net, restore_itr)

        # no autotuning: every test image has a different size
        torch.backends.cudnn.benchmark = False

        self.test_log_dir = os.path.join(test_log_dir_root, os.path.basename(experiment_dir))
        self.times = defaultdict(list)
        self.image_saver = None
        if self.flags.sample:
            self.image_saver = ImageSaver(os.path.join(self.test_log_dir, 'samples'))

    @staticmethod
    def get_configs_experiment_dir(prefix, log_dir, log_date):
        experiment_dir = logdir_helpers.get_log_dir(log_dir, log_date)
        log_dir_comps = logdir_helpers.parse_log_dir(experiment_dir, CKPTS_DIR_NAME, [prefix])
        return log_dir_comps.config_paths, experiment_dir

    def test_all(self, images_iterators):
        results = []
        for images_it in images_iterators:
            print('Testing {}...'.format(images_it))
            results.append(self._test(images_it))
        return results

    def _test(self, ds):
        test_id = TestID(ds.id, self.restore_itr)
        return_cache = (not self.flags.overwrite_cache and
                        not self.flags.write_to_files and
                        not self.flags.compare_theory and
                        not self.flags.time_report)
        if return_cache:
            cached = self._load_from_cache(test_id)
            if cached is not None:
                return cached

        test_results = TestResults()
        torch.manual_seed(0)
        dl = DataLoader(ds, batch_size=1, shuffle=False, num_workers=2)
        with torch.no_grad():
            for i, img in enumerate(dl):
                filename = img['filename'][0]
                raw = img['raw'].to(pe.DEVICE)
                if self.flags.write_to_files:
                    bpsp = self._write_to_file(raw, filename)
                else:
                    bpsp = self._get_bpsp(raw)
                test_results.set_from_loss(bpsp, filename)
                if i % 10 == 0:
                    print(f'{i}: {filename} -> {bpsp:.4f} bpsp')
                # huge images fragment the allocator; free cached blocks between images
                torch.cuda.empty_cache()

        if self.flags.time_report:
            self._write_time_report()
        self._save_to_cache(test_id, test_results)
        return test_results

    def _get_bpsp(self, x_n):
        _sync()
        start = time.time()
        out = self.blueprint.forward(x_n, auto_recurse=self.recursive)
        _sync()
        self.times['forward'].append(time.time() - start)
        bits = self.blueprint.losses(out, num_subpixels_before_pad=np.prod(x_n.shape))
        return bits.nonrecursive_bpsps.item()

    def _write_to_file(self, raw, filename):
        bitcoding = Bitcoding(self.blueprint)
        out_p = os.path.join(self.test_log_dir, 'bitstreams', os.path.splitext(filename)[0] + '.l3c')
        os.makedirs(os.path.dirname(out_p), exist_ok=True)
        start = time.time()
        bitcoding.encode(raw, pout=out_p)
        enc_time = time.time() - start
        start = time.time()
        decoded = bitcoding.decode(out_p)
        dec_time = time.time() - start
        self.times['enc'].append(enc_time)
        self.times['dec'].append(dec_time)
        if not torch.equal(decoded.to(pe.DEVICE).round().long(), raw.round().long()):
            raise ValueError(f'Decoding mismatch for {filename}!')
        num_bytes = os.path.getsize(out_p)
        return float(num_bytes) * 8 / np.prod(raw.shape)

    def _write_time_report(self):
        lines = []
        for k, ts in self.times.items():
            ts = np.array(ts[1:] if len(ts) > 1 else ts)  # skip warm-up
            lines.append(f'{k}: mean {ts.mean():.3f}s, median {np.median(ts):.3f}s, n={len(ts)}')
        report_p = os.path.join(self.test_log_dir, 'time_report.txt')
        os.makedirs(self.test_log_dir, exist_ok=True)
        with open(report_p, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        print('\n'.join(lines))

    def _cache_p(self, test_id):
        return os.path.join(self.test_log_dir, 'cache', f'{test_id.cache_key()}.pkl')

    def _load_from_cache(self, test_id):
        p = self._cache_p(test_id)
        if not os.path.isfile(p):
            return None
        return TestResults.load(p)

    def _save_to_cache(self, test_id, test_results):
        p = self._cache_p(test_id)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        test_results.save(p)


def _parse_recursive_flag(recursive, config_ms):
    if not recursive:
        return 0
    if recursive == 'auto':
        return config_ms.num_scales
    return int(recursive)
