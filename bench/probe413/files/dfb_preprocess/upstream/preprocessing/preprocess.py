# author: Zhiyuan Yan
# email: zhiyuanyan@link.cuhk.edu.cn
# date: 2023-03-29
# description: Data pre-processing script for deepfake dataset.
"""
Notes:
1. Extract frames from every video with OpenCV.
2. Detect and align faces with dlib (81-point landmark predictor).
3. Save the cropped faces, landmarks and (optionally) masks under the dataset root.

The script runs on the CPU only. A CUDA build of dlib speeds up the CNN face
detector, but the default HOG detector used here does not need a GPU.
"""

import os
import sys
import time
import cv2
import dlib
import yaml
import logging
import datetime
import glob
import concurrent.futures
import numpy as np
from tqdm import tqdm
from pathlib import Path
from imutils import face_utils
from skimage import transform as trans


def create_logger(log_path):
    """
    Creates a logger object and saves all messages to a file.
    """
    # Create logger object
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)

    # Create file handler and set the formatter
    fh = logging.FileHandler(log_path)
    formatter = logging.Formatter('%(asctime)s - %(levelname)s - %(message)s')
    fh.setFormatter(formatter)

    # Add the file handler to the logger
    logger.addHandler(fh)

    # Add a stream handler to print to console
    sh = logging.StreamHandler()
    sh.setLevel(logging.INFO)  # Set logging level for stream handler
    sh.setFormatter(formatter)
    logger.addHandler(sh)

    return logger


def get_keypts(image, face, predictor, face_detector):
    # detect the facial landmarks for the selected face
    shape = predictor(image, face)

    # select the key points for the eyes, nose, and mouth
    leye = np.array([shape.part(37).x, shape.part(37).y]).reshape(-1, 2)
    reye = np.array([shape.part(44).x, shape.part(44).y]).reshape(-1, 2)
    nose = np.array([shape.part(30).x, shape.part(30).y]).reshape(-1, 2)
    lmouth = np.array([shape.part(49).x, shape.part(49).y]).reshape(-1, 2)
    rmouth = np.array([shape.part(55).x, shape.part(55).y]).reshape(-1, 2)

    pts = np.concatenate([leye, reye, nose, lmouth, rmouth], axis=0)

    return pts


def extract_aligned_face_dlib(face_detector, predictor, image, res=256, mask=None):
    def img_align_crop(img, landmark=None, outsize=None, scale=1.3, mask=None):
        """
        align and crop the face according to the given bbox and landmarks
        landmark: 5 key points
        """

        M = None
        target_size = [112, 112]
        dst = np.array([
            [30.2946, 51.6963],
            [65.5318, 51.5014],
            [48.0252, 71.7366],
            [33.5493, 92.3655],
            [62.7299, 92.2041]], dtype=np.float32)

        if target_size[1] == 112:
            dst[:, 0] += 8.0

        dst[:, 0] = dst[:, 0] * outsize[0] / target_size[0]
        dst[:, 1] = dst[:, 1] * outsize[1] / target_size[1]

        target_size = outsize

        margin_rate = scale - 1
        x_margin = target_size[0] * margin_rate / 2.
        y_margin = target_size[1] * margin_rate / 2.

        # move
        dst[:, 0] += x_margin
        dst[:, 1] += y_margin

        # resize
        dst[:, 0] *= target_size[0] / (target_size[0] + 2 * x_margin)
        dst[:, 1] *= target_size[1] / (target_size[1] + 2 * y_margin)

        src = landmark.astype(np.float32)

        # use skimage tranformation
        tform = trans.SimilarityTransform()
        tform.estimate(src, dst)
        M = tform.params[0:2, :]

        img = cv2.warpAffine(img, M, (target_size[1], target_size[0]))

        if outsize is not None:
            img = cv2.resize(img, (outsize[1], outsize[0]))

        if mask is not None:
            mask = cv2.warpAffine(mask, M, (target_size[1], target_size[0]))
            mask = cv2.resize(mask, (outsize[1], outsize[0]))
            return img, mask
        else:
            return img, None

    # Image size
    height, width = image.shape[:2]

    # Convert to rgb
    rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)

    # Detect with dlib
    faces = face_detector(rgb, 1)
    if len(faces):
        # For now only take the biggest face
        face = max(faces, key=lambda rect: rect.width() * rect.height())

        # Get the landmarks/parts for the face in box d only with the five key points
        landmarks = get_keypts(rgb, face, predictor, face_detector)

        # Align and crop the face
        cropped_face, mask_face = img_align_crop(rgb, landmarks, outsize=(res, res), mask=mask)
        cropped_face = cv2.cvtColor(cropped_face, cv2.COLOR_RGB2BGR)

        # Extract the all landmarks from the aligned face
        face_align = face_detector(cropped_face, 1)
        if len(face_align) == 0:
            return None, None, None
        landmark = predictor(cropped_face, face_align[0])
        landmark = face_utils.shape_to_np(landmark)

        return cropped_face, landmark, mask_face

    else:
        return None, None, None


def video_manipulate(
    movie_path: Path,
    mask_path: Path,
    dataset_path: Path,
    mode: str,
    num_frames: int,
    stride: int,
) -> None:
    """
    Processes a single video file by detecting and cropping the largest face in each frame and saving the results.
    """
    # Define face detector and predictor models
    face_detector = dlib.get_frontal_face_detector()
    predictor_path = './dlib_tools/shape_predictor_81_face_landmarks.dat'
    ## Check if predictor path exists
    if not os.path.exists(predictor_path):
        logger.error(f"Predictor path does not exist: {predictor_path}")
        sys.exit()
    face_predictor = dlib.shape_predictor(predictor_path)

    def facecrop(
        movie_path: Path,
        save_path: Path,
        mask_path: Path,
        num_frames: int,
        face_predictor: dlib.shape_predictor,
        face_detector: dlib.fhog_object_detector,
    ) -> None:
        # Open the video file
        cap_org = cv2.VideoCapture(str(movie_path))
        if not cap_org.isOpened():
            logger.error(f"Failed to open {movie_path}")
            return

        # Get the number of frames in the video
        frame_count_org = int(cap_org.get(cv2.CAP_PROP_FRAME_COUNT))

        # Get the frame indices to sample
        frame_idxs = np.linspace(0, frame_count_org - 1, num_frames, endpoint=True, dtype=int)

        # Iterate through the frames
        for cnt_frame in range(frame_count_org):
            ret_org, frame_org = cap_org.read()
            height, width = frame_org.shape[:-1] if ret_org else (0, 0)
            if not ret_org:
                logger.warning(f"Failed to read frame {cnt_frame} of {movie_path}")
                break

            if cnt_frame not in frame_idxs:
                continue

            # Use the same frame index of the video to find the corresponding mask
            mask_frame = None
            if mask_path is not None:
                cap_mask = cv2.VideoCapture(str(mask_path))
                cap_mask.set(cv2.CAP_PROP_POS_FRAMES, cnt_frame)
                ret_mask, mask_frame = cap_mask.read()
                cap_mask.release()

            # Crop the face
            cropped_face, landmarks, masks = extract_aligned_face_dlib(face_detector, face_predictor, frame_org, mask=mask_frame)

            # Check if a face was detected and cropped
            if cropped_face is None:
                logger.warning(f"No faces in frame {cnt_frame} of {movie_path}")
                continue

            # Save cropped face, landmarks, and visualization image
            save_path_ = save_path / 'frames' / movie_path.stem
            save_path_.mkdir(parents=True, exist_ok=True)

            # Save cropped face
            image_path = save_path_ / f"{cnt_frame:03d}.png"
            if not image_path.is_file():
                cv2.imwrite(str(image_path), cropped_face)

            # Save landmarks
            land_path = save_path / 'landmarks' / movie_path.stem / f"{cnt_frame:03d}"
            os.makedirs(os.path.dirname(land_path), exist_ok=True)
            np.save(str(land_path), landmarks)

            # Save mask
            if mask_path is not None:
                mask_path_ = save_path / 'masks' / movie_path.stem / f"{cnt_frame:03d}.png"
                os.makedirs(os.path.dirname(mask_path_), exist_ok=True)
                cv2.imwrite(str(mask_path_), masks)

        # Release the video capture
        cap_org.release()

    try:
        # Call the facecrop function
        facecrop(movie_path, dataset_path, mask_path, num_frames, face_predictor, face_detector)
    except Exception as e:
        logger.error(f"Error processing video {movie_path}: {e}")


def preprocess(dataset_path, mask_path, mode, num_frames, stride, logger):
    # Define paths to videos in dataset
    movies_path_list = sorted([Path(p) for p in glob.glob(os.path.join(dataset_path, '**/*.mp4'), recursive=True)])
    if len(movies_path_list) == 0:
        logger.error(f"No videos found in {dataset_path}")
        sys.exit()
    logger.info(f"{len(movies_path_list)} videos found in {dataset_path}")
    logger.info(f"dlib compiled with CUDA: {dlib.DLIB_USE_CUDA}")

    # Start the timer
    start_time = time.monotonic()

    # Use ProcessPoolExecutor to process videos in parallel
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() // 2) as executor:
        futures = []
        for movie_path in movies_path_list:
            futures.append(
                executor.submit(
                    video_manipulate,
                    movie_path,
                    None,
                    movie_path.parent.parent,
                    mode,
                    num_frames,
                    stride,
                )
            )
        for future in tqdm(concurrent.futures.as_completed(futures), total=len(movies_path_list)):
            future.result()

    # Stop the timer
    end_time = time.monotonic()
    duration_minutes = (end_time - start_time) / 60
    logger.info(f"Total time taken: {duration_minutes:.2f} minutes")


if __name__ == '__main__':
    # from config.yaml load parameters
    yaml_path = './config.yaml'
    # open the yaml file
    try:
        with open(yaml_path, 'r') as f:
            config = yaml.safe_load(f)
    except yaml.parser.ParserError as e:
        print("YAML file parsing error:", e)

    # Get the parameters
    dataset_name = config['preprocess']['dataset_name']['default']
    dataset_root_path = config['preprocess']['dataset_root_path']['default']
    comp = config['preprocess']['comp']['default']
    mode = config['preprocess']['mode']['default']
    stride = config['preprocess']['stride']['default']
    num_frames = config['preprocess']['num_frames']['default']

    # use dataset_name and dataset_root_path to get dataset_path
    dataset_path = Path(os.path.join(dataset_root_path, dataset_name))

    # Create logger
    log_path = f'./logs/{dataset_name}.log'
    logger = create_logger(log_path)

    # Define dataset path based on the input arguments
    if dataset_name in ['FaceForensics++', 'DeepFakeDetection', 'FaceShifter']:
        sub_dataset_path = Path(os.path.join(dataset_path, 'original_sequences', 'youtube', comp, 'videos'))
        preprocess(sub_dataset_path, None, mode, num_frames, stride, logger)
    elif dataset_name in ['Celeb-DF-v1', 'Celeb-DF-v2', 'UADFV', 'DFDCP']:
        preprocess(dataset_path, None, mode, num_frames, stride, logger)
    else:
        raise ValueError(f"Dataset {dataset_name} is not supported")
