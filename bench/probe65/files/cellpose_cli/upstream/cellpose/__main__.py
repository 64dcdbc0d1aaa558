"""
Copyright © 2023 Howard Hughes Medical Institute, Authored by Carsen Stringer and Marius Pachitariu.
"""
import os, time
import logging
import argparse

import numpy as np
from tqdm import tqdm

from cellpose import utils, models, io, train
from cellpose.io import logger_setup

try:
    from cellpose.gui import gui3d, gui
    GUI_ENABLED = True
except ImportError as err:
    GUI_ERROR = err
    GUI_ENABLED = False
    GUI_IMPORT = True
except Exception as err:
    GUI_ENABLED = False
    GUI_ERROR = err
    GUI_IMPORT = False
    raise


def get_arg_parser():
    parser = argparse.ArgumentParser(description="Cellpose Command Line Parameters")

    hardware_args = parser.add_argument_group("Hardware Arguments")
    hardware_args.add_argument("--use_gpu", action="store_true", help="use gpu if torch with cuda installed")
    hardware_args.add_argument("--gpu_device", required=False, default="0", type=str,
                               help="which gpu device to use, use an integer for torch, or mps for M1")
    hardware_args.add_argument("--check_mkl", action="store_true", help="check if mkl working")

    input_img_args = parser.add_argument_group("Input Image Arguments")
    input_img_args.add_argument("--dir", default=[], type=str, help="folder containing data to run or train on.")
    input_img_args.add_argument("--image_path", default=[], type=str,
                                help="if given and --dir not given, run on single image instead of folder")
    input_img_args.add_argument("--look_one_level_down", action="store_true",
                                help="run processing on all subdirectories of current folder")
    input_img_args.add_argument("--img_filter", default=[], type=str, help="end string for images to run on")
    input_img_args.add_argument("--channel_axis", default=None, type=int,
                                help="axis of image which corresponds to image channels")
    input_img_args.add_argument("--z_axis", default=None, type=int,
                                help="axis of image which corresponds to Z dimension")
    input_img_args.add_argument("--chan", default=0, type=int, help="channel to segment")
    input_img_args.add_argument("--chan2", default=0, type=int, help="nuclear channel (if cyto, optional)")
    input_img_args.add_argument("--invert", action="store_true", help="invert grayscale channel")
    input_img_args.add_argument("--all_channels", action="store_true",
                                help="use all channels in image if using own model and images with special channels")

    model_args = parser.add_argument_group("Model Arguments")
    model_args.add_argument("--pretrained_model", required=False, default="cyto3", type=str,
                            help="model to use for running or starting training")
    model_args.add_argument("--add_model", required=False, default=None, type=str,
                            help="model path to copy model to hidden .cellpose folder")

    algorithm_args = parser.add_argument_group("Algorithm Arguments")
    algorithm_args.add_argument("--no_resample", action="store_true")
    algorithm_args.add_argument("--no_norm", action="store_true", help="do not normalize images")
    algorithm_args.add_argument("--do_3D", action="store_true", help="process images as 3D stacks")
    algorithm_args.add_argument("--diameter", required=False, default=30., type=float)
    algorithm_args.add_argument("--stitch_threshold", required=False, default=0.0, type=float)
    algorithm_args.add_argument("--min_size", required=False, default=15, type=int)
    algorithm_args.add_argument("--flow_threshold", default=0.4, type=float)
    algorithm_args.add_argument("--cellprob_threshold", default=0, type=float)
    algorithm_args.add_argument("--niter", default=0, type=int)
    algorithm_args.add_argument("--anisotropy", required=False, default=1.0, type=float)
    algorithm_args.add_argument("--batch_size", default=8, type=int, help="inference batch size. Default: %(default)s")

    output_args = parser.add_argument_group("Output Arguments")
    output_args.add_argument("--save_png", action="store_true")
    output_args.add_argument("--save_tif", action="store_true")
    output_args.add_argument("--no_npy", action="store_true")
    output_args.add_argument("--savedir", default=None, type=str)
    output_args.add_argument("--verbose", action="store_true")

    training_args = parser.add_argument_group("Training Arguments")
    training_args.add_argument("--train", action="store_true", help="train network using images in dir")
    training_args.add_argument("--test_dir", default=[], type=str)
    training_args.add_argument("--mask_filter", default="_masks", type=str)
    training_args.add_argument("--learning_rate", default=0.005, type=float)
    training_args.add_argument("--weight_decay", default=0.00001, type=float)
    training_args.add_argument("--n_epochs", default=500, type=int)
    training_args.add_argument("--train_batch_size", default=8, type=int)
    training_args.add_argument("--model_name_out", default=None, type=str)
    return parser


def main():
    args = get_arg_parser().parse_args()

    if args.check_mkl:
        mkl_enabled = models.check_mkl()
    else:
        mkl_enabled = True

    if len(args.dir) == 0 and len(args.image_path) == 0:
        if args.add_model:
            io.add_model(args.add_model)
        else:
            if not GUI_ENABLED:
                print("GUI ERROR: %s" % GUI_ERROR)
                if GUI_IMPORT:
                    print("GUI FAILED: GUI dependencies may not be installed, to install, run")
                    print("     pip install 'cellpose[gui]'")
            else:
                if args.do_3D:
                    gui3d.run()
                else:
                    gui.run()
        return

    if args.verbose:
        logger, log_file = logger_setup()
    else:
        print(">>>> !LOGGING OFF BY DEFAULT! To see cellpose progress, set --verbose")
        print("No --verbose => no progress or info printed")
        logger = logging.getLogger(__name__)

    use_gpu = False
    channels = [args.chan, args.chan2]

    # find images
    if len(args.img_filter) > 0:
        imf = args.img_filter
    else:
        imf = None

    # Check with user if they REALLY mean to run without saving anything
    if not args.train:
        saving_something = args.save_png or args.save_tif or not args.no_npy
    device = None
    if args.use_gpu:
        import torch
        if args.gpu_device == "mps":
            device = torch.device("mps")
        else:
            device = torch.device(f"cuda:{int(args.gpu_device)}")
        use_gpu = True

    tic = time.time()
    if len(args.dir) > 0:
        image_names = io.get_image_files(args.dir, args.mask_filter, imf=imf,
                                         look_one_level_down=args.look_one_level_down)
    else:
        if os.path.exists(args.image_path):
            image_names = [args.image_path]
        else:
            raise ValueError(f"ERROR: no file found at {args.image_path}")
    nimg = len(image_names)

    if not args.train:
        model = models.CellposeModel(gpu=use_gpu, device=device,
                                     pretrained_model=args.pretrained_model)
        diameter = args.diameter
        logger.info(">>>> using diameter %0.3f for all images" % diameter)
        tqdm_out = utils.TqdmToLogger(logger, level=logging.INFO)
        for image_name in tqdm(image_names, file=tqdm_out):
            image = io.imread(image_name)
            out = model.eval(image, channels=channels, diameter=diameter,
                             do_3D=args.do_3D, niter=args.niter,
                             batch_size=args.batch_size, normalize=(not args.no_norm),
                             flow_threshold=args.flow_threshold,
                             cellprob_threshold=args.cellprob_threshold,
                             stitch_threshold=args.stitch_threshold,
                             min_size=args.min_size, invert=args.invert,
                             anisotropy=args.anisotropy)
            masks, flows = out[:2]
            if not args.no_npy:
                io.masks_flows_to_seg(image, masks, flows, image_name,
                                      channels=channels, diams=diameter)
            if saving_something:
                io.save_masks(image, masks, flows, image_name, png=args.save_png,
                              tif=args.save_tif, savedir=args.savedir)
        logger.info(">>>> completed in %0.3f sec" % (time.time() - tic))
    else:
        output = io.load_train_test_data(args.dir, args.test_dir, imf, args.mask_filter,
                                         args.look_one_level_down)
        images, labels, image_names, test_images, test_labels, image_names_test = output
        model = models.CellposeModel(device=device, gpu=use_gpu,
                                     pretrained_model=args.pretrained_model)
        model_path, train_losses, test_losses = train.train_seg(
            model.net, train_data=images, train_labels=labels,
            test_data=test_images, test_labels=test_labels,
            channels=channels, normalize=(not args.no_norm),
            learning_rate=args.learning_rate, weight_decay=args.weight_decay,
            n_epochs=args.n_epochs, batch_size=args.train_batch_size,
            model_name=args.model_name_out)
        print(">>>> model trained and saved to %s" % model_path)


if __name__ == "__main__":
    main()
