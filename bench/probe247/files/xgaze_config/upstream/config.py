import argparse

arg_lists = []
parser = argparse.ArgumentParser(description='Gaze estimation baseline for ETH-XGaze')


def str2bool(v):
    return v.lower() in ('true', '1')


def add_argument_group(name):
    arg = parser.add_argument_group(name)
    arg_lists.append(arg)
    return arg


# data params
data_arg = add_argument_group('Data Params')
data_arg.add_argument('--batch_size', type=int, default=50,
                      help='# of images in each batch of data')
data_arg.add_argument('--num_workers', type=int, default=5,
                      help='# of subprocesses to use for data loading')
data_arg.add_argument('--shuffle', type=str2bool, default=True,
                      help='Whether to shuffle the train and valid indices')
data_arg.add_argument('--pin_memory', type=str2bool, default=True,
                      help='page-lock host buffers so host->GPU copies can be async')
data_arg.add_argument('--image_size', type=int, default=224,
                      help='input resolution of the normalized face patch')

# training params
train_arg = add_argument_group('Training Params')
train_arg.add_argument('--is_train', type=str2bool, default=False,
                       help='Whether to train or test the model')
train_arg.add_argument('--epochs', type=int, default=25,
                       help='# of epochs to train for')
train_arg.add_argument('--init_lr', type=float, default=0.0001,
                       help='Initial learning rate value')
train_arg.add_argument('--lr_patience', type=int, default=10,
                       help='Number of epochs to wait before reducing lr')
train_arg.add_argument('--lr_decay_factor', type=float, default=0.1,
                       help='Factor to reduce lr by')
train_arg.add_argument('--weight_decay', type=float, default=0.0,
                       help='L2 weight decay')
train_arg.add_argument('--print_freq', type=int, default=100,
                       help='print every n iterations')

# other params
misc_arg = add_argument_group('Misc.')
misc_arg.add_argument('--use_gpu', type=str2bool, default=True,
                      help="Whether to run on the GPU")
misc_arg.add_argument('--multi_gpu', type=str2bool, default=False,
                      help='wrap the model in nn.DataParallel when more than one GPU is visible')
misc_arg.add_argument('--prefetch', type=str2bool, default=False,
                      help='overlap host->device copies with compute using a side CUDA stream')
misc_arg.add_argument('--pre_trained_model_path', type=str, default='./ckpt/epoch_24_ckpt.pth.tar',
                      help='load the pre-trained model')
misc_arg.add_argument('--print_freq_test', type=int, default=10,
                      help='How frequently to print test details')
misc_arg.add_argument('--data_dir', type=str, default='./data/xgaze',
                      help='Directory in which data is stored')
misc_arg.add_argument('--ckpt_dir', type=str, default='./ckpt',
                      help='Directory in which to save model checkpoints')
misc_arg.add_argument('--logs_dir', type=str, default='./logs/',
                      help='Directory in which Tensorboard logs wil be stored')
misc_arg.add_argument('--use_tensorboard', type=str2bool, default=False,
                      help='Whether to use tensorboard for visualization')
misc_arg.add_argument('--resume', type=str2bool, default=False,
                      help='Whether to resume training from checkpoint')
misc_arg.add_argument('--random_seed', type=int, default=1,
                      help='Seed to ensure reproducibility')
misc_arg.add_argument('--deterministic', type=str2bool, default=False,
                      help='cudnn.deterministic / disable cudnn.benchmark (slower)')


def get_config():
    config, unparsed = parser.parse_known_args()
    return config, unparsed
