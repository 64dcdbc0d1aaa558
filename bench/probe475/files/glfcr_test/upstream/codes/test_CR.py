import os
import argparse

import numpy as np
import torch
from torch.utils.data import DataLoader

from dataloader import AlignedDataset, get_train_val_test_filelists
from net_CR_RDN import RDN_residual_CR
from metrics import PSNR, SSIM, SAM, MAE, RMSE, summarize


def test(CR_net, opts):

    _, _, test_filelist = get_train_val_test_filelists(opts.data_list_filepath)

    data = AlignedDataset(opts, test_filelist)

    dataloader = DataLoader(dataset=data, batch_size=opts.batch_sz, shuffle=False)

    results = []
    for inputs in dataloader:

        cloudy_data = inputs['cloudy_data'].cuda()
        cloudfree_data = inputs['cloudfree_data'].cuda()
        SAR_data = inputs['SAR_data'].cuda()
        file_name = inputs['file_name'][0]

        pred_cloudfree_data = CR_net(cloudy_data, SAR_data)

        psnr_13 = PSNR(pred_cloudfree_data, cloudfree_data)
        ssim_13 = SSIM(pred_cloudfree_data, cloudfree_data).item()
        sam_13 = SAM(pred_cloudfree_data, cloudfree_data)
        results.append({'PSNR': psnr_13, 'SSIM': ssim_13, 'SAM': sam_13,
                        'MAE': MAE(pred_cloudfree_data, cloudfree_data),
                        'RMSE': RMSE(pred_cloudfree_data, cloudfree_data)})

        if opts.save_pred:
            np.save(os.path.join(opts.pred_dir, file_name + '.npy'),
                    pred_cloudfree_data.squeeze(0).cpu().numpy())

        print(len(results), file_name, 'psnr_13: %.4f, ssim_13: %.4f, sam: %.3f' % (psnr_13, ssim_13, sam_13))

    print('mean over test set:', summarize(results))


def main():
    parser = argparse.ArgumentParser()

    parser.add_argument('--batch_sz', type=int, default=1, help='batch size used for training')
    parser.add_argument('--load_size', type=int, default=256)
    parser.add_argument('--crop_size', type=int, default=128)
    parser.add_argument('--input_data_folder', type=str, default='../data/SEN12MS-CR')
    parser.add_argument('--data_list_filepath', type=str, default='../data/data.csv')
    parser.add_argument('--is_test', type=bool, default=True)
    parser.add_argument('--is_use_cloudmask', type=bool, default=False)
    parser.add_argument('--cloud_threshold', type=float, default=0.2)  # only useful when is_use_cloudmask=True
    parser.add_argument('--model_path', type=str, default='../ckpt/CR_net.pth')
    parser.add_argument('--save_pred', action='store_true')
    parser.add_argument('--pred_dir', type=str, default='../results/')
    parser.add_argument('--gpu_ids', type=str, default='0')

    opts = parser.parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_ids
    os.makedirs(opts.pred_dir, exist_ok=True)

    CR_net = RDN_residual_CR(opts.crop_size).cuda()
    checkpoint = torch.load(opts.model_path)
    CR_net.load_state_dict(checkpoint['network'])

    CR_net.eval()
    with torch.no_grad():
        test(CR_net, opts)


if __name__ == "__main__":
    main()
