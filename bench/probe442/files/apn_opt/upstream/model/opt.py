import argparse
import os


def get_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset', default='CUB', help='CUB, SUN, AWA2')
    parser.add_argument('--root', default='./', help='path to project')
    parser.add_argument('--image_root', default='./data/', type=str, metavar='PATH',
                        help='path to image root')
    parser.add_argument('--matdataset', default=True, help='Data in matlab format')
    parser.add_argument('--image_embedding', default='res101')
    parser.add_argument('--class_embedding', default='att')
    parser.add_argument('--preprocessing', action='store_true', default=True,
                        help='enable MinMaxScaler on visual features')
    parser.add_argument('--standardization', action='store_true', default=False)
    parser.add_argument('--ol', action='store_true', default=False,
                        help='original learning, use unseen dataset when training classifier')
    parser.add_argument('--validation', action='store_true', default=False, help='enable cross validation mode')
    parser.add_argument('--workers', type=int, help='number of data loading workers', default=4)
    parser.add_argument('--batch_size', type=int, default=64, help='input batch size')
    parser.add_argument('--classifier_lr', type=float, default=1e-6, help='learning rate to train softmax classifier')
    parser.add_argument('--beta1', type=float, default=0.5, help='beta1 for adam. default=0.5')
    parser.add_argument('--cuda', action='store_true', default=True, help='enables cuda')
    parser.add_argument('--pretrain_classifier', default='', help="path to pretrain classifier (to continue training)")
    parser.add_argument('--manualSeed', type=int, help='manual seed')
    parser.add_argument('--resnet_path', default='./pretrained_models/resnet101_c.pth.tar',  # resnet101_cub.pth.tar resnet101-5d3b4d8f.pth
                        help="path to pretrain resnet classifier")
    parser.add_argument('--train_id', type=int, default=0)
    parser.add_argument('--pretrained', default=None, help="path to pretrain classifier (to continue training)")
    parser.add_argument('--image_type', default='test_unseen_loc', type=str, metavar='PATH',
                        help='image_type to visualize, usually test_unseen_small_loc, test_unseen_loc, test_seen_loc')
    parser.add_argument('--pretrain_epoch', type=int, default=5)
    parser.add_argument('--pretrain_lr', type=float, default=1e-4, help='learning rate to pretrain model')
    parser.add_argument('--all', action='store_true', default=False)
    parser.add_argument('--gzsl', action='store_true', default=False)
    parser.add_argument('--additional_loss', action='store_true', default=True)

    parser.add_argument('--xe', type=float, default=1)
    parser.add_argument('--attri', type=float, default=1e-4)
    parser.add_argument('--regular', type=float, default=5e-6)
    parser.add_argument('--l_xe', type=float, default=1)
    parser.add_argument('--l_attri', type=float, default=1e-2)
    parser.add_argument('--l_regular', type=float, default=4e-2)
    parser.add_argument('--cpt', type=float, default=1e-9)
    parser.add_argument('--calibrated_stacking', type=float, default=False,
                        help='calibrated_stacking, shrinking the output score of seen classes')

    parser.add_argument('--avg_pool', action='store_true', default=False)
    parser.add_argument('--only_evaluate', action='store_true', default=False)
    parser.add_argument('--resume', default=False)

    parser.add_argument('--IoU_scale', type=int, default=4)
    parser.add_argument('--IoU_thr', type=float, default=0.5)
    parser.add_argument('--resize_WH', action='store_true', default=False)
    parser.add_argument('--out_of_edge', action='store_true', default=False)
    parser.add_argument('--max_area_center', action='store_true', default=False)
    parser.add_argument('--KNOW_BIRD_BB', action='store_true', default=False)

    parser.add_argument('--nepoch', type=int, default=30, help='number of epochs to train for')
    parser.add_argument('--gpu', default='0', type=str, help='index of GPU to use')
    parser.add_argument('--save_att', default=False, help='save visual results of attention maps')
    parser.add_argument('--sigma', type=float, default=0.5, help='')
    parser.add_argument('--prototype_shape', type=int, nargs='+', default=[312, 2048, 1, 1])

    opt = parser.parse_args()
    opt.dataroot = opt.root + 'data'
    opt.checkpointroot = opt.root + 'checkpoint'
    print('opt:', opt)
    os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu
    return opt
