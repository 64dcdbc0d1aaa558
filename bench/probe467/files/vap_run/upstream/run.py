import argparse
import math
from os.path import basename, join
from pathlib import Path

import matplotlib.pyplot as plt
import torch

from vap.modules.lightning_module import load_vap_model
from vap.utils.audio import load_waveform
from vap.utils.plot import plot_stereo
from vap.utils.utils import batch_to_device, tensor_dict_to_json, write_json

"""
Run a pretrained VAP model over a stereo (one speaker per channel) audio file and save
the frame-level voice-activity / turn-shift probabilities as json (and optionally a plot).

    python run.py --audio example/student_long_female_en-US-Wavenet-G.wav --checkpoint example/VAP_state_dict.pt --plot
"""


def get_args():
    parser = argparse.ArgumentParser(description="VAP inference")
    parser.add_argument("-a", "--audio", type=str, required=True, help="Path to (stereo) waveform")
    parser.add_argument("-c", "--checkpoint", type=str, default="example/checkpoints/VAP_state_dict.pt")
    parser.add_argument("-o", "--output", type=str, default=None, help="Path to output json")
    parser.add_argument("--chunk_time", type=float, default=20, help="Duration of each chunk (seconds)")
    parser.add_argument("--step_time", type=float, default=5, help="Increment to process in a step (seconds)")
    parser.add_argument("--cpu", action="store_true", help="Force CPU inference")
    parser.add_argument("--plot", action="store_true", help="Visualize output")
    parser.add_argument("--fp16", action="store_true", help="Run under autocast (float16)")
    return parser.parse_args()


@torch.inference_mode()
def step_extraction(waveform, model, chunk_time=20, step_time=5, fp16=False, verbose=True):
    """
    Takes a waveform, the model, and extracts probability output in chunks with
    a specific context and step time. Concatenates the output accordingly and returns full waveform output.
    """
    n_samples = waveform.shape[-1]
    duration = round(n_samples / model.sample_rate, 2)

    chunk_samples = int(chunk_time * model.sample_rate)
    step_samples = int(step_time * model.sample_rate)
    chunk_frames = int(chunk_time * model.frame_hz)
    step_frames = int(step_time * model.frame_hz)

    # Pad waveform to fit an integer number of steps
    n_steps = max(1, int(math.ceil((n_samples - chunk_samples) / step_samples)) + 1) if n_samples > chunk_samples else 1
    pad_samples = (n_steps - 1) * step_samples + chunk_samples - n_samples
    if pad_samples > 0:
        waveform = torch.nn.functional.pad(waveform, (0, pad_samples))

    if verbose:
        print(f"Non uniform chunks: {duration}s -> {n_steps} steps of {chunk_time}s (step {step_time}s)")

    ret = {"vad": [], "p_now": [], "p_future": []}
    for i in range(n_steps):
        start = i * step_samples
        chunk = waveform[..., start : start + chunk_samples]
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16):
            out = model.probs(chunk)
        keep_from = 0 if i == 0 else chunk_frames - step_frames
        for k in ret:
            ret[k].append(out[k][:, keep_from:].float().cpu())

    total_frames = int(round(duration * model.frame_hz))
    return {k: torch.cat(v, dim=1)[:, :total_frames] for k, v in ret.items()}



def main():
    args = get_args()

    device = "cpu"
    if torch.cuda.is_available() and not args.cpu:
        device = "cuda"

    model = load_vap_model(args.checkpoint, device=device)
    print("Loaded model on", device)

    waveform, _ = load_waveform(args.audio, sample_rate=model.sample_rate, mono=False)
    if waveform.shape[0] == 1:
        raise ValueError("VAP expects stereo audio: one speaker per channel")
    waveform = waveform.unsqueeze(0)  # (1, 2, n_samples)
    if device == "cuda":
        waveform = waveform.cuda()

    out = step_extraction(
        waveform, model, chunk_time=args.chunk_time, step_time=args.step_time, fp16=args.fp16
    )
    out = batch_to_device(out, "cpu")

    output = args.output or join("output", basename(args.audio).replace(".wav", ".json"))
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    write_json(tensor_dict_to_json(out), output)
    print("Saved output -> ", output)

    if args.plot:
        fig, _ = plot_stereo(waveform[0].cpu(), p_now=out["p_now"][0, :, 0], p_fut=out["p_future"][0, :, 0], vad=out["vad"][0], plot=False)
        fig.savefig(output.replace(".json", ".png"))
        plt.show()


if __name__ == "__main__":
    main()
