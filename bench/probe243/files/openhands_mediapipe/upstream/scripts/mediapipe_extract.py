"""
Extract MediaPipe Holistic keypoints (pose + both hands + face mesh) from
sign-language videos and dump them as pickles that OpenHands' pose datasets read.

MediaPipe's Python solution runs on the CPU (the GPU graphs are only available
through the C++ / Android builds), so this script parallelises over videos with
a process pool instead of using the GPU. Run it on the CPU nodes and keep the
GPU nodes for training:

    python scripts/mediapipe_extract.py --input_dir datasets/wlasl/videos \
        --output_dir datasets/wlasl/poses_pickle --n_cores 32
"""
import os
import gc
import glob
import pickle
import argparse
import warnings
import multiprocessing
from functools import partial

import cv2
import numpy as np
from tqdm import tqdm
from joblib import Parallel, delayed

import mediapipe as mp

mp_holistic = mp.solutions.holistic

N_FACE_LANDMARKS = 468
N_BODY_LANDMARKS = 33
N_HAND_LANDMARKS = 21


class Counter(object):
    # https://stackoverflow.com/a/47562583/
    def __init__(self, initval=0):
        self.val = multiprocessing.RawValue("i", initval)
        self.lock = multiprocessing.Lock()

    def increment(self):
        with self.lock:
            self.val.value += 1

    @property
    def value(self):
        return self.val.value


def process_body_landmarks(component, n_points):
    kps = np.zeros((n_points, 3))
    conf = np.zeros(n_points)
    if component is not None:
        landmarks = component.landmark
        kps = np.array([[p.x, p.y, p.z] for p in landmarks])
        conf = np.array([p.visibility for p in landmarks])
    return kps, conf


def process_other_landmarks(component, n_points):
    kps = np.zeros((n_points, 3))
    conf = np.zeros(n_points)
    if component is not None:
        landmarks = component.landmark
        kps = np.array([[p.x, p.y, p.z] for p in landmarks])
        conf = np.ones(n_points)
    return kps, conf


def get_holistic_keypoints(frames, holistic=mp_holistic.Holistic(static_image_mode=False, model_complexity=2)):
    """
    For videos, it's optimal to create with `static_image_mode=False` for each video.
    https://google.github.io/mediapipe/solutions/holistic.html#static_image_mode
    """

    keypoints = []
    confs = []

    for frame in frames:
        results = holistic.process(frame)

        body_data, body_conf = process_body_landmarks(results.pose_landmarks, N_BODY_LANDMARKS)
        face_data, face_conf = process_other_landmarks(results.face_landmarks, N_FACE_LANDMARKS)
        lh_data, lh_conf = process_other_landmarks(results.left_hand_landmarks, N_HAND_LANDMARKS)
        rh_data, rh_conf = process_other_landmarks(results.right_hand_landmarks, N_HAND_LANDMARKS)

        data = np.concatenate([body_data, face_data, lh_data, rh_data])
        conf = np.concatenate([body_conf, face_conf, lh_conf, rh_conf])

        keypoints.append(data)
        confs.append(conf)

    # TODO: Reuse the same object when this issue is fixed: https://github.com/google/mediapipe/issues/2152
    holistic.close()
    del holistic
    gc.collect()

    keypoints = np.stack(keypoints)
    confs = np.stack(confs)
    return keypoints, confs


def gen_keypoints_for_frames(frames, save_path):
    pose_kps, pose_confs = get_holistic_keypoints(frames)
    body_kps = np.concatenate([pose_kps[:, :33, :], pose_kps[:, 501:, :]], axis=1)

    confs = np.concatenate([pose_confs[:, :33], pose_confs[:, 501:]], axis=1)

    d = {"keypoints": body_kps, "confidences": confs}

    with open(save_path + ".pkl", "wb") as f:
        pickle.dump(d, f, protocol=4)


def load_frames_from_video(video_path):
    frames = []
    vidcap = cv2.VideoCapture(video_path)
    while vidcap.isOpened():
        success, img = vidcap.read()
        if not success:
            break
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        frames.append(img)

    vidcap.release()
    # cv2.destroyAllWindows()
    return np.asarray(frames)


def load_frames_from_folder(frames_folder, pattern="*.jpg"):
    images = sorted(glob.glob(f"{frames_folder}/{pattern}"))
    if not images:
        print(f"NO IMAGES FOUND IN {frames_folder}")
        return None
    frames = []
    for img_path in images:
        img = cv2.imread(img_path)
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        frames.append(img)
    return np.asarray(frames)


def gen_keypoints_for_video(video_path, save_path):
    if not os.path.isfile(video_path):
        print("SKIPPING MISSING FILE:", video_path)
        return
    frames = load_frames_from_video(video_path)
    gen_keypoints_for_frames(frames, save_path)


def gen_keypoints_for_folder(folder, save_path, file_pattern):
    frames = load_frames_from_folder(folder, file_pattern)
    gen_keypoints_for_frames(frames, save_path)


def generate_pose(dataset, save_folder, worker_index, num_workers, counter):
    num_splits = len(dataset) // num_workers + 1
    start_index = num_splits * worker_index
    end_index = min(num_splits * (worker_index + 1), len(dataset))
    for index in range(start_index, end_index):
        imgs, label, video_id = dataset.read_data(index)
        save_path = os.path.join(save_folder, video_id)
        gen_keypoints_for_frames(imgs, save_path)
        counter.increment()


def dump_pose_for_dataset(dataset, save_folder, num_workers=multiprocessing.cpu_count()):
    os.makedirs(save_folder, exist_ok=True)
    processes = []
    counter = Counter()
    for i in tqdm(range(num_workers), desc="Creating sub-processes..."):
        p = multiprocessing.Process(target=generate_pose, args=(dataset, save_folder, i, num_workers, counter))
        p.start()
        processes.append(p)

    total_samples = len(dataset)
    with tqdm(total=total_samples) as pbar:
        while counter.value < total_samples:
            pbar.update(counter.value - pbar.n)
            time.sleep(2)

    for i in range(num_workers):
        processes[i].join()
    print(f"Pose data successfully saved to: {save_folder}")


if __name__ == "__main__":
    import time
    parser = argparse.ArgumentParser(description="MediaPipe holistic keypoint extraction (CPU)")
    parser.add_argument("--input_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--file_pattern", default="*.mp4")
    parser.add_argument("--n_cores", type=int, default=multiprocessing.cpu_count())
    # kept for CLI compatibility with the GPU pose extractors; MediaPipe ignores it
    parser.add_argument("--gpu", type=int, default=-1, help="unused, MediaPipe Python runs on CPU")
    args = parser.parse_args()

    os.makedirs(args.output_dir, exist_ok=True)
    file_paths = []
    save_paths = []
    for file in sorted(glob.glob(os.path.join(args.input_dir, "**", args.file_pattern), recursive=True)):
        file_paths.append(file)
        rel = os.path.relpath(file, args.input_dir)
        save_path = os.path.join(args.output_dir, os.path.splitext(rel)[0])
        os.makedirs(os.path.dirname(save_path), exist_ok=True)
        save_paths.append(save_path)

    if args.gpu >= 0:
        warnings.warn("--gpu is ignored: the MediaPipe Python package only ships CPU calculators")

    Parallel(n_jobs=args.n_cores, backend="multiprocessing")(
        delayed(gen_keypoints_for_video)(path, save_path)
        for path, save_path in tqdm(zip(file_paths, save_paths), total=len(file_paths))
    )
