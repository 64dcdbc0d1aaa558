import argparse
import pathlib
import time

import cv2
import numpy as np
import torch
import torch.backends.cudnn as cudnn

from l2cs import select_device, draw_gaze, getArch, Pipeline, render

CWD = pathlib.Path.cwd()


def parse_args():
    """Parse input arguments."""
    parser = argparse.ArgumentParser(
        description='Gaze evalution using model pretrained with L2CS-Net on Gaze360.')
    parser.add_argument(
        '--device', dest='device', help='Device to run model: cpu or 0 (cuda index)',
        default="0", type=str)
    parser.add_argument(
        '--snapshot', dest='snapshot', help='Path of model snapshot.',
        default='output/snapshots/L2CS-gaze360-_loader-180-4/_epoch_55.pkl', type=str)
    parser.add_argument(
        '--cam', dest='cam_id', help='Camera device id to use [0]',
        default=0, type=int)
    parser.add_argument(
        '--video', dest='video', help='Optional video file instead of a webcam',
        default=None, type=str)
    parser.add_argument(
        '--arch', dest='arch', help='Network architecture, can be: ResNet18, ResNet34, ResNet50, ResNet101, ResNet152',
        default='ResNet50', type=str)
    parser.add_argument(
        '--half', action='store_true', help='run the gaze network in fp16 (GPU only)')
    parser.add_argument(
        '--save', dest='save', default='', type=str, help='write annotated frames to this mp4')
    args = parser.parse_args()
    return args


def open_source(args):
    if args.video:
        cap = cv2.VideoCapture(args.video)
    else:
        cap = cv2.VideoCapture(args.cam_id)
    # Check if the webcam is opened correctly
    if not cap.isOpened():
        raise IOError("Cannot open webcam")
    return cap


if __name__ == '__main__':
    args = parse_args()

    cudnn.enabled = True
    arch = args.arch
    cam = args.cam_id
    device = select_device(args.device, batch_size=1)

    gaze_pipeline = Pipeline(
        weights=CWD / 'models' / 'L2CSNet_gaze360.pkl',
        arch=arch,
        device=device
    )
    if args.half and device.type == 'cuda':
        gaze_pipeline.model.half()

    cap = open_source(args)
    writer = None
    if args.save:
        fourcc = cv2.VideoWriter_fourcc(*'mp4v')
        w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        writer = cv2.VideoWriter(args.save, fourcc, 30.0, (w, h))

    fps_hist = []
    with torch.no_grad():
        while True:

            # Get frame
            success, frame = cap.read()
            start_fps = time.time()

            if not success:
                print("Failed to obtain frame")
                time.sleep(0.1)
                if args.video:
                    break
                continue

            # Process frame
            results = gaze_pipeline.step(frame)

            # Visualize output
            frame = render(frame, results)

            myFPS = 1.0 / (time.time() - start_fps)
            fps_hist.append(myFPS)
            cv2.putText(frame, 'FPS: {:.1f}'.format(myFPS), (10, 20), cv2.FONT_HERSHEY_COMPLEX_SMALL, 1,
                        (0, 255, 0), 1, cv2.LINE_AA)

            if writer is not None:
                writer.write(frame)
            cv2.imshow("Demo", frame)
            if cv2.waitKey(1) & 0xFF == 27:
                break
            success, frame = cap.read()

    if fps_hist:
        print('mean FPS over %d frames: %.2f (%s)' % (
            len(fps_hist), float(np.mean(fps_hist)),
            torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'))
    cap.release()
    if writer is not None:
        writer.release()
    cv2.destroyAllWindows()
