
import os
import utm
import math
import torch
import random
import imageio
import logging
import numpy as np
from glob import glob
from PIL import Image
from tqdm import tqdm
from collections import defaultdict
import torchvision.transforms as T
from sklearn.decomposition import PCA

from datasets import dataset_utils

PANO_WIDTH = int(512*6.5)


def get_angle(focal_point, obs_point):
    obs_e, obs_n = float(obs_point[0]), float(obs_point[1])
    focal_e, focal_n = focal_point
    side1 = focal_e - obs_e
    side2 = focal_n - obs_n
    angle = - math.atan2(side1, side2) / math.pi * 90 * 2
    return angle


def get_eccentricity(principal_components):
    x, y = principal_components[0]
    return math.sqrt(x**2 + y**2)


def get_focal_point(utms, principal_component, focal_dist, angle=0):
    """Returns the focal point of the class, i.e. the point that the images of the
    class are looking at. Angle=0 means frontal (along the main principal component),
    angle=90 means lateral (perpendicular to the street)."""
    B = np.array([[math.cos(math.radians(angle)), -math.sin(math.radians(angle))],
                  [math.sin(math.radians(angle)), math.cos(math.radians(angle))]])
    principal_component = B @ principal_component
    mean_utm = utms.mean(0)
    focal_point = mean_utm + principal_component * focal_dist
    return focal_point


class EigenPlacesDataset(torch.utils.data.Dataset):
    def __init__(self, dataset_folder, M=20, N=5, focal_dist=10, current_group=0, min_images_per_class=10,
                 angle=0, visualize_classes=0):
        """
        Parameters (please check our paper for a clearer explanation of the parameters).
        ----------
        dataset_folder : str, the path of the folder with the train images.
        M : int, the length of the side of each cell in meters.
        N : int, distance (M-wise) between two classes of the same group.
        focal_dist : int, distance (in meters) between the center of the class and
            the focal point. The center of the class is computed as the
            mean of the positions of the images within the class.
        current_group : int, which one of the groups to consider.
        min_images_per_class : int, minimum number of image in a class.
        angle : int, the angle formed between the line of the first principal
            component, and the line that connects the center of gravity of the
            images to the focal point.
        """
        super().__init__()
        self.M = M
        self.N = N
        self.current_group = current_group
        self.dataset_folder = dataset_folder

        # dataset_name should be either "processed", "small" or "raw", if you're using SF-XL
        dataset_name = os.path.basename(dataset_folder)
        filename = f"cache/sfxl_M{M}_N{N}_mipc{min_images_per_class}.torch"
        if not os.path.exists(filename):
            os.makedirs("cache", exist_ok=True)
            logging.info(f"Cached dataset {filename} does not exist, I'll create it now.")
            self.initialize(dataset_folder, M, N, min_images_per_class, filename)
        elif current_group == 0:
            logging.info(f"Using cached dataset {filename}")

        classes_per_group, self.images_per_class = torch.load(filename)
        if current_group >= len(classes_per_group):
            raise ValueError(f"With this configuration there are only {len(classes_per_group)} " +
                             f"groups, therefore I can't create the {current_group}th group. " +
                             "You should reduce the number of groups by setting for example " +
                             f"'--groups_num {current_group}'")
        self.classes_ids = classes_per_group[current_group]

        new_classes_ids = []
        self.images_data_per_class = {}

        for class_id in self.classes_ids:
            paths = self.images_per_class[class_id]
            u_utms = np.array([p.split("@")[1:3] for p in paths]).astype(np.float64)
            pca = PCA(2)
            pca.fit(u_utms)
            principal_component = pca.components_[0]
            focal_point = get_focal_point(u_utms, principal_component, focal_dist, angle=angle)
            new_class_id = tuple(np.round(focal_point / M).astype(int))
            new_classes_ids.append(new_class_id)
            self.images_data_per_class[new_class_id] = [(p, get_angle(focal_point, p.split("@")[1:3])) for p in paths]

        self.classes_ids = new_classes_ids

        if visualize_classes > 0:
            dataset_utils.visualize_classes(self, visualize_classes)

    def __getitem__(self, class_num):
        class_id = self.classes_ids[class_num]
        pano_path, focal_point_angle = random.choice(self.images_data_per_class[class_id])
        pano_path = os.path.join(self.dataset_folder, pano_path)
        pano_pil = Image.open(pano_path)
        pano = np.array(pano_pil)
        crop = get_crop(pano, focal_point_angle)
        crop = T.functional.to_tensor(crop)
        return crop, class_num, pano_path

    def get_images_num(self):
        """Return the number of images within this group."""
        return sum([len(self.images_data_per_class[c]) for c in self.classes_ids])

    def __len__(self):
        """Return the number of classes within this group."""
        return len(self.classes_ids)

    @staticmethod
    def initialize(dataset_folder, M, N, min_images_per_class, filename):
        logging.debug(f"Searching training images in {dataset_folder}")

        images_paths = sorted(glob(f"{dataset_folder}/**/*.jpg", recursive=True))
        logging.debug(f"Found {len(images_paths)} images")

        logging.debug("For each image, get its UTM east, UTM north from its path")
        images_metadatas = [p.split("@") for p in images_paths]
        # field 1 is UTM east, field 2 is UTM north
        utmeast_utmnorth = [(m[1], m[2]) for m in images_metadatas]
        utmeast_utmnorth = np.array(utmeast_utmnorth).astype(np.float64)

        logging.debug("For each image, get class and group to which it belongs")
        class_id__group_id = [EigenPlacesDataset.get__class_id__group_id(*m, M, N)
                              for m in utmeast_utmnorth]

        logging.debug("Group together images belonging to the same class")
        images_per_class = defaultdict(list)
        for image_path, (class_id, _) in zip(images_paths, class_id__group_id):
            images_per_class[class_id].append(image_path)

        # Images_per_class is a dict where the key is class_id, and the value
        # is a list with the paths of images within that class.
        images_per_class = {k: v for k, v in images_per_class.items() if len(v) >= min_images_per_class}

        logging.debug("Group together classes belonging to the same group")
        # Classes_per_group is a dict where the key is group_id, and the value
        # is a list with the class_ids belonging to that group.
        classes_per_group = defaultdict(set)
        for class_id, group_id in class_id__group_id:
            if class_id not in images_per_class:
                continue  # Skip classes with too few images
            classes_per_group[group_id].add(class_id)

        # Convert classes_per_group to a list of lists.
        # Each sublist represents the classes within a group.
        classes_per_group = [list(c) for c in classes_per_group.values()]

        torch.save((classes_per_group, images_per_class), filename)

    @staticmethod
    def get__class_id__group_id(utm_east, utm_north, M, N):
        """Return class_id and group_id for a given point.
            The class_id is a triplet (tuple) of UTM_east, UTM_north
            (e.g. (396520, 4983800)).
            The group_id represents the group to which the class belongs
            (e.g. (0, 1)), and it is between (0, 0) and (N, N).
        """
        rounded_utm_east = int(utm_east // M * M)  # Rounded to nearest lower multiple of M
        rounded_utm_north = int(utm_north // M * M)

        class_id = (rounded_utm_east, rounded_utm_north)
        # group_id goes from (0, 0) to (N, N)
        group_id = (rounded_utm_east % (M * N) // M,
                    rounded_utm_north % (M * N) // M)
        return class_id, group_id


def get_crop(pano, focal_point_angle, crop_width=512):
    """Crop a 512x512 view out of an equirectangular panorama, centred on the given yaw."""
    assert pano.shape[0] == 512, f"Panorama height must be 512, not {pano.shape[0]}"
    pano = np.concatenate([pano, pano], axis=1)
    pano_width = pano.shape[1] // 2
    center = int(((focal_point_angle % 360) / 360) * pano_width)
    start = center - crop_width // 2 + pano_width
    crop = pano[:, start: start + crop_width]
    assert crop.shape[:2] == (512, crop_width), f"{crop.shape} != (512, {crop_width})"
    return crop
