import argparse
import os
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
from tqdm import tqdm

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

from hmr2.configs import CACHE_DIR_4DHUMANS
from hmr2.datasets.vitdet_dataset import DEFAULT_MEAN, DEFAULT_STD, ViTDetDataset
from hmr2.models import DEFAULT_CHECKPOINT, download_models, load_hmr2
from hmr2.utils import recursive_to
from hmr2.utils.renderer import Renderer, cam_crop_to_full

LIGHT_BLUE = (0.65098039, 0.74117647, 0.85882353)


def get_args():
    parser = argparse.ArgumentParser(description="HMR2 demo code")
    parser.add_argument("--checkpoint", type=str, default=DEFAULT_CHECKPOINT, help="Path to pretrained model checkpoint")
    parser.add_argument("--reference_imgs_folder", type=str, default="", help="Folder with reference images")
    parser.add_argument("--driving_path", type=str, default="", help="Folder with driving video frames")
    parser.add_argument("--figure_scale", type=int, default=None, help="scale factor for the rendered smpl figure")
    parser.add_argument("--detector", type=str, default="vitdet", choices=["vitdet", "regnety"], help="Using regnety improves runtime")
    parser.add_argument("--side_view", dest="side_view", action="store_true", default=False, help="If set, render side view also")
    parser.add_argument("--batch_size", type=int, default=1, help="Batch size for inference/fitting")
    parser.add_argument("--device", type=int, default=0, help="GPU id")
    args = parser.parse_args()
    return args


def load_detector(args):
    # Load detector
    import hmr2
    from detectron2.config import LazyConfig
    from hmr2.utils.utils_detectron2 import DefaultPredictor_Lazy

    if args.detector == "vitdet":
        cfg_path = Path(hmr2.__file__).parent / "configs" / "cascade_mask_rcnn_vitdet_h_75ep.py"
        detectron2_cfg = LazyConfig.load(str(cfg_path))
        detectron2_cfg.train.init_checkpoint = (
            "https://dl.fbaipublicfiles.com/detectron2/ViTDet/COCO/cascade_mask_rcnn_vitdet_h/f328730692/model_final_f05665.pkl"
        )
        for i in range(3):
            detectron2_cfg.model.roi_heads.box_predictors[i].test_score_thresh = 0.25
        detector = DefaultPredictor_Lazy(detectron2_cfg)
    elif args.detector == "regnety":
        from detectron2 import model_zoo

        detectron2_cfg = model_zoo.get_config("new_baselines/mask_rcnn_regnety_4gf_dds_FPN_400ep_LSJ.py", trained=True)
        detectron2_cfg.model.roi_heads.box_predictor.test_score_thresh = 0.5
        detectron2_cfg.model.roi_heads.box_predictor.test_nms_thresh = 0.4
        detector = DefaultPredictor_Lazy(detectron2_cfg)
    return detector


def process_image(img_cv2, model, model_cfg, detector, renderer, device, figure_scale=None):
    det_out = detector(img_cv2)
    det_instances = det_out["instances"]
    valid_idx = (det_instances.pred_classes == 0) & (det_instances.scores > 0.5)
    boxes = det_instances.pred_boxes.tensor[valid_idx].cpu().numpy()

    # Run HMR2.0 on all detected humans
    dataset = ViTDetDataset(model_cfg, img_cv2, boxes)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, num_workers=0)

    all_verts = []
    all_cam_t = []
    results = []
    for batch in dataloader:
        batch = recursive_to(batch, device)
        with torch.no_grad():
            out = model(batch)

        pred_cam = out["pred_cam"]
        box_center = batch["box_center"].float()
        box_size = batch["box_size"].float()
        img_size = batch["img_size"].float()
        scaled_focal_length = model_cfg.EXTRA.FOCAL_LENGTH / model_cfg.MODEL.IMAGE_SIZE * img_size.max()
        pred_cam_t_full = cam_crop_to_full(pred_cam, box_center, box_size, img_size, scaled_focal_length).detach().cpu().numpy()

        batch_size = batch["img"].shape[0]
        for n in range(batch_size):
            verts = out["pred_vertices"][n].detach().cpu().numpy()
            cam_t = pred_cam_t_full[n]
            all_verts.append(verts)
            all_cam_t.append(cam_t)
            results.append(
                {
                    "smpl": {k: v[n].detach().cpu().numpy() for k, v in out["pred_smpl_params"].items()},
                    "camera": {
                        "pred_cam": pred_cam[n].detach().cpu().numpy(),
                        "pred_cam_t_full": cam_t,
                        "scaled_focal_length": float(scaled_focal_length),
                    },
                    "render_res": img_size[n].cpu().numpy(),
                }
            )

    # Render front view
    if len(all_verts) > 0:
        misc_args = dict(mesh_base_color=LIGHT_BLUE, scene_bg_color=(1, 1, 1), focal_length=scaled_focal_length)
        cam_view = renderer.render_rgba_multiple(all_verts, cam_t=all_cam_t, render_res=img_size[0], **misc_args)
        # Overlay image
        input_img = img_cv2.astype(np.float32)[:, :, ::-1] / 255.0
        input_img = np.concatenate([input_img, np.ones_like(input_img[:, :, :1])], axis=2)
        input_img_overlay = input_img[:, :, :3] * (1 - cam_view[:, :, 3:]) + cam_view[:, :, :3] * cam_view[:, :, 3:]
        return 255 * input_img_overlay[:, :, ::-1], results
    return None, results


def main():
    args = get_args()

    # Download and load checkpoints
    download_models(CACHE_DIR_4DHUMANS)
    model, model_cfg = load_hmr2(args.checkpoint)

    # Setup HMR2.0 model
    device = torch.device(f"cuda:{args.device}") if torch.cuda.is_available() else torch.device("cpu")
    model = model.to(device)
    model.eval()

    detector = load_detector(args)

    # Setup the renderer
    renderer = Renderer(model_cfg, faces=model.smpl.faces)

    for folder in [args.reference_imgs_folder, args.driving_path]:
        if folder == "":
            continue
        input_folder = Path(folder)
        output_folder = input_folder.parent / "smpl_results"
        visual_folder = input_folder.parent / "visualized_imgs"
        mask_folder = input_folder.parent / "mask"
        output_folder.mkdir(parents=True, exist_ok=True)
        visual_folder.mkdir(parents=True, exist_ok=True)
        mask_folder.mkdir(parents=True, exist_ok=True)

        img_paths = sorted([p for p in input_folder.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg")])
        for img_path in tqdm(img_paths, desc=f"smpl {input_folder.name}"):
            img_cv2 = cv2.imread(str(img_path))
            overlay, results = process_image(img_cv2, model, model_cfg, detector, renderer, device, args.figure_scale)
            if overlay is not None:
                cv2.imwrite(str(visual_folder / img_path.name), overlay)
                mask = (overlay.sum(axis=-1) < 255 * 3 - 1).astype(np.uint8) * 255
                cv2.imwrite(str(mask_folder / img_path.name), mask)
            np.save(str(output_folder / img_path.with_suffix(".npy").name), results, allow_pickle=True)


if __name__ == "__main__":
    main()
