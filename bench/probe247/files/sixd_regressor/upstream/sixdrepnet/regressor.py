import math
import os

import numpy as np
import torch
from torch.hub import load_state_dict_from_url
from torchvision import transforms
from PIL import Image

from .model import SixDRepNet
from . import utils


WEIGHTS_URL = "https://cloud.ovgu.de/s/Q67RnLDy6JKLRWm/download/6DRepNet_300W_LP_AFLW2000.pth"


class SixDRepNet_Detector():

    def __init__(self, gpu_id: int = 0, dict_path: str = ''):
        """
        Constructs the SixDRepNet instance with all necessary attributes.

        Parameters
        ----------
            gpu:id : int
                gpu identifier, for selecting cpu set -1
            dict_path : str
                Path for local weight file. Leaving it empty will automatically download a finetuned weight file.
        """

        self.gpu = gpu_id
        if gpu_id < 0:
            self.device = torch.device('cpu')
        else:
            self.device = torch.device('cuda:%d' % gpu_id)

        self.model = SixDRepNet(backbone_name='RepVGG-B1g2',
                                backbone_file='',
                                deploy=True,
                                pretrained=False)
        # Load snapshot
        if dict_path == '':
            saved_state_dict = load_state_dict_from_url(WEIGHTS_URL, map_location=self.device)
        else:
            saved_state_dict = torch.load(dict_path, map_location=self.device)

        self.model.eval()
        self.model.load_state_dict(saved_state_dict)
        self.model.to(self.device)

        self.transformations = transforms.Compose([transforms.Resize(224),
                                                   transforms.CenterCrop(224),
                                                   transforms.ToTensor(),
                                                   transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                                                        std=[0.229, 0.224, 0.225])])

    @property
    def on_gpu(self):
        return self.device.type == 'cuda'

    def predict(self, img):
        """
        Predicts the persons head pose and returning it in euler angles.

        Parameters
        ----------
        img : array
            Face crop to be predicted

        Returns
        -------
        pitch, yaw, roll
        """
        img = Image.fromarray(img)
        img = img.convert('RGB')
        img = self.transformations(img)

        img = torch.Tensor(img[None, :]).to(self.device)

        with torch.no_grad():
            pred = self.model(img)

        pred = utils.compute_euler_angles_from_rotation_matrices(pred, use_gpu=self.on_gpu) * 180 / np.pi
        p = pred[:, 0].cpu()
        y = pred[:, 1].cpu()
        r = pred[:, 2].cpu()
        return p, y, r

    def predict_batch(self, crops):
        """Same as predict() for a list of HxWx3 uint8 crops."""
        if len(crops) == 0:
            return np.zeros((0, 3), dtype=np.float32)
        batch = torch.stack([self.transformations(Image.fromarray(c).convert('RGB')) for c in crops])
        batch = batch.to(self.device, non_blocking=self.on_gpu)
        with torch.no_grad():
            pred = self.model(batch)
        euler = utils.compute_euler_angles_from_rotation_matrices(pred, use_gpu=self.on_gpu) * 180 / np.pi
        return euler.cpu().numpy()

    def draw_axis(self, img, yaw, pitch, roll, tdx=None, tdy=None, size=100):
        """
        Prints the person's name and age.

        If the argument 'additional' is passed, then it is appended after the main info.

        Parameters
        ----------
        img : array
            Target image to be drawn on
        yaw : int
            yaw rotation
        pitch: int
            pitch rotation
        roll: int
            roll rotation
        tdx : int , optional
            shift on x axis
        tdy : int , optional
            shift on y axis
        size : int, optional
            cube size
        """
        pitch = pitch * np.pi / 180
        yaw = -(yaw * np.pi / 180)
        roll = roll * np.pi / 180

        if tdx != None and tdy != None:
            tdx = tdx
            tdy = tdy
        else:
            height, width = img.shape[:2]
            tdx = width / 2
            tdy = height / 2

        # X-Axis pointing to right. drawn in red
        x1 = size * (math.cos(yaw) * math.cos(roll)) + tdx
        y1 = size * (math.cos(pitch) * math.sin(roll) + math.cos(roll) * math.sin(pitch) * math.sin(yaw)) + tdy

        # Y-Axis | drawn in green
        #        v
        x2 = size * (-math.cos(yaw) * math.sin(roll)) + tdx
        y2 = size * (math.cos(pitch) * math.cos(roll) - math.sin(pitch) * math.sin(yaw) * math.sin(roll)) + tdy

        # Z-Axis (out of the screen) drawn in blue
        x3 = size * (math.sin(yaw)) + tdx
        y3 = size * (-math.cos(yaw) * math.sin(pitch)) + tdy

        import cv2
        cv2.line(img, (int(tdx), int(tdy)), (int(x1), int(y1)), (0, 0, 255), 4)
        cv2.line(img, (int(tdx), int(tdy)), (int(x2), int(y2)), (0, 255, 0), 4)
        cv2.line(img, (int(tdx), int(tdy)), (int(x3), int(y3)), (255, 0, 0), 4)

        return img
