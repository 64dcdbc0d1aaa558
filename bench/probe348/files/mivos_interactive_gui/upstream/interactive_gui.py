"""
Based on https://github.com/seoungwugoh/ivs-demo

The entry point for the user interface
It is terribly long... GUI code is hard to write!
"""

import sys
import os
from os import path
import functools
from argparse import ArgumentParser

import numpy as np
import torch
from collections import deque

from PyQt5.QtWidgets import (QWidget, QApplication, QComboBox,
    QHBoxLayout, QLabel, QPushButton, QTextEdit,
    QPlainTextEdit, QVBoxLayout, QSizePolicy, QButtonGroup, QSlider,
    QShortcut, QRadioButton, QProgressBar, QFileDialog)

from PyQt5.QtGui import QPixmap, QKeySequence, QImage, QTextCursor
from PyQt5.QtCore import Qt, QTimer
from PyQt5 import QtCore

from inference_core import InferenceCore
from interact_controller import S2MController, FBRSController
from model.propagation.prop_net import PropagationNetwork
from model.fusion_net import FusionNet
from model.s2m.s2m_network import deeplabv3plus_resnet50 as S2M
from util.tensor_util import unpad_3dim
from util.palette import pal_color_map

from interact.interactive_utils import *
from interact.interaction import *
from interact.timer import Timer

torch.set_grad_enabled(False)

# DAVIS palette
palette = pal_color_map()


class App(QWidget):
    def __init__(self, prop_net, fuse_net, s2m_ctrl:S2MController, fbrs_ctrl:FBRSController,
                    images, masks, num_objects, mem_freq, mem_profile):
        super().__init__()

        self.images = images
        self.masks = masks
        self.num_objects = num_objects
        self.s2m_controller = s2m_ctrl
        self.fbrs_controller = fbrs_ctrl
        self.processor = InferenceCore(prop_net, fuse_net, images_to_torch(images, device='cpu'),
                                        num_objects, mem_freq=mem_freq, mem_profile=mem_profile)

        self.num_frames, self.height, self.width = self.images.shape[:3]

        # set window
        self.setWindowTitle('MiVOS')
        self.setGeometry(100, 100, self.width, self.height+100)

        # some buttons
        self.play_button = QPushButton('Play')
        self.play_button.clicked.connect(self.on_play)
        self.run_button = QPushButton('Propagate')
        self.run_button.clicked.connect(self.on_run)
        self.commit_button = QPushButton('Commit')
        self.commit_button.clicked.connect(self.on_commit)

        self.undo_button = QPushButton('Undo')
        self.undo_button.clicked.connect(self.on_undo)
        self.reset_button = QPushButton('Reset Frame')
        self.reset_button.clicked.connect(self.on_reset)
        self.save_button = QPushButton('Save')
        self.save_button.clicked.connect(self.save)

        # LCD
        self.lcd = QTextEdit()
        self.lcd.setReadOnly(True)
        self.lcd.setMaximumHeight(28)
        self.lcd.setMaximumWidth(120)
        self.lcd.setText('{: 4d} / {: 4d}'.format(0, self.num_frames-1))

        # timeline slider
        self.tl_slider = QSlider(Qt.Horizontal)
        self.tl_slider.valueChanged.connect(self.tl_slide)
        self.tl_slider.setMinimum(0)
        self.tl_slider.setMaximum(self.num_frames-1)
        self.tl_slider.setValue(0)
        self.tl_slider.setTickPosition(QSlider.TicksBelow)
        self.tl_slider.setTickInterval(1)

        # GPU memory indicator, refreshed every second
        self.gpu_mem_gauge = QLabel()
        self.gpu_mem_gauge.setText('GPU mem.: N/A')
        self.gpu_mem_timer = QTimer()
        self.gpu_mem_timer.setSingleShot(False)
        self.gpu_mem_timer.timeout.connect(self.on_gpu_timer)
        self.gpu_mem_timer.setInterval(1000)
        self.gpu_mem_timer.start()

        # progress bar for propagation
        self.progress = QProgressBar()
        self.progress.setMinimum(0)
        self.progress.setMaximum(100)
        self.progress.setValue(0)
        self.progress.setFormat('Idle')

        # time spent by the user on interactions
        self.user_timer = Timer()

        # console on the GUI
        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setMinimumHeight(100)
        self.console.setMaximumHeight(100)

        # current frame info
        self.cursur = 0
        self.on_showing = None
        self.interacted_mask = None
        self.interaction = None
        self.this_frame_interactions = []
        self.undo_stack = deque(maxlen=10)
        self.curr_interaction = 'Click'
        self.current_object = 1
        self.waiting_to_start = True

        self.console_push_text('Initialized.')

    def console_push_text(self, text):
        text = '[A: %s, U: %s]: %s' % (self.processor.interacted_count, self.processor.update_count, text)
        self.console.appendPlainText(text)
        self.console.moveCursor(QTextCursor.End)
        print(text)

    def on_gpu_timer(self):
        # works on a single-GPU box: device 0 is the one the models were put on
        if torch.cuda.is_available():
            free, total = torch.cuda.mem_get_info()
            used = (total - free) / (2**30)
            self.gpu_mem_gauge.setText('GPU mem.: %.2f / %.2f G' % (used, total / (2**30)))

    def on_run(self):
        self.user_timer.pause()
        if self.interacted_mask is None:
            self.console_push_text('Cannot propagate! No interacted mask!')
            return

        self.console_push_text('Propagation started.')
        # self.interacted_mask = torch.softmax(self.interacted_mask*1000, dim=0)
        self.current_mask = self.processor.interact(self.interacted_mask, self.cursur,
                            self.progress_step_cb, self.progress_total_cb)
        self.interacted_mask = None
        # clear scribble and reset
        self.show_current_frame()
        self.reset_this_interaction()
        self.progress.setFormat('Idle')
        self.progress.setValue(0)
        self.console_push_text('Propagation finished!')
        self.user_timer.start()

    def on_commit(self):
        self.complete_interaction()
        self.update_interacted_mask()

    def on_reset(self):
        # DO not edit prob -- we still need the mask diff
        self.processor.masks[self.cursur].zero_()
        self.processor.np_masks[self.cursur].fill(0)
        self.current_mask.fill(0)
        self.reset_this_interaction()
        self.show_current_frame()

    def on_clear_memory(self):
        self.processor.clear_mem()
        torch.cuda.empty_cache()
        self.console_push_text('Cleared the propagation memory.')

    def update_interacted_mask(self):
        self.processor.update_mask_only(self.interacted_mask, self.cursur)
        self.current_mask = self.processor.np_masks[self.cursur]
        self.interacted_mask = None
        self.show_current_frame()

    def click_to_mask(self, this_image, vis_map, vis_alpha, pos, neg):
        # click interaction through f-BRS; the image is sent to the same GPU as the models
        this_image = this_image.cuda()
        self.interacted_mask = self.fbrs_controller.interact(this_image, pos, neg)
        return self.interacted_mask


if __name__ == '__main__':

    # Arguments parsing
    parser = ArgumentParser()
    parser.add_argument('--prop_model', default='saves/propagation_model.pth')
    parser.add_argument('--fusion_model', default='saves/fusion.pth')
    parser.add_argument('--s2m_model', default='saves/s2m.pth')
    parser.add_argument('--fbrs_model', default='saves/fbrs.pth')
    parser.add_argument('--images', help='Folders containing input images. Either this or --video needs to be specified.')
    parser.add_argument('--video', help='Video file readable by OpenCV. Either this or --images needs to be specified.', default='example/example.mp4')
    parser.add_argument('--num_objects', help='Default: 1 if no masks provided, masks.max() otherwise', type=int)
    parser.add_argument('--mem_freq', default=5, type=int)
    parser.add_argument('--mem_profile', default=0, type=int, help='0 - Faster and more memory intensive; 2 - Slower and less memory intensive. Default: 0.')
    parser.add_argument('--masks', help='Optional, Ground truth masks', default=None)
    parser.add_argument('--no_amp', help='Turn off AMP', action='store_true')
    parser.add_argument('--resolution', help='Pass -1 to use original size', default=480, type=int)
    args = parser.parse_args()

    with torch.cuda.amp.autocast(enabled=not args.no_amp):

        # Load our checkpoint
        prop_saved = torch.load(args.prop_model)
        prop_model = PropagationNetwork().cuda().eval()
        prop_model.load_state_dict(prop_saved)

        fusion_saved = torch.load(args.fusion_model)
        fusion_model = FusionNet().cuda().eval()
        fusion_model.load_state_dict(fusion_saved)

        # Loads the S2M model
        if args.s2m_model is not None:
            s2m_saved = torch.load(args.s2m_model)
            s2m_model = S2M().cuda().eval()
            s2m_model.load_state_dict(s2m_saved)
        else:
            s2m_model = None

        # Loads the images/masks
        if args.images is not None:
            images = load_images(args.images, args.resolution if args.resolution > 0 else None)
        elif args.video is not None:
            images = load_video(args.video, args.resolution if args.resolution > 0 else None)
        else:
            raise NotImplementedError('You must specify either --images or --video!')

        if args.masks is not None:
            masks = load_masks(args.masks)
        else:
            masks = None

        # Determine the number of objects
        num_objects = args.num_objects
        if num_objects is None:
            if masks is not None:
                num_objects = masks.max()
            else:
                num_objects = 1

        s2m_controller = S2MController(s2m_model, num_objects, ignore_class=255)
        if args.fbrs_model is not None:
            fbrs_controller = FBRSController(args.fbrs_model)
        else:
            fbrs_controller = None

        app = QApplication(sys.argv)
        ex = App(prop_model, fusion_model, s2m_controller, fbrs_controller,
                    images, masks, num_objects, args.mem_freq, args.mem_profile)
        sys.exit(app.exec_())
