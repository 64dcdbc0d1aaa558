import time
import unittest
import random

import numpy as np
import torch
import torch.nn.functional as F

from longformer.diagonaled_mm_tvm import diagonaled_mm as diagonaled_mm_tvm, mask_invalid_locations
from longformer.sliding_chunks import sliding_chunks_matmul_qk, sliding_chunks_matmul_pv
from longformer.sliding_chunks import sliding_chunks_no_overlap_matmul_qk, sliding_chunks_no_overlap_matmul_pv


def _sync():
    # kernel launches are async; make timings meaningful
    torch.cuda.synchronize()


def _seed(seed):
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)


def _banded_n2_attention(query, key, value, w):
    '''Dense n^2 reference for sliding window attention: every token attends to w tokens on each side.'''
    bsz, seqlen, num_heads, head_dim = query.size()
    q = query.transpose(1, 2)  # B x H x N x M
    k = key.transpose(1, 2)
    v = value.transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-1, -2))  # B x H x N x N
    idx = torch.arange(seqlen, device=query.device)
    band = (idx[None, :] - idx[:, None]).abs() <= w
    scores = scores.masked_fill(~band, -float('inf'))
    probs = F.softmax(scores, dim=-1)
    return torch.matmul(probs, v).transpose(1, 2)


class TestSlidingChunksMM(unittest.TestCase):

    @unittest.skipIf(not torch.cuda.is_available(), 'the TVM kernel is CUDA-only')
    def test_tvm_equal_sliding_chunks(self):
        _seed(300)
        torch.set_printoptions(sci_mode=False)
        N = 4096  # * 16
        M = 64  # hidden size
        W = 256  # one sided. Actual window size = 2w+1
        B = 3
        D = 1  # no dilation
        H = 12  # number of heads
        autoregressive = False  # not autoregressive
        device = 'cuda'
        dtype = torch.float32

        failed_tests = 0
        time1 = time2 = 0
        for i in range(50):
            if i < 5:
                time1 = time2 = 0  # don't include the first few iterations because of high variance

            query = torch.randn(B * N * H * M, requires_grad=True, device=device, dtype=dtype).view(B, N, H, M)
            query.retain_grad()
            key = torch.randn(B * N * H * M, requires_grad=True, device=device, dtype=dtype).flip(dims=(0,)).view(B, N, H, M)
            key.retain_grad()
            value = torch.randn(B * N * H * M, requires_grad=True, device=device, dtype=dtype).view(B, N, H, M)
            value.retain_grad()

            # TVM MM
            _sync()
            start = time.time()
            attention1 = diagonaled_mm_tvm(query, key, W, D, False, 0, autoregressive)
            mask_invalid_locations(attention1, W, D, autoregressive)
            attention_probs1 = torch.nn.functional.softmax(attention1, dim=-1)
            context1 = diagonaled_mm_tvm(attention_probs1, value, W, D, True, 0, autoregressive)
            context1.sum().backward()
            _sync()
            time1 += time.time() - start
            query_grad1 = 1.0 * query.grad
            query.grad.zero_()
            key_grad1 = 1.0 * key.grad
            key.grad.zero_()
            value_grad1 = 1.0 * value.grad
            value.grad.zero_()
            torch.cuda.empty_cache()

            assert D == 1
            assert not autoregressive
            _sync()
            start = time.time()
            attention2 = sliding_chunks_matmul_qk(query, key, W, float('-inf'))
            attention_probs2 = torch.nn.functional.softmax(attention2, dim=-1)
            context2 = sliding_chunks_matmul_pv(attention_probs2, value, W)
            context2.sum().backward()
            _sync()
            time2 += time.time() - start
            query_grad2 = 1.0 * query.grad
            query.grad.zero_()
            key_grad2 = 1.0 * key.grad
            key.grad.zero_()
            value_grad2 = 1.0 * value.grad
            value.grad.zero_()
            torch.cuda.empty_cache()

            try:
                assert torch.allclose(attention1, attention2.float(), atol=1e-4, rtol=1e-5)
                assert torch.allclose(context1, context2.float(), atol=1e-4, rtol=1e-5), "context1"
                assert torch.allclose(query_grad1, query_grad2.float(), atol=1e-4, rtol=1e-3), "query_grad1"
                assert torch.allclose(key_grad1, key_grad2.float(), atol=1e-4, rtol=1e-3), "key_grad1"
                assert torch.allclose(value_grad1, value_grad2.float(), atol=1e-4, rtol=1e-3), "value_grad1"
            except AssertionError:
                failed_tests += 1

        print('Time tvm: {0:.5f} s'.format(time1))
        print('Time pytorch sliding chunks: {0:.5f} s'.format(time2))
        print('Sliding chunks vs. TVM speedup: {0:.5f}x'.format(time1/time2))
        print(f'Failed tests: {failed_tests}/{i+1}')
        assert failed_tests == 0

    def test_sliding_chunks_equal_n2(self):
        _seed(301)
        N = 1024
        M = 64
        W = 128
        B = 2
        H = 4
        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        for dtype, atol in ((torch.float32, 1e-4), (torch.float16, 5e-3)):
            if dtype == torch.float16 and device == 'cpu':
                continue  # half matmul on CPU is too slow / unsupported on older torch
            query = torch.randn(B, N, H, M, device=device, dtype=dtype)
            key = torch.randn(B, N, H, M, device=device, dtype=dtype)
            value = torch.randn(B, N, H, M, device=device, dtype=dtype)

            _sync() if device != 'cpu' else None
            start = time.time()
            attn = sliding_chunks_matmul_qk(query, key, W, float('-inf'))
            probs = torch.nn.functional.softmax(attn.float(), dim=-1).type_as(attn)
            context = sliding_chunks_matmul_pv(probs, value, W)
            _sync() if device != 'cpu' else None
            t_chunks = time.time() - start

            start = time.time()
            reference = _banded_n2_attention(query.float(), key.float(), value.float(), W)
            _sync() if device != 'cpu' else None
            t_n2 = time.time() - start

            self.assertTrue(torch.allclose(context.float(), reference, atol=atol, rtol=1e-3),
                            f'{dtype}: max diff {(context.float() - reference).abs().max().item()}')
            print(f'{dtype}: sliding_chunks {t_chunks:.4f}s, n2 {t_n2:.4f}s')

    def test_no_overlap_shapes(self):
        _seed(302)
        B, N, H, M, W = 2, 510, 4, 32, 170
        query = torch.randn(B, N, H, M)
        key = torch.randn(B, N, H, M)
        value = torch.randn(B, N, H, M)
        attn = sliding_chunks_no_overlap_matmul_qk(query, key, W, padding_value=0)
        self.assertEqual(list(attn.size()), [B, N, H, 3 * W])
        probs = torch.nn.functional.softmax(attn, dim=-1)
        context = sliding_chunks_no_overlap_matmul_pv(probs, value, W)
        self.assertEqual(list(context.size()), [B, N, H, M])


if __name__ == '__main__':
    unittest.main()
