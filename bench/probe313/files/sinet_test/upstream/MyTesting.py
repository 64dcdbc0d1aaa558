import torch
import torch.nn.functional as F
import numpy as np
import os, argparse
import time
from lib.Network_Res2Net_GRA_NCD import Network
from utils.data_val import test_dataset
import cv2

parser = argparse.ArgumentParser()
parser.add_argument('--testsize', type=int, default=352, help='testing size')
parser.add_argument('--pth_path', type=str, default='./snapshot/SINet_V2/Net_epoch_best.pth')
parser.add_argument('--gpu_id', type=int, default=0, help='index of the GPU used for inference')
parser.add_argument('--datasets', type=str, nargs='+', default=['CAMO', 'COD10K', 'CHAMELEON', 'NC4K'])
parser.add_argument('--eval', action='store_true', help='compute Sm / wFm / mEm / MAE right after inference')
opt = parser.parse_args()


def evaluate(pred_root, gt_root):
    """Standard COD metrics with PySODMetrics (CPU, numpy)."""
    import py_sod_metrics
    FM = py_sod_metrics.Fmeasure()
    WFM = py_sod_metrics.WeightedFmeasure()
    SM = py_sod_metrics.Smeasure()
    EM = py_sod_metrics.Emeasure()
    M = py_sod_metrics.MAE()

    names = sorted(os.listdir(pred_root))
    for name in names:
        gt = cv2.imread(os.path.join(gt_root, name), cv2.IMREAD_GRAYSCALE)
        pred = cv2.imread(os.path.join(pred_root, name), cv2.IMREAD_GRAYSCALE)
        if pred.shape != gt.shape:
            pred = cv2.resize(pred, dsize=gt.shape[::-1], interpolation=cv2.INTER_LINEAR)
        FM.step(pred=pred, gt=gt)
        WFM.step(pred=pred, gt=gt)
        SM.step(pred=pred, gt=gt)
        EM.step(pred=pred, gt=gt)
        M.step(pred=pred, gt=gt)

    results = {
        'Smeasure': SM.get_results()['sm'],
        'wFmeasure': WFM.get_results()['wfm'],
        'meanEm': EM.get_results()['em']['curve'].mean(),
        'adpEm': EM.get_results()['em']['adp'],
        'meanFm': FM.get_results()['fm']['curve'].mean(),
        'MAE': M.get_results()['mae'],
    }
    return {k: round(float(v), 3) for k, v in results.items()}


device = torch.device('cuda:{}'.format(opt.gpu_id))
print('Inference on', torch.cuda.get_device_name(device))

for _data_name in opt.datasets:
    data_path = './Dataset/TestDataset/{}/'.format(_data_name)
    save_path = './res/{}/{}/'.format(opt.pth_path.split('/')[-2], _data_name)
    model = Network(imagenet_pretrained=False)
    model.load_state_dict(torch.load(opt.pth_path, map_location=device))
    model.to(device)
    model.eval()

    os.makedirs(save_path, exist_ok=True)
    image_root = '{}/Imgs/'.format(data_path)
    gt_root = '{}/GT/'.format(data_path)
    test_loader = test_dataset(image_root, gt_root, opt.testsize)

    cost = 0.0
    for i in range(test_loader.size):
        image, gt, name, _ = test_loader.load_data()
        print('> {} - {}'.format(_data_name, name))

        gt = np.asarray(gt, np.float32)
        gt /= (gt.max() + 1e-8)
        image = image.to(device)

        t0 = time.time()
        with torch.no_grad():
            res5, res4, res3, res2 = model(image)
        cost += time.time() - t0
        res = res2
        res = F.upsample(res, size=gt.shape, mode='bilinear', align_corners=False)
        res = res.sigmoid().data.cpu().numpy().squeeze()
        res = (res - res.min()) / (res.max() - res.min() + 1e-8)
        cv2.imwrite(save_path+name, res*255)

    print('[{}] {} images, {:.1f} FPS (forward only)'.format(_data_name, test_loader.size, test_loader.size / max(cost, 1e-6)))
    if opt.eval:
        print('[{}] {}'.format(_data_name, evaluate(save_path, gt_root)))
