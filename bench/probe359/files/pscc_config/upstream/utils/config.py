import argparse


def get_pscc_args():
    parser = argparse.ArgumentParser(description='PSCC-Net: progressive spatio-channel correlation network')

    parser.add_argument('--gpu_ids', type=int, nargs='+', default=[0],
                        help='ids of the GPUs to train on, e.g. --gpu_ids 0 1')
    parser.add_argument('--num_epochs', type=int, default=25)
    parser.add_argument('--lr_strategy', type=list, default=[2e-4, 1e-4, 5e-5, 2.5e-5, 1.25e-5],
                        help='learning rate strategy')
    parser.add_argument('--learning_rate', type=float, default=1e-4)

    parser.add_argument('--crop_size', type=list, default=[256, 256], help='crop size of the training images')
    parser.add_argument('--val_num', type=int, default=200, help='number of the validation images')
    parser.add_argument('--train_bs', type=int, default=10, help='batch size of the training')
    parser.add_argument('--test_bs', type=int, default=1, help='batch size of the testing')

    parser.add_argument('--save_tag', type=bool, default=True, help='whether to save the prediction masks')
    parser.add_argument('--train_ratio', nargs='+', default="0.25 0.25 0.25 0.25",
                        help='splice, copy-move, removal, authentic')

    parser.add_argument('--path_authentic', type=str, default='./dataset/authentic')
    parser.add_argument('--path_splice', type=str, default='./dataset/splice')
    parser.add_argument('--path_copymove', type=str, default='./dataset/copymove')
    parser.add_argument('--path_removal', type=str, default='./dataset/removal')
    parser.add_argument('--path_val', type=str, default='./dataset/val')
    parser.add_argument('--path_test', type=str, default='./sample')

    parser.add_argument('--print_freq', type=int, default=100)
    parser.add_argument('--val_freq', type=int, default=1)
    parser.add_argument('--save_freq', type=int, default=1)

    args = parser.parse_args()

    args = vars(args)
    args['train_ratio'] = [float(x) for x in str(args['train_ratio']).split()]

    return args
