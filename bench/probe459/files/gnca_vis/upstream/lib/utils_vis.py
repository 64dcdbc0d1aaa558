import base64
import io
import os

import numpy as np
import PIL.Image
import PIL.ImageDraw
import requests
import matplotlib.pyplot as plt


class SamplePool:
    """Pool of previously grown patterns used for the "persistent" experiment.

    Batches are sampled from the pool, grown for a few steps, and written back,
    so that the model learns to keep a pattern stable over long horizons.
    """

    def __init__(self, *, _parent=None, _parent_idx=None, **slots):
        self._parent = _parent
        self._parent_idx = _parent_idx
        self._slot_names = slots.keys()
        self._size = None
        for k, v in slots.items():
            if self._size is None:
                self._size = len(v)
            assert self._size == len(v)
            setattr(self, k, np.asarray(v))

    def sample(self, n):
        idx = np.random.choice(self._size, n, False)
        batch = {k: getattr(self, k)[idx] for k in self._slot_names}
        batch = SamplePool(**batch, _parent=self, _parent_idx=idx)
        return batch

    def commit(self):
        for k in self._slot_names:
            getattr(self._parent, k)[self._parent_idx] = getattr(self, k)


def load_image(url, max_size=40):
    r = requests.get(url)
    img = PIL.Image.open(io.BytesIO(r.content))
    img.thumbnail((max_size, max_size), PIL.Image.ANTIALIAS)
    img = np.float32(img) / 255.0
    # premultiply RGB by Alpha
    img[..., :3] *= img[..., 3:]
    return img


def load_emoji(emoji, max_size=40):
    code = hex(ord(emoji))[2:].lower()
    url = "https://github.com/googlefonts/noto-emoji/blob/main/png/128/emoji_u%s.png?raw=true" % code
    return load_image(url, max_size)


def load_local_image(path, max_size=40):
    img = PIL.Image.open(path).convert("RGBA")
    img.thumbnail((max_size, max_size), PIL.Image.ANTIALIAS)
    img = np.float32(img) / 255.0
    img[..., :3] *= img[..., 3:]
    return img


def to_rgba(x):
    return x[..., :4]


def to_alpha(x):
    return np.clip(x[..., 3:4], 0.0, 1.0)


def to_rgb(x):
    # assume rgb premultiplied by alpha
    rgb, a = x[..., :3], to_alpha(x)
    return 1.0 - a + rgb


def get_living_mask(x):
    alpha = x[:, :, :, 3:4]
    return (
        np.max(
            np.stack(
                [alpha[:, i : i + x.shape[1] - 2, j : j + x.shape[2] - 2] for i in range(3) for j in range(3)]
            ),
            axis=0,
        )
        > 0.1
    )


def make_seeds(shape, n_channels, n=1):
    x = np.zeros([n, shape[0], shape[1], n_channels], np.float32)
    x[:, shape[0] // 2, shape[1] // 2, 3:] = 1.0
    return x


def make_seed(shape, n_channels):
    seed = np.zeros([shape[0], shape[1], n_channels], np.float32)
    seed[shape[0] // 2, shape[1] // 2, 3:] = 1.0
    return seed


def make_circle_masks(n, h, w):
    x = np.linspace(-1.0, 1.0, w)[None, None, :]
    y = np.linspace(-1.0, 1.0, h)[None, :, None]
    center = np.random.random([2, n, 1, 1]) * 1.0 - 0.5
    r = np.random.random([n, 1, 1]) * 0.3 + 0.1
    x, y = (x - center[0]) / r, (y - center[1]) / r
    mask = (x * x + y * y < 1.0).astype(np.float32)
    return mask


def np2pil(a):
    if a.dtype in [np.float32, np.float64]:
        a = np.uint8(np.clip(a, 0, 1) * 255)
    return PIL.Image.fromarray(a)


def imwrite(f, a, fmt=None):
    a = np.asarray(a)
    if isinstance(f, str):
        fmt = f.rsplit(".", 1)[-1].lower()
        if fmt == "jpg":
            fmt = "jpeg"
        f = open(f, "wb")
    np2pil(a).save(f, fmt, quality=95)


def imencode(a, fmt="jpeg"):
    a = np.asarray(a)
    if len(a.shape) == 3 and a.shape[-1] == 4:
        fmt = "png"
    f = io.BytesIO()
    imwrite(f, a, fmt)
    return f.getvalue()


def im2url(a, fmt="jpeg"):
    encoded = imencode(a, fmt)
    base64_byte_string = base64.b64encode(encoded).decode("ascii")
    return "data:image/" + fmt.upper() + ";base64," + base64_byte_string


def tile2d(a, w=None):
    a = np.asarray(a)
    if w is None:
        w = int(np.ceil(np.sqrt(len(a))))
    th, tw = a.shape[1:3]
    pad = (w - len(a)) % w
    a = np.pad(a, [(0, pad)] + [(0, 0)] * (a.ndim - 1), "constant")
    h = len(a) // w
    a = a.reshape([h, w] + list(a.shape[1:]))
    a = np.rollaxis(a, 2, 1).reshape([th * h, tw * w] + list(a.shape[4:]))
    return a


def zoom(img, scale=4):
    img = np.repeat(img, scale, 0)
    img = np.repeat(img, scale, 1)
    return img


def visualize_batch(x0, x, step_i, out_dir="train_log"):
    vis0 = np.hstack(to_rgb(x0))
    vis1 = np.hstack(to_rgb(x))
    vis = np.vstack([vis0, vis1])
    os.makedirs(out_dir, exist_ok=True)
    imwrite(os.path.join(out_dir, "batches_%04d.jpg" % step_i), vis)
    print("batch (before/after):")
    plt.figure(figsize=[15, 5])
    for i in range(x0.shape[0]):
        plt.subplot(2, x0.shape[0], i + 1)
        plt.imshow(to_rgb(x0[i]))
        plt.axis("off")
    for i in range(x0.shape[0]):
        plt.subplot(2, x0.shape[0], i + 1 + x0.shape[0])
        plt.imshow(to_rgb(x[i]))
        plt.axis("off")
    plt.show()
    plt.close()


def plot_loss(loss_log, out_path=None):
    plt.figure(figsize=(10, 4))
    plt.title("Loss history (log10)")
    plt.plot(np.log10(loss_log), ".", alpha=0.1)
    if out_path is not None:
        plt.savefig(out_path)
    plt.show()
    plt.close()


class VideoWriter:
    """Minimal moviepy-based writer used by the notebook (``with VideoWriter(...) as vid``)."""

    def __init__(self, filename="_autoplay.mp4", fps=30.0, **kw):
        self.writer = None
        self.params = dict(filename=filename, fps=fps, **kw)

    def add(self, img):
        import moviepy.video.io.ffmpeg_writer as ffmpeg_writer

        img = np.asarray(img)
        if self.writer is None:
            h, w = img.shape[:2]
            self.writer = ffmpeg_writer.FFMPEG_VideoWriter(size=(w, h), **self.params)
        if img.dtype in [np.float32, np.float64]:
            img = np.uint8(img.clip(0, 1) * 255)
        if len(img.shape) == 2:
            img = np.repeat(img[..., None], 3, -1)
        self.writer.write_frame(img)

    def close(self):
        if self.writer:
            self.writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *kw):
        self.close()
