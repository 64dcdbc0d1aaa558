import logging
from pathlib import Path
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from scipy import linalg

from av_bench.data.video_dataset import VideoDataset
from av_bench.extraction_utils import load_cached_features

log = logging.getLogger()


def compute_fd(feat_pred: np.ndarray, feat_target: np.ndarray, eps: float = 1e-6) -> float:
    """Frechet distance between two Gaussians fitted to the embeddings."""
    mu1, sigma1 = feat_pred.mean(axis=0), np.cov(feat_pred, rowvar=False)
    mu2, sigma2 = feat_target.mean(axis=0), np.cov(feat_target, rowvar=False)

    diff = mu1 - mu2
    covmean, _ = linalg.sqrtm(sigma1.dot(sigma2), disp=False)
    if not np.isfinite(covmean).all():
        msg = f'fid calculation produces singular product; adding {eps} to diagonal of cov estimates'
        log.warning(msg)
        offset = np.eye(sigma1.shape[0]) * eps
        covmean = linalg.sqrtm((sigma1 + offset).dot(sigma2 + offset))

    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            m = np.max(np.abs(covmean.imag))
            raise ValueError(f'Imaginary component {m}')
        covmean = covmean.real

    tr_covmean = np.trace(covmean)
    return float(diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * tr_covmean)


def compute_kl(pred_logits: torch.Tensor, target_logits: torch.Tensor, is_sigmoid: bool) -> float:
    # paired KL between classifier outputs of generated and ground-truth audio
    if is_sigmoid:
        p = torch.sigmoid(pred_logits).clamp(1e-6, 1 - 1e-6)
        q = torch.sigmoid(target_logits).clamp(1e-6, 1 - 1e-6)
        kl = q * (q.log() - p.log()) + (1 - q) * ((1 - q).log() - (1 - p).log())
        return kl.mean(dim=-1).mean().item()
    p = F.log_softmax(pred_logits, dim=-1)
    q = F.log_softmax(target_logits, dim=-1)
    return F.kl_div(p, q, reduction='batchmean', log_target=True).item()


def compute_isc(logits: torch.Tensor, splits: int = 10, rng_seed: int = 2020) -> tuple[float, float]:
    # inception score with a PaSST classifier
    rng = np.random.RandomState(rng_seed)
    idx = rng.permutation(logits.shape[0])
    probs = F.softmax(logits[idx], dim=-1)
    scores = []
    for part in probs.chunk(splits):
        py = part.mean(dim=0, keepdim=True)
        kl = (part * (part.log() - py.log())).sum(dim=1).mean()
        scores.append(kl.exp().item())
    return float(np.mean(scores)), float(np.std(scores))


@torch.inference_mode()
def compute_ib_score(pred_audio_emb: torch.Tensor, video_emb: torch.Tensor) -> float:
    # ImageBind score: mean cosine similarity between generated audio and conditioning video
    pred_audio_emb = F.normalize(pred_audio_emb, dim=-1)
    video_emb = F.normalize(video_emb, dim=-1)
    return (pred_audio_emb * video_emb).sum(dim=-1).mean().item()


@torch.inference_mode()
def compute_desync(sync_model, video_feats: torch.Tensor, audio_feats: torch.Tensor,
                   device: str) -> float:
    # Synchformer offset prediction; 21 classes from -2.0s to +2.0s in 0.2s steps
    offsets = torch.linspace(-2.0, 2.0, 21, device=device)
    logits = sync_model.compare_v_a(video_feats.to(device), audio_feats.to(device))
    pred = offsets[logits.argmax(dim=-1)]
    return pred.abs().mean().item()


def evaluate(gt_audio_cache: Path,
             pred_audio_cache: Path,
             *,
             video_cache: Optional[Path] = None,
             sync_model=None,
             is_paired: bool = True,
             num_samples: int = 1,
             device: str = 'cuda',
             skip_clap: bool = False) -> dict[str, float]:

    gt_audio_cache = gt_audio_cache.expanduser()
    pred_audio_cache = pred_audio_cache.expanduser()

    gt = load_cached_features(gt_audio_cache)
    pred = load_cached_features(pred_audio_cache)
    output_metrics = {}

    # FD with each embedding model
    for name in ['vggish', 'panns', 'passt']:
        if f'{name}_features' in gt and f'{name}_features' in pred:
            fd = compute_fd(pred[f'{name}_features'].numpy(), gt[f'{name}_features'].numpy())
            output_metrics[f'FD_{name.upper()}'] = fd
            log.info(f'FD_{name.upper()}: {fd:.4f}')

    if is_paired:
        # align ids
        common = sorted(set(gt['ids']) & set(pred['ids']))
        gi = [gt['ids'].index(k) for k in common]
        pi = [pred['ids'].index(k) for k in common]
        log.info(f'Paired evaluation on {len(common)} samples')
        for name, sig in [('panns', True), ('passt', False)]:
            if f'{name}_logits' in gt:
                g = gt[f'{name}_logits'][gi].to(device)
                p = pred[f'{name}_logits'][pi].to(device)
                output_metrics[f'KL_{name.upper()}'] = compute_kl(p, g, is_sigmoid=sig)

    if 'passt_logits' in pred:
        mean, std = compute_isc(pred['passt_logits'].to(device))
        output_metrics['ISC_PASST'] = mean
        output_metrics['ISC_PASST_std'] = std

    if video_cache is not None:
        video = load_cached_features(video_cache)
        if 'ib_features' in pred and 'ib_video_features' in video:
            output_metrics['IB-score'] = compute_ib_score(pred['ib_features'].to(device),
                                                          video['ib_video_features'].to(device))
        if sync_model is not None and 'sync_features' in video:
            output_metrics['DeSync'] = compute_desync(sync_model, video['sync_features'],
                                                      pred['sync_audio_features'], device)

    if not skip_clap and 'clap_features' in pred and 'clap_text_features' in gt:
        a = F.normalize(pred['clap_features'].to(device), dim=-1)
        t = F.normalize(gt['clap_text_features'].to(device), dim=-1)
        output_metrics['LAION-CLAP'] = (a * t).sum(-1).mean().item()

    torch.cuda.empty_cache()
    return output_metrics
