"""General tests for all metrics.

Run with:
    pytest tests/test_metric_general.py -v
Metrics are tested on GPU when available; the CPU run is much slower (~30 min).
"""
import pytest
import torch

import pyiqa
from pyiqa.utils.img_util import imread2tensor

GPU_ONLY_METRICS = ['qalign', 'fid']
SLOW_METRICS = ['ilniqe', 'pieapp', 'ahiq']

# metrics whose output differs slightly between devices because of non-deterministic kernels
LOOSE_TOLERANCE = {'musiq': 1e-2, 'maniqa': 1e-2, 'clipiqa': 5e-3, 'niqe': 1e-3}


def _all_metrics():
    names = pyiqa.list_models()
    return [n for n in names if n not in GPU_ONLY_METRICS]


@pytest.fixture(scope='module')
def device():
    return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')


@pytest.fixture(scope='module')
def test_images():
    dist = imread2tensor('./ResultsCalibra/dist_dir/I03.bmp').unsqueeze(0)
    ref = imread2tensor('./ResultsCalibra/ref_dir/I03.bmp').unsqueeze(0)
    return dist, ref


@pytest.mark.parametrize('metric_name', _all_metrics())
def test_forward(metric_name, device, test_images):
    """Test the forward pass of every metric on the calibration image."""
    dist, ref = test_images
    metric = pyiqa.create_metric(metric_name, device=device)
    if metric.metric_mode == 'FR':
        score = metric(dist.to(device), ref.to(device))
    else:
        score = metric(dist.to(device))
    assert score.shape[0] == 1
    assert torch.isfinite(score).all()


@pytest.mark.parametrize('metric_name', [k for k in _all_metrics() if k not in SLOW_METRICS])
def test_cpu_gpu_consistency(metric_name, test_images):
    """Test if the metric results are the same on CPU and GPU."""
    if not torch.cuda.is_available():
        pytest.skip('no GPU available')

    dist, ref = test_images
    metric_cpu = pyiqa.create_metric(metric_name, device='cpu')
    metric_gpu = pyiqa.create_metric(metric_name, device='cuda')

    if metric_cpu.metric_mode == 'FR':
        score_cpu = metric_cpu(dist, ref)
        score_gpu = metric_gpu(dist.cuda(), ref.cuda())
    else:
        score_cpu = metric_cpu(dist)
        score_gpu = metric_gpu(dist.cuda())

    tol = LOOSE_TOLERANCE.get(metric_name, 1e-4)
    assert torch.allclose(score_cpu, score_gpu.cpu(), atol=tol, rtol=tol), \
        f'{metric_name}: cpu {score_cpu.item():.6f} vs gpu {score_gpu.item():.6f}'


@pytest.mark.parametrize('metric_name', [k for k in _all_metrics() if k not in SLOW_METRICS])
def test_batch_consistency(metric_name, device, test_images):
    """Scores of a batch must equal scores of the single images."""
    dist, ref = test_images
    metric = pyiqa.create_metric(metric_name, device=device)
    dist_b = torch.cat([dist, dist.flip(-1)], dim=0).to(device)
    ref_b = torch.cat([ref, ref.flip(-1)], dim=0).to(device)
    if metric.metric_mode == 'FR':
        batch_score = metric(dist_b, ref_b)
        single = torch.cat([metric(dist_b[i:i + 1], ref_b[i:i + 1]) for i in range(2)])
    else:
        batch_score = metric(dist_b)
        single = torch.cat([metric(dist_b[i:i + 1]) for i in range(2)])
    tol = LOOSE_TOLERANCE.get(metric_name, 1e-4)
    assert torch.allclose(batch_score.flatten(), single.flatten(), atol=tol, rtol=tol)


@pytest.mark.parametrize('metric_name', ['lpips', 'dists', 'ssim', 'psnr', 'ms_ssim', 'nlpd'])
def test_gradient_backward(metric_name, device, test_images):
    """Metrics used as losses must give finite gradients."""
    dist, ref = test_images
    metric = pyiqa.create_metric(metric_name, as_loss=True, device=device)
    dist = dist.to(device).requires_grad_()
    ref = ref.to(device)
    loss = metric(dist, ref)
    loss.backward()
    assert dist.grad is not None
    assert torch.isfinite(dist.grad).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason='GPU-only metrics need CUDA')
@pytest.mark.parametrize('metric_name', ['fid'])
def test_fid_folders(metric_name, tmp_path):
    metric = pyiqa.create_metric(metric_name, device=torch.device('cuda'))
    score = metric('./ResultsCalibra/dist_dir', './ResultsCalibra/ref_dir', verbose=False)
    assert score >= 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason='AMP check needs a GPU')
def test_amp_inference_close_to_fp32(test_images):
    dist, _ = test_images
    metric = pyiqa.create_metric('topiq_nr', device='cuda')
    with torch.no_grad():
        ref_score = metric(dist.cuda())
        with torch.autocast(device_type='cuda', dtype=torch.float16):
            amp_score = metric(dist.cuda())
    assert abs(ref_score.item() - amp_score.float().item()) < 5e-3


def test_lower_better_flag():
    for name in ['niqe', 'brisque', 'lpips', 'dists', 'pieapp']:
        assert pyiqa.create_metric(name, device='cpu').lower_better
    for name in ['musiq', 'psnr', 'ssim', 'clipiqa']:
        assert not pyiqa.create_metric(name, device='cpu').lower_better
