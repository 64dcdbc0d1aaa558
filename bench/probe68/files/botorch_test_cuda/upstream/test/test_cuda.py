#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""Re-run the whole BoTorch test suite on the GPU.

Every ``BotorchTestCase`` reads ``self.device`` when it builds its tensors (``tkwargs``), so the
suite can be re-targeted by discovering all tests and flipping that attribute before running
them.  This module also holds a handful of tests that only make sense with a real accelerator
(device placement of fantasies, pinned-memory transfers of candidate sets).
"""
import typing  # noqa F401
import unittest
from pathlib import Path
from typing import Union

import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.sampling.normal import SobolQMCNormalSampler
from botorch.utils.testing import BotorchTestCase


@unittest.skipIf(not torch.cuda.is_available(), "CUDA is not available")
class TestBotorchCUDA(unittest.TestCase):
    def test_cuda(self):
        test_dir = Path(__file__).parent.resolve()
        tests = unittest.TestLoader().discover(test_dir)
        self.assertTrue(run_cuda_tests(tests))


def run_cuda_tests(tests: Union[unittest.TestCase, unittest.TestSuite]) -> bool:
    """Function for running all tests on cuda (except TestBotorchCUDA itself)"""
    if isinstance(tests, BotorchTestCase):
        tests.device = torch.device("cuda")
        test_result = tests.run()
        if test_result is None:
            # some test runners may return None on skipped tests
            return True
        passed = test_result.wasSuccessful()
        if not passed:
            # print test name
            print(f"test: {tests}")
            for error in test_result.errors:
                # print traceback
                print(f"error: {error[1]}")
        return passed
    elif isinstance(tests, unittest.TestSuite):
        return all(run_cuda_tests(tests_) for tests_ in tests)
    elif (
        isinstance(tests, unittest.TestCase)
        and tests.id() == "test_cuda.TestBotorchCUDA.test_cuda"
    ):
        # ignore TestBotorchCUDA
        return True
    elif isinstance(tests, unittest.loader._FailedTest):
        # test failed to load, often import error
        print(f"test: {tests}")
        print(f"exception: {tests._exception}")
        return False
    else:
        raise ValueError(f"Unexpected type for test: {tests}")


class TestGPUPlacement(BotorchTestCase):
    """Tests that need an accelerator; skipped on CPU-only runners."""

    def setUp(self):
        super().setUp()
        if not torch.cuda.is_available():
            self.skipTest("requires a CUDA device")
        self.device = torch.device("cuda", torch.cuda.current_device())

    def _make_model(self, n=16, d=3, dtype=torch.double):
        tkwargs = {"device": self.device, "dtype": dtype}
        X = torch.rand(n, d, **tkwargs)
        Y = torch.sin(X).sum(dim=-1, keepdim=True)
        model = SingleTaskGP(X, Y, outcome_transform=Standardize(m=1))
        return model, X

    def test_fantasize_stays_on_device(self):
        for dtype in (torch.float, torch.double):
            model, X = self._make_model(dtype=dtype)
            sampler = SobolQMCNormalSampler(sample_shape=torch.Size([4]))
            fm = model.fantasize(torch.rand(2, 3, device=self.device, dtype=dtype), sampler=sampler)
            train_X = fm.train_inputs[0]
            self.assertEqual(train_X.device.type, "cuda")
            self.assertEqual(train_X.dtype, dtype)

    def test_acqf_candidates_pinned_roundtrip(self):
        model, X = self._make_model()
        acqf = qLogNoisyExpectedImprovement(model=model, X_baseline=X)
        X_cand = torch.rand(32, 1, 3, dtype=torch.double).pin_memory()
        with torch.no_grad():
            vals = acqf(X_cand.to(self.device, non_blocking=True))
        torch.cuda.synchronize()
        self.assertEqual(vals.shape, torch.Size([32]))
        self.assertTrue(vals.is_cuda)

    def test_sampler_base_samples_device(self):
        model, X = self._make_model()
        sampler = SobolQMCNormalSampler(sample_shape=torch.Size([8]), seed=0)
        posterior = model.posterior(X[:4])
        samples = sampler(posterior)
        self.assertEqual(sampler.base_samples.device, X.device)
        self.assertEqual(samples.device, X.device)


if __name__ == "__main__":
    unittest.main()
