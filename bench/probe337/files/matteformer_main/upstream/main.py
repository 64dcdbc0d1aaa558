import os
import cv2
import toml
import random
import argparse
import numpy as np
from pprint import pprint

import torch
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader

import utils
from utils import CONFIG
from trainer import Trainer
from dataloader.image_file import ImageFileTrain, ImageFileTest
from dataloader.data_generator import DataGenerator
from dataloader.prefetcher import Prefetcher


def init_seeds(seed=0, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        # slower, but makes runs bit-for-bit comparable when debugging losses
        cudnn.deterministic = True
        cudnn.benchmark = False


def test(checkpoint, output_dir):
    """Quick evaluation of a checkpoint on the Composition-1k test split (writes alpha pngs)."""
    import networks
    from dataloader.image_file import ImageFileTest
    from dataloader.data_generator import DataGenerator

    model = networks.get_generator(is_train=False)
    model.cuda()
    ckpt = torch.load(checkpoint)
    model.load_state_dict(utils.remove_prefix_state_dict(ckpt['state_dict']), strict=True)
    model.eval()

    test_image_file = ImageFileTest(alpha_dir=CONFIG.data.test_alpha,
                                    merged_dir=CONFIG.data.test_merged,
                                    trimap_dir=CONFIG.data.test_trimap)
    test_dataset = DataGenerator(test_image_file, phase='test')
    test_dataloader = DataLoader(test_dataset, batch_size=1, shuffle=False,
                                 num_workers=CONFIG.data.workers, drop_last=False)

    os.makedirs(output_dir, exist_ok=True)
    mse_sum, sad_sum, count = 0., 0., 0
    with torch.no_grad():
        for image_dict in test_dataloader:
            image, trimap = image_dict['image'].cuda(), image_dict['trimap'].cuda()
            alpha = image_dict['alpha'].cuda()
            h, w = image_dict['alpha_shape']
            pred = model(image, trimap)
            alpha_pred_os1, alpha_pred_os4, alpha_pred_os8 = pred['alpha_os1'], pred['alpha_os4'], pred['alpha_os8']

            # progressive refinement, same as in Trainer.test
            alpha_pred = alpha_pred_os8.clone().detach()
            weight_os4 = utils.get_unknown_tensor_from_pred(alpha_pred, rand_width=CONFIG.model.self_refine_width1, train_mode=False)
            alpha_pred[weight_os4 > 0] = alpha_pred_os4[weight_os4 > 0]
            weight_os1 = utils.get_unknown_tensor_from_pred(alpha_pred, rand_width=CONFIG.model.self_refine_width2, train_mode=False)
            alpha_pred[weight_os1 > 0] = alpha_pred_os1[weight_os1 > 0]

            alpha_pred = alpha_pred[..., :h, :w]
            trimap = trimap[..., :h, :w]
            weight = utils.get_unknown_tensor(trimap)
            alpha_pred[trimap[:, 0:1] == 1] = 0  # background
            alpha_pred[trimap[:, 2:3] == 1] = 1  # foreground

            mse_sum += (((alpha_pred - alpha) ** 2) * weight).sum().item() / (weight.sum().item() + 1e-8)
            sad_sum += (torch.abs(alpha_pred - alpha) * weight).sum().item() / 1000
            count += 1

            out = (alpha_pred[0, 0].cpu().numpy() * 255).astype(np.uint8)
            cv2.imwrite(os.path.join(output_dir, image_dict['image_name'][0]), out)

    print('MSE: {:.5f}  SAD: {:.2f}  ({} images)'.format(mse_sum / count, sad_sum / count, count))


def main():

    # Train or Test
    if CONFIG.phase.lower() == "train":
        # set distributed training
        if CONFIG.dist:
            CONFIG.gpu = CONFIG.local_rank
            torch.cuda.set_device(CONFIG.gpu)
            torch.distributed.init_process_group(backend='nccl', init_method='env://')
            CONFIG.world_size = torch.distributed.get_world_size()

        # Create directories if not exist.
        if CONFIG.local_rank == 0:
            utils.make_dir(CONFIG.log.logging_path)
            utils.make_dir(CONFIG.log.tensorboard_path)
            utils.make_dir(CONFIG.log.checkpoint_path)

        # Create a logger
        logger, tb_logger = utils.get_logger(CONFIG.log.logging_path,
                                             CONFIG.log.tensorboard_path,
                                             logging_level=CONFIG.log.logging_level)

        train_image_file = ImageFileTrain(alpha_dir=CONFIG.data.train_alpha,
                                          fg_dir=CONFIG.data.train_fg,
                                          bg_dir=CONFIG.data.train_bg)
        test_image_file = ImageFileTest(alpha_dir=CONFIG.data.test_alpha,
                                        merged_dir=CONFIG.data.test_merged,
                                        trimap_dir=CONFIG.data.test_trimap)

        train_dataset = DataGenerator(train_image_file, phase='train')
        test_dataset = DataGenerator(test_image_file, phase='val')

        if CONFIG.dist:
            train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
            test_sampler = torch.utils.data.distributed.DistributedSampler(test_dataset)
        else:
            train_sampler = None
            test_sampler = None

        train_dataloader = DataLoader(train_dataset,
                                      batch_size=CONFIG.model.batch_size,
                                      shuffle=(train_sampler is None),
                                      num_workers=CONFIG.data.workers,
                                      pin_memory=True,
                                      sampler=train_sampler,
                                      drop_last=True)
        train_dataloader = Prefetcher(train_dataloader)

        test_dataloader = DataLoader(test_dataset,
                                     batch_size=1,
                                     shuffle=False,
                                     num_workers=CONFIG.data.workers,
                                     sampler=test_sampler,
                                     drop_last=False)

        trainer = Trainer(train_dataloader=train_dataloader,
                          test_dataloader=test_dataloader,
                          logger=logger,
                          tb_logger=tb_logger)
        trainer.train()
    elif CONFIG.phase.lower() == "test":
        test(CONFIG.test.checkpoint, CONFIG.test.alpha_path)
    else:
        raise NotImplementedError("Unknown Phase: {}".format(CONFIG.phase))


if __name__ == '__main__':
    print('Torch Version: ', torch.__version__)
    print('CUDA available: ', torch.cuda.is_available())

    parser = argparse.ArgumentParser()
    parser.add_argument('--phase', type=str, default='train')
    parser.add_argument('--config', type=str, default='config/MatteFormer_Composition1k.toml')
    parser.add_argument('--local_rank', type=int, default=0)

    # Parse configuration
    args = parser.parse_args()
    with open(args.config) as f:
        utils.load_config(toml.load(f))

    # Check if toml config file is loaded
    if CONFIG.is_default:
        raise ValueError("No .toml config loaded.")

    CONFIG.phase = args.phase
    CONFIG.log.logging_path = os.path.join(CONFIG.log.logging_path, CONFIG.version)
    CONFIG.log.tensorboard_path = os.path.join(CONFIG.log.tensorboard_path, CONFIG.version)
    CONFIG.log.checkpoint_path = os.path.join(CONFIG.log.checkpoint_path, CONFIG.version)
    if args.local_rank == 0:
        print('CONFIG: ')
        pprint(CONFIG)
    CONFIG.local_rank = args.local_rank
    init_seeds(CONFIG.seed + args.local_rank if hasattr(CONFIG, 'seed') else args.local_rank)

    # Train
    main()
