"""GPU Viterbi decoding of the madmom bar-pointer DBN for beat / downbeat tracking.

madmom's DBNBeatTrackingProcessor decodes one song at a time on the CPU; for large-scale
evaluation we batch many songs and run the max-product recursion with a CuPy raw kernel.
The state space is the one from Krebs et al. (2015): for every tempo (interval) there is a
chain of `interval` position states; transitions only happen from the last state of a chain.
Activations come straight from the (PyTorch) beat network and are handed to CuPy via DLPack.
"""
import math

import cupy as cp
import numpy as np
import torch
from torch.utils.dlpack import to_dlpack, from_dlpack

_VITERBI_SRC = r"""
extern "C" __global__
void viterbi_step(const float* __restrict__ prev,      // (B, S) log delta at t-1
                  const float* __restrict__ obs,       // (B, S) log observation at t
                  const int*   __restrict__ first,     // (K,) first state of every tempo chain
                  const int*   __restrict__ last,      // (K,) last state of every tempo chain
                  const float* __restrict__ trans,     // (K, K) log tempo transition
                  float* __restrict__ cur,             // (B, S)
                  int*   __restrict__ bp,              // (B, S) back-pointers for step t
                  int B, int S, int K)
{
    int b = blockIdx.y;
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B || s >= S) return;
    const float* p = prev + (size_t)b * S;
    // is s the first state of a chain?
    int k = -1;
    for (int j = 0; j < K; ++j) { if (first[j] == s) { k = j; break; } }
    float best; int arg;
    if (k < 0) {                       // inside a chain: deterministic advance
        best = p[s - 1]; arg = s - 1;
    } else {                           // chain start: come from the end of any tempo chain
        best = -INFINITY; arg = 0;
        for (int j = 0; j < K; ++j) {
            float v = p[last[j]] + trans[j * K + k];
            if (v > best) { best = v; arg = last[j]; }
        }
    }
    cur[(size_t)b * S + s] = best + obs[(size_t)b * S + s];
    bp[(size_t)b * S + s] = arg;
}
"""


class BarPointerStateSpace:
    def __init__(self, fps=100, min_bpm=55.0, max_bpm=215.0, num_tempi=60, beats_per_bar=4,
                 transition_lambda=100.0):
        min_interval = int(math.floor(60.0 * fps / max_bpm))
        max_interval = int(math.ceil(60.0 * fps / min_bpm))
        intervals = np.unique(np.round(np.exp(np.linspace(
            np.log(min_interval), np.log(max_interval), num_tempi))).astype(int))
        self.intervals = intervals * beats_per_bar
        self.beats_per_bar = beats_per_bar
        self.first = np.concatenate([[0], np.cumsum(self.intervals)[:-1]]).astype(np.int32)
        self.last = (self.first + self.intervals - 1).astype(np.int32)
        self.num_states = int(self.intervals.sum())
        # position (0..1) of every state inside its bar
        self.position = np.concatenate([np.arange(i) / i for i in self.intervals]).astype(np.float32)
        ratio = self.intervals[None, :] / self.intervals[:, None]
        trans = np.exp(-transition_lambda * np.abs(ratio - 1.0))
        trans /= trans.sum(axis=1, keepdims=True)
        self.log_trans = np.log(trans + 1e-12).astype(np.float32)


class DBNDownBeatTrackerGPU:
    """Batched Viterbi over (B, T, 2) beat/downbeat activations."""

    def __init__(self, fps=100, min_bpm=55.0, max_bpm=215.0, num_tempi=60, beats_per_bar=4,
                 observation_lambda=16, threads=256, device_id=0):
        self.fps = fps
        self.ss = BarPointerStateSpace(fps, min_bpm, max_bpm, num_tempi, beats_per_bar)
        self.observation_lambda = observation_lambda
        self.threads = threads
        self.device_id = device_id
        with cp.cuda.Device(device_id):
            self._kernel = cp.RawKernel(_VITERBI_SRC, "viterbi_step")
            self._first = cp.asarray(self.ss.first)
            self._last = cp.asarray(self.ss.last)
            self._trans = cp.asarray(self.ss.log_trans)
            self._position = cp.asarray(self.ss.position)

    def _log_observations(self, act):
        """act: cupy (B, T, 2) [beat, downbeat] -> (B, T, S) log observation probabilities."""
        lam = self.observation_lambda
        pos = self._position
        beat_region = (pos * self.ss.beats_per_bar) % 1.0 < 1.0 / lam
        downbeat_region = pos < 1.0 / (lam * self.ss.beats_per_bar)
        beat = act[..., 0:1]
        down = act[..., 1:2]
        no_beat = (1.0 - beat - down) / (lam - 1)
        obs = cp.where(downbeat_region[None, None, :], down,
                       cp.where(beat_region[None, None, :], beat, no_beat))
        return cp.log(cp.clip(obs, 1e-7, None)).astype(cp.float32)

    def decode(self, activations: torch.Tensor):
        """activations: float32 CUDA tensor (B, T, 2). Returns list of (beats, downbeats) in seconds."""
        assert activations.is_cuda, "DBNDownBeatTrackerGPU expects CUDA activations"
        with cp.cuda.Device(self.device_id):
            act = cp.from_dlpack(to_dlpack(activations.contiguous().float()))
            B, T, _ = act.shape
            S = self.ss.num_states
            log_obs = self._log_observations(act)                       # (B, T, S)
            delta = log_obs[:, 0] - math.log(S)
            bps = cp.empty((T, B, S), dtype=cp.int32)
            cur = cp.empty_like(delta)
            grid = ((S + self.threads - 1) // self.threads, B)
            for t in range(1, T):
                self._kernel(grid, (self.threads,),
                             (delta, cp.ascontiguousarray(log_obs[:, t]), self._first, self._last,
                              self._trans, cur, bps[t], np.int32(B), np.int32(S),
                              np.int32(len(self.ss.first))))
                delta, cur = cur, delta
            cp.cuda.Stream.null.synchronize()
            # backtrack on the host (T x B is small)
            state = cp.asnumpy(delta.argmax(axis=1))
            bps_h = cp.asnumpy(bps)
        paths = np.empty((B, T), dtype=np.int64)
        paths[:, -1] = state
        for t in range(T - 1, 0, -1):
            state = bps_h[t, np.arange(B), state]
            paths[:, t - 1] = state
        return [self._path_to_times(p) for p in paths]

    def decode_torch(self, activations: torch.Tensor):
        """Same as decode() but returns the best state path as a CUDA LongTensor (B, T)."""
        times = self.decode(activations)
        out = torch.zeros(activations.shape[:2], dtype=torch.long, device="cuda")
        for b, (beats, _) in enumerate(times):
            idx = torch.as_tensor(np.round(beats * self.fps).astype(np.int64), device=out.device)
            out[b, idx.clamp(max=out.shape[1] - 1)] = 1
        return out

    def _path_to_times(self, path):
        pos = self.ss.position[path]
        beat_pos = (pos * self.ss.beats_per_bar) % 1.0
        beats = np.nonzero(np.diff(beat_pos) < 0)[0] + 1
        downbeats = np.nonzero(np.diff(pos) < 0)[0] + 1
        return beats / float(self.fps), downbeats / float(self.fps)


def track_batch(model, spectrograms, tracker=None, device="cuda"):
    """Run the beat network and the GPU DBN on a padded batch of spectrograms (B, T, F)."""
    tracker = tracker or DBNDownBeatTrackerGPU()
    with torch.no_grad():
        logits = model(spectrograms.to(device))                     # (B, T, 2)
        act = torch.sigmoid(logits)
    return tracker.decode(act)


def probabilities_from_cupy(x):
    """Helper for notebooks: cupy array -> torch tensor without a host copy."""
    return from_dlpack(x.toDlpack())
