"""Evaluate a trained DuDoNet on the 2,000 synthesised test images (10 metal masks each)."""
import os
import time
import argparse
import numpy as np
import h5py
import torch
from PIL import Image

from network.dudonet import DuDoNet
from utils.dataset import normalize, image_get_minmax, proj_get_minmax

parser = argparse.ArgumentParser(description="DuDoNet_Test")
parser.add_argument("--model_dir", type=str, default="pretrained_model/DuDoNet_latest.pt",
                    help='path to the released model (trained on a V100)')
parser.add_argument("--data_path", type=str, default="./data/test/", help='path to test data')
parser.add_argument("--use_GPU", type=bool, default=True, help='use GPU or not')
parser.add_argument("--save_path", type=str, default="./save_results/", help='path to save results')
parser.add_argument('--base_ch', type=int, default=32)
parser.add_argument('--ril_pad', type=int, default=8)
parser.add_argument('--num_mask', type=int, default=10)
opt = parser.parse_args()

device = torch.device("cuda:0" if opt.use_GPU else "cpu")

input_dir = os.path.join(opt.save_path, 'Xma')
gt_dir = os.path.join(opt.save_path, 'Xgt')
outX_dir = os.path.join(opt.save_path, 'X')
for d in (input_dir, gt_dir, outX_dir):
    os.makedirs(d, exist_ok=True)

test_mask = np.load(os.path.join(opt.data_path, 'testmask.npy'))


def tohu(x):
    # back to HU for the metric (u_water = 0.192)
    return x / 255.0 * 1000.0 / 0.192 * 0.192 - 1000.0


def test_image(data_path, imag_idx, mask_idx):
    txtdir = os.path.join(data_path, 'test_640geo_dir.txt')
    mat_files = open(txtdir, 'r').readlines()
    gt_dir = mat_files[imag_idx]
    file_dir = gt_dir[:-6]
    data_file = file_dir + str(mask_idx) + '.h5'
    abs_dir = os.path.join(data_path, 'test_640geo/', data_file)
    gt_absdir = os.path.join(data_path, 'test_640geo/', gt_dir[:-1])
    gt_file = h5py.File(gt_absdir, 'r')
    Xgt = gt_file['image'][()]
    gt_file.close()
    file = h5py.File(abs_dir, 'r')
    Xma = file['ma_CT'][()]
    XLI = file['LI_CT'][()]
    SLI = file['LI_sinogram'][()]
    Tr = file['metal_trace'][()]
    file.close()
    M512 = test_mask[:, :, mask_idx]
    M = np.array(Image.fromarray(M512).resize((416, 416), Image.BILINEAR))
    Xma = normalize(Xma, image_get_minmax())
    Xgt = normalize(Xgt, image_get_minmax())
    XLI = normalize(XLI, image_get_minmax())
    SLI = normalize(SLI, proj_get_minmax())
    Tr = 1 - Tr.astype(np.float32)
    Tr = np.transpose(np.expand_dims(Tr, 2), (2, 0, 1))
    Mask = M.astype(np.float32)
    Mask = np.transpose(np.expand_dims(Mask, 2), (2, 0, 1))
    return (torch.Tensor(Xma).unsqueeze(0), torch.Tensor(XLI).unsqueeze(0), torch.Tensor(Xgt).unsqueeze(0),
            torch.Tensor(Mask).unsqueeze(0), torch.Tensor(SLI).unsqueeze(0), torch.Tensor(Tr).unsqueeze(0))


def main():
    print('Loading model ...\n')
    net = DuDoNet(opt).to(device)
    net.load_state_dict(torch.load(opt.model_dir))
    net.eval()
    time_test = 0
    count = 0
    rmse_all, psnr_all = [], []
    for imag_idx in range(200):
        print(imag_idx)
        for mask_idx in range(opt.num_mask):
            Xma, XLI, Xgt, M, SLI, Tr = test_image(opt.data_path, imag_idx, mask_idx)
            Xma, XLI, Xgt, M, SLI, Tr = [t.to(device) for t in (Xma, XLI, Xgt, M, SLI, Tr)]
            with torch.no_grad():
                if opt.use_GPU:
                    torch.cuda.synchronize()
                start_time = time.time()
                _, _, X_out = net(SLI / 255.0, XLI / 255.0, 1 - Tr)
                if opt.use_GPU:
                    torch.cuda.synchronize()  # kernels are asynchronous: wait before stopping the clock
                end_time = time.time()
                dur_time = end_time - start_time
                time_test += dur_time
            Xoutclip = torch.clamp(X_out * 255.0 / 255.0, 0, 0.5) * (1 - M)
            Xgtclip = torch.clamp(Xgt / 255.0, 0, 0.5) * (1 - M)
            rmse = torch.sqrt(torch.mean((Xoutclip - Xgtclip) ** 2)).item() * 1000.0 / 0.192
            psnr = 10 * np.log10(0.5 ** 2 / max(torch.mean((Xoutclip - Xgtclip) ** 2).item(), 1e-12))
            rmse_all.append(rmse)
            psnr_all.append(psnr)
            idx = imag_idx * opt.num_mask + mask_idx + 1
            Xnorm = X_out.data.cpu().numpy().squeeze()
            np.save(os.path.join(outX_dir, '%04d.npy' % idx), Xnorm)
            if mask_idx == 0:
                save_png(Xnorm * 255.0, os.path.join(outX_dir, '%04d.png' % idx))
                save_png(Xma.cpu().numpy().squeeze(), os.path.join(input_dir, '%04d.png' % idx))
                save_png(Xgt.cpu().numpy().squeeze(), os.path.join(gt_dir, '%04d.png' % idx))
            count += 1
    print('Avg. time={:.4f}s'.format(time_test / count))
    print('RMSE (HU) = {:.2f}, PSNR = {:.2f} dB'.format(np.mean(rmse_all), np.mean(psnr_all)))
    report_by_mask_size(rmse_all, psnr_all)


# the 10 test masks ordered from largest to smallest metal implant (pixels)
MASK_SIZES = [4967, 2061, 904, 913, 1130, 575, 184, 251, 166, 56]


def report_by_mask_size(rmse_all, psnr_all):
    rmse = np.array(rmse_all).reshape(-1, opt.num_mask)
    psnr = np.array(psnr_all).reshape(-1, opt.num_mask)
    order = np.argsort(MASK_SIZES[:opt.num_mask])[::-1]
    print('{:>6s} {:>10s} {:>10s}'.format('mask', 'RMSE(HU)', 'PSNR(dB)'))
    for m in order:
        print('{:>6d} {:>10.2f} {:>10.2f}'.format(MASK_SIZES[m], rmse[:, m].mean(), psnr[:, m].mean()))
    np.savetxt(os.path.join(opt.save_path, 'rmse_per_mask.txt'), rmse.mean(0), fmt='%.3f')


def save_png(x, path, vmin=-175, vmax=275):
    """Save an image in the usual soft-tissue window."""
    hu = x * 1000.0 / 0.192 / 255.0 * 0.192 - 1000.0
    img = np.clip((hu - vmin) / (vmax - vmin), 0, 1)
    Image.fromarray((img * 255).astype(np.uint8)).save(path)


if __name__ == "__main__":
    main()
