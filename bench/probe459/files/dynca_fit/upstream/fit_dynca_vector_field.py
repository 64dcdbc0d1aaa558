"""Train a DyNCA to synthesise a dynamic texture whose appearance matches an
exemplar image and whose motion follows a target vector field.

    python fit_dynca_vector_field.py --target_appearance_path data/VectorFieldMotion/Appearance/bubbly_0101.jpg \
        --motion_vector_field_name circular --nca_base_num_steps 24 --DEVICE cuda:0
"""
import argparse
import copy
import json
import os
import time

import numpy as np
import torch
from tqdm import tqdm

from models.dynca import DyNCA, count_parameters
from utils.loss.loss import Loss
from utils.misc.display_utils import save_summary, plot_train_log
from utils.misc.video_utils import VideoWriter
from utils.misc.preprocess_texture import select_frame

torch.backends.cudnn.benchmark = True

parser = argparse.ArgumentParser(
    description="Dynamic Neural Cellular Automata: fit appearance + vector-field motion"
)

# Target
parser.add_argument("--target_appearance_path", type=str, default="data/VectorFieldMotion/Appearance/bubbly_0101.jpg")
parser.add_argument("--motion_vector_field_name", type=str, default="circular")
parser.add_argument("--motion_strength", type=float, default=1.0)
parser.add_argument("--motion_direction_weight", type=float, default=10.0)
parser.add_argument("--motion_norm_weight", type=float, default=1.0)
parser.add_argument("--motion_img_size", type=int, default=256)

# NCA
parser.add_argument("--nca_pool_size", type=int, default=256)
parser.add_argument("--nca_step_range", type=int, nargs=2, default=[32, 128])
parser.add_argument("--nca_inject_seed_step", type=int, default=8)
parser.add_argument("--nca_channels", type=int, default=12)
parser.add_argument("--nca_fc_dim", type=int, default=96)
parser.add_argument("--nca_seed_mode", type=str, default="zeros", choices=["zeros", "center_on", "random"])
parser.add_argument("--nca_padding_mode", type=str, default="replicate")
parser.add_argument("--nca_pos_emb", type=str, default="CPE", choices=["None", "CPE"])
parser.add_argument("--nca_perception_scales", type=int, nargs="+", default=[0])
parser.add_argument("--nca_base_num_steps", type=float, default=24.0)

# Optimisation
parser.add_argument("--img_size", type=int, nargs=2, default=[128, 128])
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--iterations", type=int, default=4000)
parser.add_argument("--save_every", type=int, default=500)
parser.add_argument("--appearance_loss_type", type=str, default="OT", choices=["OT", "SlW", "Gram"])
parser.add_argument("--appearance_weight", type=float, default=1.0)
parser.add_argument("--motion_weight", type=float, default=2.0)
parser.add_argument("--overflow_weight", type=float, default=100.0)
parser.add_argument("--max_grad_norm", type=float, default=1.0)

# Misc
parser.add_argument("--DEVICE", type=str, default="cuda:0", help="The GPU used for training")
parser.add_argument("--output_dir", type=str, default="out/VectorFieldMotion/")
parser.add_argument("--video_length", type=float, default=10, help="seconds of video written at the end")
parser.add_argument("--video_only", action="store_true")

args = parser.parse_args()

DEVICE = torch.device(args.DEVICE if torch.cuda.is_available() else "cpu")
args.DEVICE = DEVICE
args.img_size = tuple(args.img_size)
args.loss_weights = {
    "appearance": args.appearance_weight,
    "vector_field_motion": args.motion_weight,
    "overflow": args.overflow_weight,
}

style_name = os.path.splitext(os.path.basename(args.target_appearance_path))[0]
output_dir = os.path.join(args.output_dir, args.motion_vector_field_name, style_name)
os.makedirs(output_dir, exist_ok=True)
with open(os.path.join(output_dir, "args.json"), "w") as f:
    json.dump({k: str(v) for k, v in vars(args).items()}, f, indent=2)

nca_model = DyNCA(
    c_in=args.nca_channels,
    c_out=args.nca_channels,
    fc_dim=args.nca_fc_dim,
    seed_mode=args.nca_seed_mode,
    pos_emb=args.nca_pos_emb,
    padding_mode=args.nca_padding_mode,
    perception_scales=args.nca_perception_scales,
    device=DEVICE,
)
print("DyNCA parameters:", count_parameters(nca_model))

with torch.no_grad():
    nca_pool = nca_model.seed(args.nca_pool_size, h=args.img_size[0], w=args.img_size[1])

optimizer = torch.optim.Adam(nca_model.parameters(), lr=args.lr)
lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [1000, 2000], 0.3)

loss_fn = Loss(args)

loss_log = []
interval = 50
step_n_min, step_n_max = args.nca_step_range


def get_step_n(it):
    # curriculum: start short, grow the rollout length
    frac = min(1.0, it / (0.5 * args.iterations))
    hi = int(step_n_min + frac * (step_n_max - step_n_min))
    return np.random.randint(step_n_min, max(hi, step_n_min + 1))


def train():
    pbar = tqdm(range(args.iterations), ncols=100)
    t0 = time.time()
    for i in pbar:
        np.random.seed(i + 424)
        torch.manual_seed(i + 424)
        torch.cuda.manual_seed_all(i + 424)

        with torch.no_grad():
            batch_idx = np.random.choice(args.nca_pool_size, args.batch_size, replace=False)
            input_states = nca_pool[batch_idx]
            seed_injection = False
            if i % args.nca_inject_seed_step == 0:
                seed_injection = True
                seed_inject = nca_model.seed(1, h=args.img_size[0], w=args.img_size[1])
                input_states[:1] = seed_inject[:1]

        step_n = get_step_n(i)
        nca_states = []
        nca_images = []
        x = input_states
        for _ in range(step_n):
            x, image = nca_model(x)
            nca_states.append(x)
            nca_images.append(image)

        # the motion loss needs two consecutive frames 'base_num_steps' apart
        k = int(args.nca_base_num_steps)
        image_list = [nca_images[-1 - k], nca_images[-1]] if len(nca_images) > k else [nca_images[0], nca_images[-1]]
        input_dict = {
            "nca_state": x,
            "generated_image_list": [(img + 1.0) / 2.0 for img in image_list],
        }
        batch_loss, summary = loss_fn(input_dict)

        optimizer.zero_grad()
        batch_loss.backward()
        for p in nca_model.parameters():
            if p.grad is not None:
                p.grad /= p.grad.norm() + 1e-8
        torch.nn.utils.clip_grad_norm_(nca_model.parameters(), args.max_grad_norm)
        optimizer.step()
        lr_scheduler.step()

        with torch.no_grad():
            nca_pool[batch_idx] = x.detach()
            if seed_injection:
                nca_pool[batch_idx[:1]] = x[:1].detach()

        loss_log.append(batch_loss.item())
        pbar.set_postfix(loss="%.4f" % batch_loss.item(), steps=step_n)

        if i % interval == 0:
            save_summary(summary, output_dir, i)
            plot_train_log(loss_log, output_dir)
            mem = torch.cuda.memory_allocated(DEVICE) / 1024 ** 3
            print("[%d] %.1fs  loss %.4f  gpu mem %.2f GB" % (i, time.time() - t0, batch_loss.item(), mem))
            torch.cuda.empty_cache()

        if i > 0 and i % args.save_every == 0:
            torch.save(nca_model.state_dict(), os.path.join(output_dir, "model_%05d.pth" % i))

    torch.save(nca_model.state_dict(), os.path.join(output_dir, "model.pth"))


def evaluate_motion(model, n_pairs=16):
    """Average cosine similarity between the MSOEnet flow of the trained NCA and
    the target field, measured on fresh rollouts (reported in the paper's tables)."""
    vf_loss = loss_fn.loss_mapper.get("vector_field_motion")
    if vf_loss is None:
        return None
    sims = []
    with torch.no_grad():
        x = model.seed(1, h=args.img_size[0], w=args.img_size[1])
        for _ in range(128):
            x, _ = model(x)
        for _ in range(n_pairs):
            x, img_a = model(x)
            for _ in range(int(args.nca_base_num_steps) - 1):
                x, img_b = model(x)
            flow = vf_loss.get_flow((img_a + 1) / 2, (img_b + 1) / 2)
            target = vf_loss.target_motion_vec.expand_as(flow)
            sims.append(torch.nn.functional.cosine_similarity(flow, target, dim=1).mean().item())
    score = float(np.mean(sims))
    with open(os.path.join(output_dir, "motion_score.json"), "w") as f:
        json.dump({"cosine": score, "n_pairs": n_pairs}, f)
    print("motion cosine similarity: %.3f" % score)
    return score


def synthesize_video():
    model = copy.deepcopy(nca_model).eval()
    fps = 30
    n_frames = int(args.video_length * fps)
    with VideoWriter(os.path.join(output_dir, "video.mp4"), fps=fps) as vid, torch.no_grad():
        h = w = 256
        x = model.seed(1, h=h, w=w)
        for k in range(int(args.nca_base_num_steps) * 8):
            x, _ = model(x)  # warm up
        for t in tqdm(range(n_frames), desc="video"):
            for k in range(int(args.nca_base_num_steps)):
                x, img = model(x)
            img = ((img + 1.0) / 2.0).clamp(0, 1)
            vid.add(img[0].permute(1, 2, 0).cpu().numpy())


if __name__ == "__main__":
    if args.video_only:
        nca_model.load_state_dict(torch.load(os.path.join(output_dir, "model.pth"), map_location=DEVICE))
    else:
        train()
    evaluate_motion(nca_model)
    synthesize_video()
