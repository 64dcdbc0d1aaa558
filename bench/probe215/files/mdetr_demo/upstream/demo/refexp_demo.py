"""
Quick visual demo of MDETR referring-expression comprehension / segmentation, converted from the colab notebook.

    python demo/refexp_demo.py --image http://images.cocodataset.org/val2017/000000281759.jpg \
        --caption "5 people each holding an umbrella"

Needs a CUDA GPU; the hub models are downloaded on first use (~700MB each).
"""
import argparse
import io
import time

import matplotlib.pyplot as plt
import numpy as np
import requests
import torch
import torch.nn.functional as F
import torchvision.transforms as T
from PIL import Image
from skimage.measure import find_contours
from matplotlib.patches import Polygon

torch.set_grad_enabled(False)

# standard PyTorch mean-std input image normalization
transform = T.Compose([
    T.Resize(800),
    T.ToTensor(),
    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
])

# colors for visualization
COLORS = [[0.000, 0.447, 0.741], [0.850, 0.325, 0.098], [0.929, 0.694, 0.125],
          [0.494, 0.184, 0.556], [0.466, 0.674, 0.188], [0.301, 0.745, 0.933]]


# for output bounding box post-processing
def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h),
         (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=1)


def rescale_bboxes(out_bbox, size):
    img_w, img_h = size
    b = box_cxcywh_to_xyxy(out_bbox)
    b = b * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)
    return b


def apply_mask(image, mask, color, alpha=0.5):
    """Apply the given mask to the image.
    """
    for c in range(3):
        image[:, :, c] = np.where(mask == 1,
                                  image[:, :, c] *
                                  (1 - alpha) + alpha * color[c] * 255,
                                  image[:, :, c])
    return image


def plot_results(pil_img, scores, boxes, labels, masks=None, out_file=None):
    plt.figure(figsize=(16, 10))
    np_image = np.array(pil_img)
    ax = plt.gca()
    colors = COLORS * 100
    if masks is None:
        masks = [None for _ in range(len(scores))]
    assert len(scores) == len(boxes) == len(labels) == len(masks)
    for s, (xmin, ymin, xmax, ymax), l, mask, c in zip(scores, boxes.tolist(), labels, masks, colors):
        ax.add_patch(plt.Rectangle((xmin, ymin), xmax - xmin, ymax - ymin,
                                   fill=False, color=c, linewidth=3))
        text = f'{l}: {s:0.2f}'
        ax.text(xmin, ymin, text, fontsize=15, bbox=dict(facecolor='white', alpha=0.8))

        if mask is None:
            continue
        np_image = apply_mask(np_image, mask, c)

        padded_mask = np.zeros((mask.shape[0] + 2, mask.shape[1] + 2), dtype=np.uint8)
        padded_mask[1:-1, 1:-1] = mask
        contours = find_contours(padded_mask, 0.5)
        for verts in contours:
            # Subtract the padding and flip (y, x) to (x, y)
            verts = np.fliplr(verts) - 1
            p = Polygon(verts, facecolor="none", edgecolor=c)
            ax.add_patch(p)

    plt.imshow(np_image)
    plt.axis('off')
    if out_file:
        plt.savefig(out_file, bbox_inches="tight")
    else:
        plt.show()


def load_image(path_or_url):
    if path_or_url.startswith("http"):
        return Image.open(io.BytesIO(requests.get(path_or_url, stream=True).content)).convert("RGB")
    return Image.open(path_or_url).convert("RGB")


def plot_inference(model, im, caption, out_file=None):
    # mean-std normalize the input image (batch-size: 1)
    img = transform(im).unsqueeze(0).cuda()

    # propagate through the model
    t0 = time.time()
    memory_cache = model(img, [caption], encode_and_save=True)
    outputs = model(img, [caption], encode_and_save=False, memory_cache=memory_cache)
    torch.cuda.synchronize()
    print(f"forward took {time.time() - t0:.3f}s on {torch.cuda.get_device_name(0)}")

    # keep only predictions with 0.7+ confidence
    probas = 1 - outputs['pred_logits'].softmax(-1)[0, :, -1].cpu()
    keep = (probas > 0.7).cpu()

    # convert boxes from [0; 1] to image scales
    bboxes_scaled = rescale_bboxes(outputs['pred_boxes'].cpu()[0, keep], im.size)

    # Extract the text spans predicted by each box
    positive_tokens = (outputs["pred_logits"].cpu()[0, keep].softmax(-1) > 0.1).nonzero().tolist()
    predicted_spans = {}
    for tok in positive_tokens:
        item, pos = tok
        if pos < 255:
            span = memory_cache["tokenized"].token_to_chars(0, pos)
            predicted_spans[item] = predicted_spans.get(item, "") + " " + caption[span.start:span.end]

    labels = [predicted_spans[k] if k in predicted_spans else "" for k in range(len(bboxes_scaled))]
    plot_results(im, probas[keep], bboxes_scaled, labels, out_file=out_file)


def plot_inference_segmentation(model, im, caption, out_file=None):
    # mean-std normalize the input image (batch-size: 1)
    img = transform(im).unsqueeze(0).cuda()

    # propagate through the model
    outputs = model(img, [caption])

    # keep only predictions with 0.9+ confidence
    probas = 1 - outputs['pred_logits'].softmax(-1)[0, :, -1].cpu()
    keep = (probas > 0.9).cpu()

    # convert boxes from [0; 1] to image scales
    bboxes_scaled = rescale_bboxes(outputs['pred_boxes'].cpu()[0, keep], im.size)

    # Interpolate masks to the correct size
    w, h = im.size
    masks = F.interpolate(outputs["pred_masks"], size=(h, w), mode="bilinear")
    masks = masks.cpu()[0, keep].sigmoid() > 0.5

    tokenized = model.detr.transformer.tokenizer.batch_encode_plus([caption], padding="longest", return_tensors="pt").to(img.device)

    # Extract the text spans predicted by each box
    positive_tokens = (outputs["pred_logits"].cpu()[0, keep].softmax(-1) > 0.1).nonzero().tolist()
    predicted_spans = {}
    for tok in positive_tokens:
        item, pos = tok
        if pos < 255:
            span = tokenized.token_to_chars(0, pos)
            predicted_spans[item] = predicted_spans.get(item, "") + " " + caption[span.start:span.end]

    labels = [predicted_spans[k] if k in predicted_spans else "" for k in range(len(bboxes_scaled))]
    plot_results(im, probas[keep], bboxes_scaled, labels, masks, out_file=out_file)
    return outputs


def main():
    parser = argparse.ArgumentParser("MDETR referring expression demo")
    parser.add_argument("--image", required=True, help="local path or URL")
    parser.add_argument("--caption", required=True)
    parser.add_argument("--task", default="refexp", choices=("refexp", "phrasecut"))
    parser.add_argument("--out", default=None, help="save the figure instead of showing it")
    args = parser.parse_args()

    im = load_image(args.image)
    if args.task == "refexp":
        model, postprocessor = torch.hub.load('ashkamath/mdetr:main', 'mdetr_efficientnetB3_refcocog',
                                              pretrained=True, return_postprocessor=True)
        model = model.cuda()
        model.eval()
        plot_inference(model, im, args.caption, out_file=args.out)
    else:
        model_pc = torch.hub.load('ashkamath/mdetr:main', 'mdetr_efficientnetB5_phrasecut',
                                  pretrained=True, return_postprocessor=False)
        model_pc = model_pc.cuda()
        model_pc.eval()
        plot_inference_segmentation(model_pc, im, args.caption, out_file=args.out)


if __name__ == "__main__":
    main()
