"""
pytorch_detector.py

Module to run MegaDetector v5 models, which are YOLOv5 models trained on
camera trap images.

Requires either the yolov5 pip package or a clone of the YOLOv5 repo on the
PYTHONPATH (we try the pip package first).
"""

#%% Imports and constants

import sys
import traceback

import numpy as np
import torch

from detection.run_detector import CONF_DIGITS, COORD_DIGITS, FAILURE_INFER
from md_utils import ct_utils

# Which version of the YOLOv5 utils did we end up importing?
utils_imported = False
try_yolov5_import = True

if try_yolov5_import and not utils_imported:
    try:
        from yolov5.utils.general import non_max_suppression, xyxy2xywh  # noqa
        from yolov5.utils.augmentations import letterbox  # noqa
        try:
            from yolov5.utils.general import scale_boxes as scale_coords
        except ImportError:
            from yolov5.utils.general import scale_coords
        utils_imported = True
        print('Imported YOLOv5 from the yolov5 pip package')
    except ModuleNotFoundError:
        pass

if not utils_imported:
    # Fall back to a YOLOv5 clone on the PYTHONPATH
    from utils.general import non_max_suppression, xyxy2xywh  # noqa
    from utils.augmentations import letterbox  # noqa
    try:
        from utils.general import scale_boxes as scale_coords
    except ImportError:
        from utils.general import scale_coords
    utils_imported = True
    print('Imported YOLOv5 as utils.*')

print(f'Using PyTorch version {torch.__version__}')


#%% Classes

class PTDetector:

    # Image size used in training; inference at other sizes is possible but not
    # recommended.
    IMAGE_SIZE = 1280
    STRIDE = 64

    def __init__(self, model_path: str,
                 force_cpu: bool = False,
                 use_model_native_classes: bool = False):

        self.device = 'cpu'
        if not force_cpu:
            if torch.cuda.is_available():
                self.device = torch.device('cuda:0')
            try:
                if torch.backends.mps.is_built and torch.backends.mps.is_available():
                    self.device = 'mps'
            except AttributeError:
                pass

        # FP16 is only safe on CUDA devices for these models; MPS gives NaNs on
        # some versions of macOS.
        self.use_half = isinstance(self.device, torch.device) and self.device.type == 'cuda'

        try:
            self.model = PTDetector._load_model(model_path, self.device)
        except Exception as e:
            # In a very estoteric scenario where an old version of YOLOv5 is used to run
            # newer models, we run into an issue because the "Model" class became
            # "DetectionModel".  This is an ugly fix.
            if "Can't get attribute 'DetectionModel'" in str(e):
                print('Forward-compatibility issue detected, patching')
                from models import yolo
                yolo.DetectionModel = yolo.Model
                self.model = PTDetector._load_model(model_path, self.device)
            else:
                raise

        if (self.device != 'cpu'):
            print('Sending model to GPU')
            self.model.to(self.device)
            if self.use_half:
                self.model.half()

        self.printed_image_size_warning = False
        self.use_model_native_classes = use_model_native_classes


    @staticmethod
    def _load_model(model_pt_path, device):

        # There are two very slightly different ways to load the model, (1) using the
        # map_location=device parameter to torch.load and (2) calling .to(device) after
        # loading the model.  The former is what we did for a zillion years, but is not
        # supported on Apple silicon at of PyTorch 1.13.0.
        if device == 'mps':
            checkpoint = torch.load(model_pt_path)
            checkpoint['model'] = checkpoint['model'].to(device)
        else:
            checkpoint = torch.load(model_pt_path, map_location=device)

        # Compatibility fix that allows us to load older YOLOv5 models with
        # newer versions of YOLOv5/PT
        for m in checkpoint['model'].modules():
            t = type(m)
            if t is torch.nn.Upsample and not hasattr(m, 'recompute_scale_factor'):
                m.recompute_scale_factor = None

        model = checkpoint['model'].float().fuse().eval()  # FP32 model
        return model


    def generate_detections_one_image(self, img_original, image_id,
                                      detection_threshold, image_size=None,
                                      skip_image_resizing=False):
        """
        Apply the detector to an image.

        Args:
            img_original: the PIL Image object with EXIF rotation taken into account
            image_id: a path to identify the image; will be in the "file" field of the output object
            detection_threshold: confidence above which to include the detection proposal
            skip_image_resizing: whether to skip internal image resizing and rely on external resizing

        Returns:
        A dict with the following fields, see the 'images' key in:
        https://github.com/agentmorris/MegaDetector/tree/main/megadetector/api/batch_processing#batch-processing-api-output-format
            - 'file' (always present)
            - 'max_detection_conf' (removed from MegaDetector output by default, but generated here)
            - 'detections', which is a list of detection objects containing keys 'category', 'conf' and 'bbox'
            - 'failure'
        """

        result = {
            'file': image_id
        }
        detections = []
        max_conf = 0.0

        try:

            img_original = np.asarray(img_original)

            # padded resize
            target_size = PTDetector.IMAGE_SIZE

            # Image size can be an int (which translates to a square target size) or (h,w)
            if image_size is not None:

                assert isinstance(image_size, int) or (len(image_size) == 2)

                if not self.printed_image_size_warning:
                    print('Warning: using user-supplied image size {}'.format(image_size))
                    self.printed_image_size_warning = True

                target_size = image_size

            else:

                self.printed_image_size_warning = False

            # ...if the caller has specified an image size

            # If the caller wants us to skip all the resizing operations...
            if skip_image_resizing:

                img = img_original

            else:

                letterbox_result = letterbox(img_original, new_shape=target_size,
                                             stride=PTDetector.STRIDE, auto=True)
                img = letterbox_result[0]

            # HWC to CHW; PIL Image is RGB already
            img = img.transpose((2, 0, 1))
            img = np.ascontiguousarray(img)
            img = torch.from_numpy(img)
            img = img.to(self.device)
            img = img.half() if self.use_half else img.float()
            img /= 255

            # In practice this is always true
            if len(img.shape) == 3:
                img = torch.unsqueeze(img, 0)

            pred: list = self.model(img)[0]

            # NMS
            if self.device == 'mps':
                # As of PyTorch 1.13.0.dev20220824, nms is not implemented for MPS.
                #
                # Send predictions back to the CPU for NMS.
                pred = non_max_suppression(prediction=pred.cpu(), conf_thres=detection_threshold)
            else:
                pred = non_max_suppression(prediction=pred, conf_thres=detection_threshold)

            # format detections/bounding boxes
            #
            # normalization gain whwh
            gn = torch.tensor(img_original.shape)[[1, 0, 1, 0]]

            # This is a loop over detection batches, which will always be length 1 in our case,
            # since we're not doing batch inference.
            for det in pred:

                if len(det):

                    # Rescale boxes from img_size to im0 size
                    det[:, :4] = scale_coords(img.shape[2:], det[:, :4], img_original.shape).round()

                    for *xyxy, conf, cls in reversed(det):

                        # normalized center-x, center-y, width and height
                        xywh = (xyxy2xywh(torch.tensor(xyxy).view(1, 4)) / gn).view(-1).tolist()

                        api_box = ct_utils.convert_yolo_to_xywh(xywh)

                        conf = ct_utils.truncate_float(conf.tolist(), precision=CONF_DIGITS)

                        if not self.use_model_native_classes:
                            # MegaDetector output format's categories start at 1, but the MD
                            # model's categories start at 0.
                            cls = int(cls.tolist()) + 1
                            if cls not in (1, 2, 3):
                                raise KeyError(f'{cls} is not a valid class.')
                        else:
                            cls = int(cls.tolist())

                        detections.append({
                            'category': str(cls),
                            'conf': conf,
                            'bbox': ct_utils.truncate_float_array(api_box, precision=COORD_DIGITS)
                        })
                        max_conf = max(max_conf, conf)

                    # ...for each detection in this batch

                # ...if this is a non-empty batch

            # ...for each detection batch

        except Exception as e:

            result['failure'] = FAILURE_INFER
            print('PTDetector: image {} failed during inference: {}\n'.format(image_id, str(e)))
            traceback.print_exc(e)

        result['max_detection_conf'] = max_conf
        result['detections'] = detections

        return result

    # ...def generate_detections_one_image(...)

# ...class PTDetector


#%% Command-line driver

if __name__ == '__main__':

    # For testing only... you don't really want to run this module directly

    import md_visualization.visualization_utils as vis_utils

    if len(sys.argv) < 3:
        print('Usage: pytorch_detector.py model_file image_file')
        sys.exit()

    model_file = sys.argv[1]
    im_file = sys.argv[2]

    detector = PTDetector(model_file)
    image = vis_utils.load_image(im_file)

    res = detector.generate_detections_one_image(image, im_file, detection_threshold=0.00001)
    print(res)
