# -*- coding: utf-8 -*-
"""Reader: the user-facing entry point (detector + recognizer on one device)."""
import os
import sys
from logging import getLogger
from pathlib import Path

import numpy as np
import torch

from .detection import get_detector, get_textbox
from .recognition import get_recognizer, get_text
from .utils import (diff, download_and_unzip, get_image_list, get_paragraph,
                    group_text_box, make_rotated_img_list, reformat_input,
                    set_result_with_confidence)
from .config import (BASE_PATH, MODULE_PATH, detection_models,
                     imgH, latin_lang_list, recognition_models)

LOGGER = getLogger(__name__)


class Reader(object):

    def __init__(self, lang_list, gpu=True, model_storage_directory=None,
                 user_network_directory=None, detect_network="craft",
                 recog_network='standard', download_enabled=True,
                 detector=True, recognizer=True, verbose=True,
                 quantize=True, cudnn_benchmark=False):
        """Create an EasyOCR Reader

        Parameters:
            lang_list (list): Language codes (ISO 639) for languages to be recognized during analysis.

            gpu (bool): Enable GPU support (default). Pass a string such as
                'cuda:1' to pick a specific card, or False to stay on CPU.

            model_storage_directory (string): Path to directory for model data. If not specified,
            models will be read from a directory as defined by the environment variable
            EASYOCR_MODULE_PATH (preferred), MODULE_PATH (if defined), or ~/.EasyOCR/.

            cudnn_benchmark (bool): let cuDNN autotune convolutions for fixed image sizes.
        """
        self.verbose = verbose
        self.download_enabled = download_enabled

        self.model_storage_directory = MODULE_PATH + '/model'
        if model_storage_directory:
            self.model_storage_directory = model_storage_directory
        Path(self.model_storage_directory).mkdir(parents=True, exist_ok=True)

        self.user_network_directory = MODULE_PATH + '/user_network'
        if user_network_directory:
            self.user_network_directory = user_network_directory
        Path(self.user_network_directory).mkdir(parents=True, exist_ok=True)
        sys.path.append(self.user_network_directory)

        if gpu is False:
            self.device = 'cpu'
            if verbose:
                LOGGER.warning('Using CPU. Note: This module is much faster with a GPU.')
        elif gpu is True:
            if torch.cuda.is_available():
                self.device = 'cuda'
            elif torch.backends.mps.is_available():
                self.device = 'mps'
            else:
                self.device = 'cpu'
                if verbose:
                    LOGGER.warning('Neither CUDA nor MPS are available - defaulting to CPU. '
                                   'Note: This module is much faster with a GPU.')
        else:
            self.device = gpu

        self.detection_models = detection_models
        self.recognition_models = recognition_models

        # check and download detection model
        self.support_detection_network = ['craft', 'dbnet18']
        self.quantize = quantize
        self.cudnn_benchmark = cudnn_benchmark
        if detector:
            detector_path = self.getDetectorPath(detect_network)

        # recognition model
        separator_list = {}
        if recog_network in ['standard'] + [model for model in recognition_models['gen1']] \
                + [model for model in recognition_models['gen2']]:
            if recog_network in [model for model in recognition_models['gen1']]:
                model = recognition_models['gen1'][recog_network]
                recog_network = 'generation1'
                self.model_lang = model['model_script']
            elif recog_network in [model for model in recognition_models['gen2']]:
                model = recognition_models['gen2'][recog_network]
                recog_network = 'generation2'
                self.model_lang = model['model_script']
            else:
                model = recognition_models['gen2']['latin_g2']
                recog_network = 'generation2'
                self.model_lang = 'latin'
            self.character = model['characters']
            model_file = model['filename']
        else:
            raise ValueError(f'unknown recog_network {recog_network}')

        self.lang_char = []
        for lang in lang_list:
            char_file = os.path.join(BASE_PATH, 'character', lang + "_char.txt")
            with open(char_file, "r", encoding="utf-8-sig") as input_file:
                char_list = input_file.read().splitlines()
            self.lang_char += char_list
        self.lang_char = set(self.lang_char).union(set('0123456789'))
        self.lang_char = ''.join(self.lang_char)
        self.lang_list = lang_list
        model_path = os.path.join(self.model_storage_directory, model_file)

        if detector:
            self.detector = self.initDetector(detector_path)
        if recognizer:
            network_params = {'input_channel': 1, 'output_channel': 256, 'hidden_size': 256}
            self.recognizer, self.converter = get_recognizer(
                recog_network, network_params, self.character, separator_list, {},
                model_path, device=self.device, quantize=quantize)

    def getDetectorPath(self, detect_network):
        if detect_network not in self.support_detection_network:
            raise RuntimeError("Unsupport detector network. Support networks are {}.".format(
                ', '.join(self.support_detection_network)))
        self.detect_network = detect_network
        model_file = self.detection_models[detect_network]['filename']
        detector_path = os.path.join(self.model_storage_directory, model_file)
        if not os.path.isfile(detector_path) and self.download_enabled:
            LOGGER.warning('Downloading detection model, please wait.')
            download_and_unzip(self.detection_models[detect_network]['url'], model_file,
                               self.model_storage_directory, self.verbose)
        return detector_path

    def initDetector(self, detector_path):
        return get_detector(detector_path, device=self.device, quantize=self.quantize,
                            cudnn_benchmark=self.cudnn_benchmark)

    def detect(self, img, min_size=20, text_threshold=0.7, low_text=0.4,
               link_threshold=0.4, canvas_size=2560, mag_ratio=1.,
               slope_ths=0.1, ycenter_ths=0.5, height_ths=0.5,
               width_ths=0.5, add_margin=0.1, optimal_num_chars=None):
        text_box_list = get_textbox(self.detector, img, canvas_size=canvas_size,
                                    mag_ratio=mag_ratio, text_threshold=text_threshold,
                                    link_threshold=link_threshold, low_text=low_text,
                                    poly=False, device=self.device,
                                    optimal_num_chars=optimal_num_chars)
        horizontal_list_agg, free_list_agg = [], []
        for text_box in text_box_list:
            horizontal_list, free_list = group_text_box(
                text_box, slope_ths, ycenter_ths, height_ths, width_ths, add_margin,
                (optimal_num_chars is None))
            if min_size:
                horizontal_list = [i for i in horizontal_list
                                   if max(i[1] - i[0], i[3] - i[2]) > min_size]
                free_list = [i for i in free_list
                             if max(diff([c[0] for c in i]), diff([c[1] for c in i])) > min_size]
            horizontal_list_agg.append(horizontal_list)
            free_list_agg.append(free_list)
        return horizontal_list_agg, free_list_agg

    def readtext(self, image, decoder='greedy', beamWidth=5, batch_size=1,
                 workers=0, detail=1, paragraph=False, min_size=20):
        img, img_cv_grey = reformat_input(image)
        horizontal_list, free_list = self.detect(img, min_size=min_size)
        horizontal_list, free_list = horizontal_list[0], free_list[0]
        image_list, max_width = get_image_list(horizontal_list, free_list, img_cv_grey,
                                               model_height=imgH)
        result = get_text(self.character, imgH, int(max_width), self.recognizer,
                          self.converter, image_list, '', decoder, beamWidth,
                          batch_size, 0.1, 0.5, 0.003, 1, workers, self.device)
        if paragraph:
            result = get_paragraph(result, mode='ltr')
        if detail == 0:
            return [item[1] for item in result]
        return result
