"""Real-time facial expression recognition from a webcam or a video file.

Faces are detected with facenet-pytorch's MTCNN and classified with an HSEmotion
EfficientNet. Runs on the GPU when one is available (about 60 FPS on a RTX 3090).
"""
import argparse
import time

import cv2
import numpy as np
import torch
from facenet_pytorch import MTCNN

from hsemotion.facial_emotions import HSEmotionRecognizer


def parse_args():
    parser = argparse.ArgumentParser(description='HSEmotion video demo')
    parser.add_argument('--source', default='0', help='camera index or path to a video file')
    parser.add_argument('--model', default='enet_b0_8_best_afew', help='HSEmotion model name')
    parser.add_argument('--min-face', type=int, default=40, help='minimal face size for MTCNN')
    parser.add_argument('--output', default=None, help='optional path of the annotated video')
    parser.add_argument('--no-show', action='store_true', help='do not open a window')
    return parser.parse_args()


def detect_faces(mtcnn, frame):
    bounding_boxes, probs = mtcnn.detect(frame, landmarks=False)
    if bounding_boxes is None:
        return []
    bounding_boxes = bounding_boxes[probs > 0.9]
    return bounding_boxes


def draw(frame, box, emotion, score):
    x1, y1, x2, y2 = [int(v) for v in box[0:4]]
    cv2.rectangle(frame, (x1, y1), (x2, y2), (0, 255, 0), 2)
    cv2.putText(frame, f'{emotion} {score:.2f}', (x1, max(0, y1 - 8)),
                cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 255, 0), 2, cv2.LINE_AA)


def main():
    args = parse_args()

    use_cuda = torch.cuda.is_available()
    device = 'cuda' if use_cuda else 'cpu'
    print('Running on', torch.cuda.get_device_name(0) if use_cuda else 'CPU')

    mtcnn = MTCNN(keep_all=True, post_process=False, min_face_size=args.min_face, device=device)
    fer = HSEmotionRecognizer(model_name=args.model, device=device)

    source = int(args.source) if args.source.isdigit() else args.source
    cap = cv2.VideoCapture(source)
    if not cap.isOpened():
        raise RuntimeError(f'Cannot open video source {args.source}')

    writer = None
    if args.output is not None:
        fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
        w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        writer = cv2.VideoWriter(args.output, cv2.VideoWriter_fourcc(*'mp4v'), fps, (w, h))

    frame_count, t0 = 0, time.time()
    while True:
        ok, frame_bgr = cap.read()
        if not ok:
            break
        frame = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2RGB)

        boxes = detect_faces(mtcnn, frame)
        faces = []
        for box in boxes:
            x1, y1, x2, y2 = [max(0, int(v)) for v in box[0:4]]
            face = frame[y1:y2, x1:x2, :]
            if face.size > 0:
                faces.append((box, face))

        if faces:
            emotions, scores = fer.predict_multi_emotions([f for _, f in faces], logits=False)
            for (box, _), emotion, score in zip(faces, emotions, scores):
                draw(frame_bgr, box, emotion, float(np.max(score)))

        frame_count += 1
        if frame_count % 100 == 0:
            elapsed = time.time() - t0
            print(f'{frame_count} frames, {frame_count / elapsed:.1f} FPS')

        if writer is not None:
            writer.write(frame_bgr)
        if not args.no_show:
            cv2.imshow('HSEmotion', frame_bgr)
            if cv2.waitKey(1) & 0xFF == ord('q'):
                break

    cap.release()
    if writer is not None:
        writer.release()
    cv2.destroyAllWindows()


if __name__ == '__main__':
    main()
