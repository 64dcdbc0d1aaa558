"""Measure DyNCA inference speed (frames per second) at several resolutions.

Reproduces the "real-time" table: one output frame = ``--steps_per_frame`` NCA steps.
"""
import argparse
import json

import torch

from models.dynca import DyNCA

parser = argparse.ArgumentParser()
parser.add_argument("--model_path", type=str, required=True)
parser.add_argument("--channels", type=int, default=12)
parser.add_argument("--fc_dim", type=int, default=96)
parser.add_argument("--steps_per_frame", type=int, default=24)
parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512, 1024])
parser.add_argument("--n_frames", type=int, default=50)
parser.add_argument("--half", action="store_true", help="run the NCA in fp16")
parser.add_argument("--out", type=str, default="fps.json")
args = parser.parse_args()

device = torch.device("cuda")
model = DyNCA(c_in=args.channels, c_out=args.channels, fc_dim=args.fc_dim, device=device)
model.load_state_dict(torch.load(args.model_path, map_location="cuda"))
model.eval()
dtype = torch.float16 if args.half else torch.float32
if args.half:
    model = model.half()

results = {"device": torch.cuda.get_device_name(device), "half": args.half, "fps": {}}

with torch.no_grad():
    for size in args.sizes:
        x = model.seed(1, h=size, w=size).to(dtype)
        # warm-up, also lets cudnn pick its algorithms
        for _ in range(10):
            x, _ = model(x)
        torch.cuda.synchronize(device)

        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.n_frames):
            for _ in range(args.steps_per_frame):
                x, img = model(x)
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
        fps = args.n_frames / (ms / 1000.0)
        results["fps"][size] = fps
        print("%4dx%-4d  %7.1f fps  (%.2f GB peak)" % (size, size, fps, torch.cuda.max_memory_allocated() / 1e9))
        torch.cuda.reset_peak_memory_stats()

with open(args.out, "w") as f:
    json.dump(results, f, indent=2)
print(json.dumps(results, indent=2))
