import cv2
import itertools
import numpy as np
import random
import torch
import torch.nn as nn
import torch.nn.functional as F
import math


def random_blur_kernel(probs, N_blur, sigrange_gauss, sigrange_line, wmin_line):
    N = N_blur
    coords = torch.from_numpy(np.stack(np.meshgrid(range(N_blur), range(N_blur), indexing='ij'), axis=-1)) - (
            0.5 * (N - 1))
    manhat = torch.sum(torch.abs(coords), dim=-1)

    # nothing, default
    vals_nothing = (manhat < 0.5).float()

    # gauss
    sig_gauss = torch.rand(1)[0] * (sigrange_gauss[1] - sigrange_gauss[0]) + sigrange_gauss[0]
    vals_gauss = torch.exp(-torch.sum(coords ** 2, dim=-1) / 2. / sig_gauss ** 2)

    # line
    theta = torch.rand(1)[0] * 2. * np.pi
    v = torch.FloatTensor([torch.cos(theta), torch.sin(theta)])
    dists = torch.sum(coords * v, dim=-1)

    sig_line = torch.rand(1)[0] * (sigrange_line[1] - sigrange_line[0]) + sigrange_line[0]
    w_line = torch.rand(1)[0] * (0.5 * (N - 1) + 0.1 - wmin_line) + wmin_line

    vals_line = torch.exp(-dists ** 2 / 2. / sig_line ** 2) * (manhat < w_line)

    t = torch.rand(1)[0]
    vals = vals_nothing
    if t < (probs[0] + probs[1]):
        vals = vals_line
    else:
        vals = vals
    if t < probs[0]:
        vals = vals_gauss
    else:
        vals = vals

    v = vals / torch.sum(vals)
    z = torch.zeros_like(v)
    f = torch.stack([v, z, z, z, v, z, z, z, v], dim=0).reshape([3, 3, N, N])
    return f


def get_rand_transform_matrix(image_size, d, batch_size):
    Ms = np.zeros((batch_size, 2, 3, 3))
    for i in range(batch_size):
        tl_x = random.uniform(-d, d)  # Top left corner, top
        tl_y = random.uniform(-d, d)  # Top left corner, left
        bl_x = random.uniform(-d, d)  # Bot left corner, bot
        bl_y = random.uniform(-d, d)  # Bot left corner, left
        tr_x = random.uniform(-d, d)  # Top right corner, top
        tr_y = random.uniform(-d, d)  # Top right corner, right
        br_x = random.uniform(-d, d)  # Bot right corner, bot
        br_y = random.uniform(-d, d)  # Bot right corner, right

        rect = np.array([
            [tl_x, tl_y],
            [tr_x + image_size, tr_y],
            [br_x + image_size, br_y + image_size],
            [bl_x, bl_y + image_size]], dtype="float32")

        dst = np.array([
            [0, 0],
            [image_size, 0],
            [image_size, image_size],
            [0, image_size]], dtype="float32")

        M = cv2.getPerspectiveTransform(rect, dst)
        M_inv = np.linalg.inv(M)
        Ms[i, 0, :, :] = M_inv
        Ms[i, 1, :, :] = M
    Ms = torch.from_numpy(Ms).float()

    return Ms


def get_rnd_brightness_torch(rnd_bri, rnd_hue, batch_size):
    rnd_hue = torch.FloatTensor(batch_size, 3, 1, 1).uniform_(-rnd_hue, rnd_hue)
    rnd_brightness = torch.FloatTensor(batch_size, 1, 1, 1).uniform_(-rnd_bri, rnd_bri)
    return rnd_hue + rnd_brightness


# reference: https://github.com/mlomnitz/DiffJPEG.git
y_table = np.array(
    [[16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60,
                                        55], [14, 13, 16, 24, 40, 57, 69, 56],
     [14, 17, 22, 29, 51, 87, 80, 62], [18, 22, 37, 56, 68, 109, 103,
                                        77], [24, 35, 55, 64, 81, 104, 113, 92],
     [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]],
    dtype=np.float32).T

y_table = nn.Parameter(torch.from_numpy(y_table))

c_table = np.empty((8, 8), dtype=np.float32)
c_table.fill(99)
c_table[:4, :4] = np.array([[17, 18, 24, 47], [18, 21, 26, 66],
                            [24, 26, 56, 99], [47, 66, 99, 99]]).T
c_table = nn.Parameter(torch.from_numpy(c_table))


# 1. RGB -> YCbCr
def rgb_to_ycbcr_jpeg(image):
    matrix = np.array(
        [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5],
         [0.5, -0.418688, -0.081312]], dtype=np.float32).T
    shift = [0., 128., 128.]

    image = image.permute(0, 2, 3, 1)
    result = torch.tensordot(image, torch.from_numpy(matrix).to(image.device), dims=1) + \
        torch.tensor(shift, device=image.device)
    result = result.view(image.shape)
    return result.permute(0, 3, 1, 2)


# 2. Chroma subsampling
def downsampling_420(image):
    image_y = image[:, 0, :, :]
    image_cb = F.avg_pool2d(image[:, 1:2, :, :], kernel_size=2, stride=2, count_include_pad=False).squeeze(1)
    image_cr = F.avg_pool2d(image[:, 2:3, :, :], kernel_size=2, stride=2, count_include_pad=False).squeeze(1)
    return image_y, image_cb, image_cr


# 3. Block splitting
def image_to_patches(image):
    # input: batch x h x w
    k = 8
    height, width = image.shape[1:3]
    batch_size = image.shape[0]
    image_reshaped = image.view(batch_size, height // k, k, -1, k)
    image_transposed = torch.transpose(image_reshaped, 2, 3)
    return image_transposed.contiguous().view(batch_size, -1, k, k)


# 4. DCT
def dct_8x8(image):
    image = image - 128
    tensor = np.zeros((8, 8, 8, 8), dtype=np.float32)
    for x, y, u, v in itertools.product(range(8), repeat=4):
        tensor[x, y, u, v] = np.cos((2 * x + 1) * u * np.pi / 16) * np.cos(
            (2 * y + 1) * v * np.pi / 16)
    alpha = np.array([1. / np.sqrt(2)] + [1] * 7)
    scale = torch.from_numpy(np.outer(alpha, alpha) * 0.25).float().cuda()
    tensor = torch.from_numpy(tensor).float().cuda()
    result = scale * torch.tensordot(image, tensor, dims=2)
    return result


# 5. Quantization
def y_quantize(image, rounding, factor=1):
    image = image.float() / (y_table.cuda() * factor)
    image = rounding(image)
    return image


def c_quantize(image, rounding, factor=1):
    image = image.float() / (c_table.cuda() * factor)
    image = rounding(image)
    return image


# -5. Dequantization
def y_dequantize(image, factor=1):
    return image * (y_table.to(image.device) * factor)


def c_dequantize(image, factor=1):
    return image * (c_table.to(image.device) * factor)


# -4. Inverse DCT
def idct_8x8(image):
    alpha = np.array([1. / np.sqrt(2)] + [1] * 7)
    alpha = torch.from_numpy(np.outer(alpha, alpha)).float().to(image.device)
    image = image * alpha

    tensor = np.zeros((8, 8, 8, 8), dtype=np.float32)
    for x, y, u, v in itertools.product(range(8), repeat=4):
        tensor[x, y, u, v] = np.cos((2 * u + 1) * x * np.pi / 16) * np.cos(
            (2 * v + 1) * y * np.pi / 16)
    tensor = torch.from_numpy(tensor).float().to(image.device)
    result = 0.25 * torch.tensordot(image, tensor, dims=2) + 128
    return result


# -3. Block joining
def patches_to_image(patches, height, width):
    # input: batch x h*w/64 x h x w
    k = 8
    batch_size = patches.shape[0]
    image_reshaped = patches.view(batch_size, height // k, width // k, k, k)
    image_transposed = torch.transpose(image_reshaped, 2, 3)
    return image_transposed.contiguous().view(batch_size, height, width)


# -2. Chroma upsampling
def upsampling_420(y, cb, cr):
    # input:
    #   y(tensor): y channel image
    #   cb(tensor): cb channel
    #   cr(tensor): cr channel
    # output:
    #   image(tensor): batch x height x width x 3
    def repeat(x, k=2):
        height, width = x.shape[1:3]
        x = x.unsqueeze(-1)
        x = x.repeat(1, 1, k, k)
        x = x.view(-1, height * k, width * k)
        return x

    cb = repeat(cb)
    cr = repeat(cr)
    return torch.cat([y.unsqueeze(3), cb.unsqueeze(3), cr.unsqueeze(3)], dim=3)


# -1: YCbCr -> RGB
def ycbcr_to_rgb_jpeg(image):
    matrix = np.array(
        [[1., 0., 1.402], [1, -0.344136, -0.714136], [1, 1.772, 0]],
        dtype=np.float32).T
    shift = [0, -128, -128]

    result = torch.tensordot(image + torch.tensor(shift, device=image.device),
                             torch.from_numpy(matrix).to(image.device), dims=1)
    result = result.view(image.shape)
    return result.permute(0, 3, 1, 2)


def diff_round(x):
    """ Differentiable rounding function """
    return torch.round(x) + (x - torch.round(x)) ** 3


def round_only_at_0(x):
    cond = (torch.abs(x) < 0.5).float()
    return cond * (x ** 3) + (1 - cond) * x


def quality_to_factor(quality):
    """ Calculate factor corresponding to quality """
    if quality < 50:
        quality = 5000. / quality
    else:
        quality = 200. - quality * 2
    return quality / 100.


def jpeg_compress_decompress(image, downsample_c=True, rounding=round_only_at_0, quality=80):
    # image_r = image * 255
    image_r = image * 255
    height, width = image_r.shape[2:4]
    orig_height, orig_width = height, width
    if height % 16 != 0 or width % 16 != 0:
        # Round up to next multiple of 16
        height = ((height - 1) // 16 + 1) * 16
        width = ((width - 1) // 16 + 1) * 16

        vpad = height - orig_height
        wpad = width - orig_width
        top = vpad // 2
        bottom = vpad - top
        left = wpad // 2
        right = wpad - left
        # image = tf.pad(image, [[0, 0], [top, bottom], [left, right], [0, 0]], 'SYMMETRIC')
        image_r = F.pad(image_r, (left, right, top, bottom), mode='reflect')

    # "Compression"
    image_r = rgb_to_ycbcr_jpeg(image_r)
    if downsample_c:
        y, cb, cr = downsampling_420(image_r)
    else:
        y, cb, cr = image_r[:, 0, :, :], image_r[:, 1, :, :], image_r[:, 2, :, :]
    components = {'y': y, 'cb': cb, 'cr': cr}
    for k in components.keys():
        comp = image_to_patches(components[k])
        comp = dct_8x8(comp)
        comp = c_quantize(comp, rounding, quality_to_factor(quality)) if k in ('cb', 'cr') else \
            y_quantize(comp, rounding, quality_to_factor(quality))

        components[k] = comp

    # "Decompression"
    for k in components.keys():
        comp = components[k]
        comp = c_dequantize(comp, quality_to_factor(quality)) if k in ('cb', 'cr') else \
            y_dequantize(comp, quality_to_factor(quality))

        comp = idct_8x8(comp)
        if k in ('cb', 'cr'):
            if downsample_c:
                comp = patches_to_image(comp, int(height / 2), int(width / 2))
            else:
                comp = patches_to_image(comp, height, width)
        else:
            comp = patches_to_image(comp, height, width)

        components[k] = comp

    y, cb, cr = components['y'], components['cb'], components['cr']
    if downsample_c:
        image = upsampling_420(y, cb, cr)
    else:
        image = torch.stack((y, cb, cr), dim=-1)
    image = ycbcr_to_rgb_jpeg(image)

    # Crop to original size
    if orig_height != height or orig_width != width:
        image = image[:, :, :orig_height, :orig_width]

    # image = tf.minimum(255., tf.maximum(0., image))
    image = torch.min(255 * torch.ones_like(image), torch.max(torch.zeros_like(image), image))

    # un-scale
    image = image / 255

    return image


def save_image_grid(tensor, path, nrow=4):
    """ Debug helper: writes a grid of images (expects values in [0, 1]). """
    import torchvision
    grid = torchvision.utils.make_grid(tensor.detach().cpu(), nrow=nrow)
    torchvision.utils.save_image(grid, path)
