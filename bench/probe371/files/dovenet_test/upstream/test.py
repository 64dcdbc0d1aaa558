"""General-purpose test script for image harmonization.

Once you have trained your model with train.py, you can use this script to test the model.
It will load a saved model from '--checkpoints_dir' and save the results to '--results_dir'.

It first creates model and dataset given the option. It will hard-code some parameters.
It then runs inference for '--num_test' images and save results to an HTML file.

Example (You need to train models first or download pre-trained models from our website):
    python test.py --dataset_root ./datasets/HAdobe5k --name experiment_name --model dovenet --dataset_mode iharmony4 --is_train 0 --norm instance --gpu_ids 0

See options/base_options.py and options/test_options.py for more test options.
"""
import os
import numpy as np
from options.test_options import TestOptions
from data import create_dataset
from models import create_model
from util.visualizer import save_images
from util import html, util
from skimage.metrics import mean_squared_error, peak_signal_noise_ratio


if __name__ == '__main__':
    opt = TestOptions().parse()  # get test options
    # hard-code some parameters for test
    opt.num_threads = 0   # test code only supports num_threads = 1
    opt.batch_size = 1    # test code only supports batch_size = 1
    opt.serial_batches = True  # disable data shuffling; comment this line if results on randomly chosen images are needed.
    opt.no_flip = True    # no flip; comment this line if results on flipped images are needed.
    opt.display_id = -1   # no visdom display; the test code saves the results to a HTML file.
    dataset = create_dataset(opt)  # create a dataset given opt.dataset_mode and other options
    model = create_model(opt)      # create a model given opt.model and other options
    model.setup(opt)               # regular setup: load and print networks; create schedulers
    # create a website
    web_dir = os.path.join(opt.results_dir, opt.name, '%s_%s' % (opt.phase, opt.epoch))  # define the website directory
    if opt.load_iter > 0:  # load_iter is 0 by default
        web_dir = '{:s}_iter{:d}'.format(web_dir, opt.load_iter)
    print('creating web directory', web_dir)
    webpage = html.HTML(web_dir, 'Experiment = %s, Phase = %s, Epoch = %s' % (opt.name, opt.phase, opt.epoch))
    if opt.eval:
        model.eval()

    mse_scores, psnr_scores, fmse_scores = [], [], []
    for i, data in enumerate(dataset):
        if i >= opt.num_test:  # only apply our model to opt.num_test images.
            break
        model.set_input(data)  # unpack data from data loader
        model.test()           # run inference
        visuals = model.get_current_visuals()  # get image results
        img_path = model.get_image_paths()     # get image paths

        harmonized = util.tensor2im(visuals['harmonized'])
        real = util.tensor2im(visuals['real'])
        mask = util.tensor2im(visuals['mask'])[..., 0] > 127
        mse = mean_squared_error(harmonized, real)
        psnr = peak_signal_noise_ratio(real, harmonized, data_range=255)
        fg_area = max(mask.sum(), 1)
        fmse = ((harmonized.astype(np.float64) - real.astype(np.float64)) ** 2)[mask].sum() / (fg_area * 3)
        mse_scores.append(mse)
        psnr_scores.append(psnr)
        fmse_scores.append(fmse)

        if i % 5 == 0:  # save images to an HTML file
            print('processing (%04d)-th image... %s' % (i, img_path))
        save_images(webpage, visuals, img_path, aspect_ratio=opt.aspect_ratio, width=opt.display_winsize)
    webpage.save()  # save the HTML

    print('MSE %0.2f | PSNR %0.2f | fMSE %0.2f' % (np.mean(mse_scores), np.mean(psnr_scores), np.mean(fmse_scores)))
