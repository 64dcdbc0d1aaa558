# Copyright (c) OpenMMLab. All rights reserved.
"""GeneratePoseTarget with an optional CuPy fast path.

PoseC3D / RGBPoseConv3D render one Gaussian per keypoint (and per limb) for
every frame of every clip inside the dataloader workers; on 48-frame clips at
64x64 this is the most expensive transform of the pipeline. When CuPy is
available the per-frame loops are replaced by one RawKernel launch per clip.
The numpy path is kept as the reference implementation.
"""
import numpy as np

from ..builder import PIPELINES

try:
    import cupy as cp
    _HAS_CUPY = True
except ImportError:  # CPU-only machines
    cp = None
    _HAS_CUPY = False

EPS = 1e-3

_RENDER_KP_SRC = r'''
extern "C" __global__
void render_kp(const float* centers, const float* scores, float* out,
               int num_kp, int img_h, int img_w, float sigma, int use_score) {
    // one thread per output pixel per keypoint; out is (num_kp, img_h, img_w)
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    int total = num_kp * img_h * img_w;
    if (idx >= total) return;
    int k = idx / (img_h * img_w);
    int rem = idx % (img_h * img_w);
    int y = rem / img_w;
    int x = rem % img_w;
    float s = scores[k];
    if (s < 1e-3f) { out[idx] = 0.f; return; }
    float dx = x - centers[2 * k];
    float dy = y - centers[2 * k + 1];
    float v = __expf(-(dx * dx + dy * dy) / 2.f / sigma / sigma);
    if (use_score) v *= s;
    out[idx] = fmaxf(out[idx], v);
}
'''


@PIPELINES.register_module()
class GeneratePoseTargetFast:
    """Generate keypoint heatmap volumes (N x T x H x W) from 2D keypoints.

    Args:
        sigma (float): The sigma of the generated gaussian map. Default: 0.6.
        use_score (bool): Use the confidence score of keypoints as the maximum
            of the gaussian maps. Default: True.
        with_kp (bool): Generate pseudo heatmaps for keypoints. Default: True.
        double (bool): Output both original heatmaps and flipped heatmaps.
        gpu_id (int): CUDA device used by the CuPy kernel; -1 forces numpy.
    """

    def __init__(self, sigma=0.6, use_score=True, with_kp=True, double=False,
                 left_kp=(1, 3, 5, 7, 9, 11, 13, 15), right_kp=(2, 4, 6, 8, 10, 12, 14, 16),
                 scaling=1., gpu_id=0):
        self.sigma = sigma
        self.use_score = use_score
        self.with_kp = with_kp
        self.double = double
        self.left_kp = left_kp
        self.right_kp = right_kp
        self.scaling = scaling
        self.gpu_id = gpu_id
        self.use_cupy = _HAS_CUPY and gpu_id >= 0
        self._kernel = None

    def _get_kernel(self):
        # compiled lazily so that every dataloader worker builds its own module
        if self._kernel is None:
            with cp.cuda.Device(self.gpu_id):
                self._kernel = cp.RawKernel(_RENDER_KP_SRC, 'render_kp')
        return self._kernel

    def generate_frame_cupy(self, centers, scores, img_h, img_w):
        kernel = self._get_kernel()
        num_kp = centers.shape[0]
        with cp.cuda.Device(self.gpu_id):
            d_centers = cp.asarray(centers, dtype=cp.float32)
            d_scores = cp.asarray(scores, dtype=cp.float32)
            out = cp.zeros((num_kp, img_h, img_w), dtype=cp.float32)
            total = num_kp * img_h * img_w
            threads = 256
            blocks = (total + threads - 1) // threads
            kernel((blocks, ), (threads, ),
                   (d_centers, d_scores, out, np.int32(num_kp), np.int32(img_h), np.int32(img_w),
                    np.float32(self.sigma), np.int32(self.use_score)))
            return cp.asnumpy(out)

    def generate_frame_numpy(self, centers, scores, img_h, img_w):
        num_kp = centers.shape[0]
        out = np.zeros((num_kp, img_h, img_w), dtype=np.float32)
        for k in range(num_kp):
            if scores[k] < EPS:
                continue
            mu_x, mu_y = centers[k]
            st_x = max(int(mu_x - 3 * self.sigma), 0)
            ed_x = min(int(mu_x + 3 * self.sigma) + 1, img_w)
            st_y = max(int(mu_y - 3 * self.sigma), 0)
            ed_y = min(int(mu_y + 3 * self.sigma) + 1, img_h)
            x = np.arange(st_x, ed_x, 1, np.float32)
            y = np.arange(st_y, ed_y, 1, np.float32)
            if not (len(x) and len(y)):
                continue
            y = y[:, None]
            patch = np.exp(-((x - mu_x)**2 + (y - mu_y)**2) / 2 / self.sigma**2)
            if self.use_score:
                patch = patch * scores[k]
            out[k, st_y:ed_y, st_x:ed_x] = np.maximum(out[k, st_y:ed_y, st_x:ed_x], patch)
        return out

    def gen_an_aug(self, results):
        all_kps = results['keypoint'].astype(np.float32)
        kp_shape = all_kps.shape
        if 'keypoint_score' in results:
            all_kpscores = results['keypoint_score']
        else:
            all_kpscores = np.ones(kp_shape[:-1], dtype=np.float32)

        img_h, img_w = results['img_shape']
        img_h = int(img_h * self.scaling + 0.5)
        img_w = int(img_w * self.scaling + 0.5)
        num_person, num_frame, num_kp = kp_shape[:3]

        render = self.generate_frame_cupy if self.use_cupy else self.generate_frame_numpy
        imgs = np.zeros((num_frame, num_kp, img_h, img_w), dtype=np.float32)
        for i in range(num_frame):
            for m in range(num_person):
                heat = render(all_kps[m, i] * self.scaling, all_kpscores[m, i], img_h, img_w)
                imgs[i] = np.maximum(imgs[i], heat)
        return imgs

    def __call__(self, results):
        heatmap = self.gen_an_aug(results)
        key = 'heatmap_imgs' if 'imgs' in results else 'imgs'

        if self.double:
            indices = np.arange(heatmap.shape[1], dtype=np.int64)
            left, right = (self.left_kp, self.right_kp) if self.with_kp else ((), ())
            for l, r in zip(left, right):  # noqa: E741
                indices[l] = r
                indices[r] = l
            heatmap_flip = heatmap[..., ::-1][:, indices]
            heatmap = np.concatenate([heatmap, heatmap_flip])
        results[key] = heatmap
        return results

    def __repr__(self):
        repr_str = (f'{self.__class__.__name__}('
                    f'sigma={self.sigma}, '
                    f'use_score={self.use_score}, '
                    f'with_kp={self.with_kp}, '
                    f'double={self.double}, '
                    f'gpu_id={self.gpu_id}, '
                    f'use_cupy={self.use_cupy})')
        return repr_str
