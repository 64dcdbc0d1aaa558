import os
import argparse
import random
import json
import numpy as np
import torch

from models import TReS, Net


def Configs():
    parser = argparse.ArgumentParser()
    parser.add_argument('--datapath', dest='datapath', type=str, default='./dataset/LIVEC/',
                        help='path to dataset')
    parser.add_argument('--dataset', dest='dataset', type=str, default='clive',
                        help='Support datasets: clive|koniq|fblive|live|csiq|tid2013|kadid')
    parser.add_argument('--svpath', dest='svpath', type=str, default='./save_models/',
                        help='the path to save the info')
    parser.add_argument('--lr', dest='lr', type=float, default=2e-5, help='Learning rate')
    parser.add_argument('--weight_decay', dest='weight_decay', type=float, default=5e-4, help='Weight decay')
    parser.add_argument('--lrratio', dest='lrratio', type=int, default=10, help='Learning rate ratio')
    parser.add_argument('--batch_size', dest='batch_size', type=int, default=53, help='Batch size')
    parser.add_argument('--epochs', dest='epochs', type=int, default=3, help='Epochs for training')
    parser.add_argument('--seed', dest='seed', type=int, default=2021, help='for reproducing the results')
    parser.add_argument('--vesion', dest='vesion', type=int, default=1, help='vesion number for saving')
    parser.add_argument('--patch_size', dest='patch_size', type=int, default=224,
                        help='Crop size for training & testing image patches')
    parser.add_argument('--droplr', dest='droplr', type=int, default=5, help='drop lr by every x iteration')
    parser.add_argument('--gpunum', dest='gpunum', type=str, default='0', help='the id for the gpu that will be used')
    parser.add_argument('--network', dest='network', type=str, default='resnet50',
                        help='the resnet backbone to use')
    parser.add_argument('--nheadt', dest='nheadt', type=int, default=16, help='nheadt in the transformer')
    parser.add_argument('--num_encoder_layerst', dest='num_encoder_layerst', type=int, default=2,
                        help='num encoder layers in the transformer')
    parser.add_argument('--dim_feedforwardt', dest='dim_feedforwardt', type=int, default=64,
                        help='dim feedforward in the transformer')
    parser.add_argument('--single_channel', dest='single_channel', action='store_true')
    parser.add_argument('--train_patch_num', dest='train_patch_num', type=int, default=50,
                        help='Number of sample patches from training image')
    parser.add_argument('--test_patch_num', dest='test_patch_num', type=int, default=50,
                        help='Number of sample patches from testing image')
    return parser.parse_args()


if __name__ == '__main__':
    config = Configs()
    os.environ["CUDA_VISIBLE_DEVICES"] = config.gpunum
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(device)
    if torch.cuda.is_available():
        print('visible GPUs: {} ({})'.format(torch.cuda.device_count(), torch.cuda.get_device_name(0)))

    folder_path = {
        'live': config.datapath,
        'csiq': config.datapath,
        'tid2013': config.datapath,
        'kadid': config.datapath,
        'clive': config.datapath,
        'koniq': config.datapath,
        'fblive': config.datapath,
    }

    img_num = {
        'live': list(range(0, 29)),
        'csiq': list(range(0, 30)),
        'kadid': list(range(0, 80)),
        'tid2013': list(range(0, 25)),
        'clive': list(range(0, 1162)),
        'koniq': list(range(0, 10073)),
        'fblive': list(range(0, 39810)),
    }

    print('Training and Testing on {} dataset...'.format(config.dataset))

    SavePath = config.svpath
    svPath = SavePath + config.dataset + '_' + str(config.vesion) + '_' + str(config.seed) + '/' + 'sv'
    os.makedirs(svPath, exist_ok=True)

    # fix the seed if needed for reproducibility
    if config.seed == 0:
        pass
    else:
        print('we are using the seed = {}'.format(config.seed))
        torch.manual_seed(config.seed)
        torch.cuda.manual_seed(config.seed)
        np.random.seed(config.seed)
        random.seed(config.seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    total_num_images = img_num[config.dataset]

    # Randomly select 80% images for training and the rest for testing
    random.shuffle(total_num_images)
    train_index = total_num_images[0:int(round(0.8 * len(total_num_images)))]
    test_index = total_num_images[int(round(0.8 * len(total_num_images))):len(total_num_images)]

    imgsTrainPath = svPath + '/' + 'train_index_' + str(config.vesion) + '_' + str(config.seed) + '.json'
    imgsTestPath = svPath + '/' + 'test_index_' + str(config.vesion) + '_' + str(config.seed) + '.json'

    with open(imgsTrainPath, 'w') as json_file2:
        json.dump(train_index, json_file2)

    with open(imgsTestPath, 'w') as json_file2:
        json.dump(test_index, json_file2)

    solver = TReS(config, device, svPath, folder_path[config.dataset], train_index, test_index, Net)
    srcc_computed, plcc_computed = solver.train(config.seed, svPath)
