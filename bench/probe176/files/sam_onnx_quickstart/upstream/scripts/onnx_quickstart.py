"""Export the SAM prompt encoder + mask decoder to ONNX and run it with onnxruntime.

Script version of the ``onnx_model_example`` notebook.  The heavy ViT image encoder
stays in PyTorch and runs on the GPU; only the light-weight decoder is exported, so
that it can run in the browser or on CPU at interactive speed.

    python scripts/onnx_quickstart.py --checkpoint sam_vit_h_4b8939.pth \
        --model-type vit_h --image notebooks/images/truck.jpg --out sam_onnx_example.onnx
"""
import argparse
import os
import time
import warnings

import cv2
import numpy as np
import torch

from segment_anything import SamPredictor, sam_model_registry
from segment_anything.utils.onnx import SamOnnxModel

try:
    import onnxruntime  # type: ignore
    from onnxruntime.quantization import QuantType  # type: ignore
    from onnxruntime.quantization.quantize import quantize_dynamic  # type: ignore

    onnxruntime_exists = True
except ImportError:
    onnxruntime_exists = False

# The image encoder is ~600M params for vit_h: keep it on the GPU.
device = "cuda"


def parse_args():
    parser = argparse.ArgumentParser(description="SAM ONNX quickstart")
    parser.add_argument("--checkpoint", type=str, required=True)
    parser.add_argument("--model-type", type=str, default="vit_h")
    parser.add_argument("--image", type=str, required=True)
    parser.add_argument("--out", type=str, default="sam_onnx_example.onnx")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--quantize", action="store_true")
    parser.add_argument("--point", type=int, nargs=2, default=[500, 375])
    parser.add_argument("--box", type=int, nargs=4, default=None)
    return parser.parse_args()


def export_decoder(sam, onnx_model_path, opset):
    """Export runs on CPU tensors only; the exported graph is device independent."""
    onnx_model = SamOnnxModel(sam, return_single_mask=True)

    dynamic_axes = {
        "point_coords": {1: "num_points"},
        "point_labels": {1: "num_points"},
    }

    embed_dim = sam.prompt_encoder.embed_dim
    embed_size = sam.prompt_encoder.image_embedding_size
    mask_input_size = [4 * x for x in embed_size]
    dummy_inputs = {
        "image_embeddings": torch.randn(1, embed_dim, *embed_size, dtype=torch.float),
        "point_coords": torch.randint(low=0, high=1024, size=(1, 5, 2), dtype=torch.float),
        "point_labels": torch.randint(low=0, high=4, size=(1, 5), dtype=torch.float),
        "mask_input": torch.randn(1, 1, *mask_input_size, dtype=torch.float),
        "has_mask_input": torch.tensor([1], dtype=torch.float),
        "orig_im_size": torch.tensor([1500, 2250], dtype=torch.float),
    }
    output_names = ["masks", "iou_predictions", "low_res_masks"]

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", category=UserWarning)
        with open(onnx_model_path, "wb") as f:
            torch.onnx.export(
                onnx_model,
                tuple(dummy_inputs.values()),
                f,
                export_params=True,
                verbose=False,
                opset_version=opset,
                do_constant_folding=True,
                input_names=list(dummy_inputs.keys()),
                output_names=output_names,
                dynamic_axes=dynamic_axes,
            )
    return onnx_model_path


def quantize(onnx_model_path):
    quantized_path = onnx_model_path.replace(".onnx", "_quantized.onnx")
    quantize_dynamic(
        model_input=onnx_model_path,
        model_output=quantized_path,
        optimize_model=True,
        per_channel=False,
        reduce_range=False,
        weight_type=QuantType.QUInt8,
    )
    return quantized_path


def build_onnx_inputs(predictor, image, image_embedding, point, box):
    input_point = np.array([point])
    input_label = np.array([1])
    if box is not None:
        input_box = np.array(box)
        input_point = np.concatenate([input_point, input_box.reshape(2, 2)], axis=0)
        input_label = np.concatenate([input_label, np.array([2, 3])], axis=0)
    else:
        # no box: add the padding point the decoder expects
        input_point = np.concatenate([input_point, np.array([[0.0, 0.0]])], axis=0)
        input_label = np.concatenate([input_label, np.array([-1])], axis=0)

    onnx_coord = input_point[None, :, :]
    onnx_label = input_label[None, :].astype(np.float32)
    onnx_coord = predictor.transform.apply_coords(onnx_coord, image.shape[:2]).astype(np.float32)

    onnx_mask_input = np.zeros((1, 1, 256, 256), dtype=np.float32)
    onnx_has_mask_input = np.zeros(1, dtype=np.float32)

    return {
        "image_embeddings": image_embedding,
        "point_coords": onnx_coord,
        "point_labels": onnx_label,
        "mask_input": onnx_mask_input,
        "has_mask_input": onnx_has_mask_input,
        "orig_im_size": np.array(image.shape[:2], dtype=np.float32),
    }


def main():
    args = parse_args()
    if not onnxruntime_exists:
        raise SystemExit("onnxruntime is required: pip install onnxruntime onnx")

    sam = sam_model_registry[args.model_type](checkpoint=args.checkpoint)

    onnx_path = export_decoder(sam, args.out, args.opset)
    print(f"Exported decoder to {onnx_path}")
    if args.quantize:
        onnx_path = quantize(onnx_path)
        print(f"Quantized decoder written to {onnx_path}")

    # onnxruntime picks the first available provider; GPU builds use CUDA here.
    ort_session = onnxruntime.InferenceSession(
        onnx_path, providers=["CUDAExecutionProvider", "CPUExecutionProvider"]
    )

    image = cv2.imread(args.image)
    image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)

    sam.to(device=device)
    predictor = SamPredictor(sam)

    t0 = time.time()
    predictor.set_image(image)
    image_embedding = predictor.get_image_embedding().cpu().numpy()
    print(f"image embedding {image_embedding.shape} in {time.time() - t0:.3f}s")

    ort_inputs = build_onnx_inputs(predictor, image, image_embedding, args.point, args.box)
    t0 = time.time()
    masks, scores, low_res_logits = ort_session.run(None, ort_inputs)
    masks = masks > predictor.model.mask_threshold
    print(f"decoder: {masks.shape} masks, score {float(scores.max()):.3f}, {time.time() - t0:.3f}s")

    out_png = os.path.splitext(args.out)[0] + "_mask.png"
    cv2.imwrite(out_png, (masks[0, 0].astype(np.uint8) * 255))
    print(f"mask written to {out_png}")


if __name__ == "__main__":
    main()
