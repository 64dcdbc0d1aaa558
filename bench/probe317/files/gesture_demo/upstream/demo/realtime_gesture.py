"""Real-time dynamic hand gesture recognition from a webcam.

MediaPipe Hands (CPU) -> 21 keypoints per frame -> sliding window of 32 frames ->
skeleton GCN classifier (trained on SHREC'17 / DHG-14/28 / our sign-spotting set).

    python demo/realtime_gesture.py --ckpt work_dir/dhg14_ctrgcn/best.pth --labels data/dhg14_labels.txt
    python demo/realtime_gesture.py --ckpt ... --export onnx/gesture.onnx      # export only
    python demo/realtime_gesture.py --ckpt ... --bench                         # latency benchmark
"""
import argparse
import collections
import os
import time

import cv2
import numpy as np
import torch

from model.ctrgcn import Model as CTRGCN

try:
    import mediapipe as mp
except ImportError:
    mp = None

WINDOW = 32
NUM_JOINTS = 21


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--labels", default="data/dhg14_labels.txt")
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:1 ...")
    ap.add_argument("--camera", type=int, default=0)
    ap.add_argument("--fp16", action="store_true", help="half precision on GPU")
    ap.add_argument("--export", default="", help="export the classifier to ONNX and exit")
    ap.add_argument("--onnx", default="", help="run the exported ONNX model with onnxruntime instead of torch")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--thr", type=float, default=0.6)
    return ap.parse_args()


def get_device(pref):
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(pref)


def load_model(ckpt, num_class, device, fp16=False):
    model = CTRGCN(num_class=num_class, num_point=NUM_JOINTS, num_person=1,
                   graph="graph.hand.Graph", graph_args={"labeling_mode": "spatial"}, in_channels=3)
    state = torch.load(ckpt, map_location=device)
    state = state.get("model", state)
    state = {k.replace("module.", ""): v for k, v in state.items()}
    model.load_state_dict(state, strict=True)
    model.eval().to(device)
    if fp16 and device.type == "cuda":
        model.half()
    return model


def normalise(window):
    """window: T,21,3 (x, y, z from mediapipe) -> 1,3,T,21,1 centred on the wrist, unit palm size"""
    w = np.asarray(window, dtype=np.float32)
    w = w - w[:, :1]
    scale = np.linalg.norm(w[:, 9, :2], axis=-1).mean() + 1e-6
    w = w / scale
    return torch.from_numpy(w).permute(2, 0, 1).unsqueeze(0).unsqueeze(-1).contiguous()


@torch.inference_mode()
def benchmark(model, device, dtype, iters=200):
    x = torch.randn(1, 3, WINDOW, NUM_JOINTS, 1, device=device, dtype=dtype)
    for _ in range(20):
        model(x)
    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        starter.record()
        model(x)
        ender.record()
        torch.cuda.synchronize()
        times.append(starter.elapsed_time(ender))
    times = np.array(times)
    print(f"latency: mean {times.mean():.2f} ms  p50 {np.percentile(times, 50):.2f}  p99 {np.percentile(times, 99):.2f}")


def export_onnx(model, path, device):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    dummy = torch.randn(1, 3, WINDOW, NUM_JOINTS, 1, device=device)
    torch.onnx.export(model.float(), dummy, path, input_names=["pose"], output_names=["logits"],
                      opset_version=17, dynamic_axes={"pose": {0: "batch"}, "logits": {0: "batch"}})
    print(f"exported to {path}")


class OrtRunner:
    def __init__(self, path):
        import onnxruntime as ort
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
        self.sess = ort.InferenceSession(path, providers=providers)
        print("onnxruntime providers:", self.sess.get_providers())

    def __call__(self, x):
        return torch.from_numpy(self.sess.run(None, {"pose": x.numpy()})[0])


def main():
    args = parse_args()
    labels = [l.strip() for l in open(args.labels) if l.strip()]
    device = get_device(args.device)
    torch.backends.cudnn.benchmark = True
    model = load_model(args.ckpt, len(labels), device, args.fp16)
    dtype = next(model.parameters()).dtype

    if args.export:
        export_onnx(model, args.export, device)
        return
    if args.bench:
        benchmark(model, device, dtype)
        return

    runner = OrtRunner(args.onnx) if args.onnx else None
    assert mp is not None, "pip install mediapipe"
    hands = mp.solutions.hands.Hands(static_image_mode=False, max_num_hands=1,
                                     min_detection_confidence=0.5, min_tracking_confidence=0.5)
    cap = cv2.VideoCapture(args.camera)
    window = collections.deque(maxlen=WINDOW)
    last, last_t = "", 0.0
    fps_t, n_frames = time.time(), 0
    while cap.isOpened():
        ok, frame = cap.read()
        if not ok:
            break
        rgb = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        res = hands.process(rgb)
        if res.multi_hand_landmarks:
            lm = res.multi_hand_landmarks[0].landmark
            window.append([[p.x, p.y, p.z] for p in lm])
            mp.solutions.drawing_utils.draw_landmarks(frame, res.multi_hand_landmarks[0],
                                                      mp.solutions.hands.HAND_CONNECTIONS)
        if len(window) == WINDOW:
            x = normalise(window)
            if runner is not None:
                logits = runner(x)
            else:
                with torch.inference_mode():
                    logits = model(x.to(device, dtype=dtype)).float().cpu()
            prob = logits.softmax(-1)[0]
            conf, idx = prob.max(0)
            if conf.item() > args.thr:
                last, last_t = f"{labels[idx]} ({conf.item():.2f})", time.time()
        if time.time() - last_t < 1.5:
            cv2.putText(frame, last, (10, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 255, 0), 2)
        n_frames += 1
        if n_frames % 30 == 0:
            fps = n_frames / (time.time() - fps_t)
            cv2.setWindowTitle("gesture", f"gesture  {fps:.1f} fps  [{device}]")
        cv2.imshow("gesture", frame)
        if cv2.waitKey(1) & 0xFF == 27:
            break
    cap.release()
    cv2.destroyAllWindows()


if __name__ == "__main__":
    main()
