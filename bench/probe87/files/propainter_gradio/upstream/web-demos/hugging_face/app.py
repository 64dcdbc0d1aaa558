import sys
sys.path.append("../../")

import os
import json
import time
import psutil
import argparse

import cv2
import torch
import torchvision
import numpy as np
import gradio as gr

from tools.painter import mask_painter
from track_anything import TrackingAnything

from model.misc import get_device
from utils.download_util import load_file_from_url


def parse_augment():
    parser = argparse.ArgumentParser()
    parser.add_argument('--device', type=str, default=None)
    parser.add_argument('--sam_model_type', type=str, default="vit_h")
    parser.add_argument('--port', type=int, default=8000, help="only useful when running gradio applications")
    parser.add_argument('--mask_save', default=False)
    args = parser.parse_args()

    if not args.device:
        args.device = str(get_device())

    return args


# convert points input to prompt state
def get_prompt(click_state, click_input):
    inputs = json.loads(click_input)
    points = click_state[0]
    labels = click_state[1]
    for input in inputs:
        points.append(input[:2])
        labels.append(input[2])
    click_state[0] = points
    click_state[1] = labels
    prompt = {
        "prompt_type": ["click"],
        "input_point": click_state[0],
        "input_label": click_state[1],
        "multimask_output": "True",
    }
    return prompt


def get_frames_from_video(video_input, video_state):
    """
    Args:
        video_path:str
        timestamp:float64
    Return
        [[0:nearest_frame], [nearest_frame:], nearest_frame]
    """
    video_path = video_input
    frames = []
    user_name = time.time()
    status_ok = True
    operation_log = [("[Must Do]", "Click image"), (": Video uploaded! Try to click the image shown in step2 to add masks.\n", None)]
    try:
        cap = cv2.VideoCapture(video_path)
        fps = cap.get(cv2.CAP_PROP_FPS)
        length = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))

        if length >= 500:
            operation_log = [("You uploaded a video with more than 500 frames. Stop the video extraction. Kindly lower the video frame rate to a value below 500. We highly recommend deploying the demo locally for long video processing.", "Error")]
            ret, frame = cap.read()
            if ret == True:
                original_h, original_w = frame.shape[:2]
                frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
            status_ok = False
        else:
            while cap.isOpened():
                ret, frame = cap.read()
                if ret == True:
                    # resize input image
                    original_h, original_w = frame.shape[:2]
                    frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
                else:
                    break
    except (OSError, TypeError, ValueError, KeyError, SyntaxError) as e:
        status_ok = False
        print("read_frame_source:{} error. {}\n".format(video_path, str(e)))

    # resize video if too large
    if frames and max(frames[0].shape[:2]) > 1280:
        scale = 1280 / max(frames[0].shape[:2])
        frames = [cv2.resize(f, (int(f.shape[1] * scale), int(f.shape[0] * scale))) for f in frames]

    # initialize video_state
    video_state = {
        "user_name": user_name,
        "video_name": os.path.split(video_path)[-1],
        "origin_images": frames,
        "painted_images": frames.copy(),
        "masks": [np.zeros((original_h, original_w), np.uint8)] * len(frames),
        "logits": [None] * len(frames),
        "select_frame_number": 0,
        "fps": fps,
    }
    video_info = "Video Name: {},\nFPS: {},\nTotal Frames: {},\nImage Size:{}".format(
        video_state["video_name"], round(video_state["fps"], 0), length, (original_w, original_h))
    model.samcontroler.sam_controler.reset_image()
    model.samcontroler.sam_controler.set_image(video_state["origin_images"][0])
    return video_state, video_info, video_state["origin_images"][0], \
        gr.update(visible=status_ok), operation_log


# use sam to get the mask
def sam_refine(video_state, point_prompt, click_state, interactive_state, evt: gr.SelectData):
    """
    Args:
        template_frame: PIL.Image
        point_prompt: flag for positive or negative button click
        click_state: [[points], [labels]]
    """
    if point_prompt == "Positive":
        coordinate = "[[{},{},1]]".format(evt.index[0], evt.index[1])
        interactive_state["positive_click_times"] += 1
    else:
        coordinate = "[[{},{},0]]".format(evt.index[0], evt.index[1])
        interactive_state["negative_click_times"] += 1

    # prompt for sam model
    model.samcontroler.sam_controler.reset_image()
    model.samcontroler.sam_controler.set_image(video_state["origin_images"][video_state["select_frame_number"]])
    prompt = get_prompt(click_state=click_state, click_input=coordinate)

    mask, logit, painted_image = model.first_frame_click(
        image=video_state["origin_images"][video_state["select_frame_number"]],
        points=np.array(prompt["input_point"]),
        labels=np.array(prompt["input_label"]),
        multimask=prompt["multimask_output"],
    )
    video_state["masks"][video_state["select_frame_number"]] = mask
    video_state["logits"][video_state["select_frame_number"]] = logit
    video_state["painted_images"][video_state["select_frame_number"]] = painted_image

    operation_log = [("[Must Do]", "Add mask"), (": add the current displayed mask for video segmentation.\n", None)]
    return painted_image, video_state, interactive_state, operation_log


# tracking vos
def vos_tracking_video(video_state, interactive_state, mask_dropdown):
    operation_log = [("", ""), ("Tracking finished! Try to click the Inpainting button to get the inpainting result.", "Normal")]
    model.cutie.clear_memory()
    if interactive_state["track_end_number"]:
        following_frames = video_state["origin_images"][video_state["select_frame_number"]:interactive_state["track_end_number"]]
    else:
        following_frames = video_state["origin_images"][video_state["select_frame_number"]:]

    template_mask = video_state["masks"][video_state["select_frame_number"]]
    fps = video_state["fps"]

    # operation error
    if len(np.unique(template_mask)) == 1:
        template_mask[0][0] = 1
        operation_log = [("Please add at least one mask to track by clicking the image in step2.", "Error"), ("", "")]
    masks, logits, painted_images = model.generator(images=following_frames, template_mask=template_mask)
    # clear GPU memory
    model.cutie.clear_memory()
    torch.cuda.empty_cache()

    video_state["masks"][video_state["select_frame_number"]:] = masks
    video_state["logits"][video_state["select_frame_number"]:] = logits
    video_state["painted_images"][video_state["select_frame_number"]:] = painted_images

    video_output = generate_video_from_frames(video_state["painted_images"], output_path="./result/track/{}".format(video_state["video_name"]), fps=fps)
    interactive_state["inference_times"] += 1

    print("Tracking finished, {} frames, peak GPU memory {:.2f} GB".format(
        len(masks), torch.cuda.max_memory_allocated() / 1024 ** 3))
    return video_output, video_state, interactive_state, operation_log


# inpaint
def inpaint_video(video_state, resize_ratio_number, dilate_radius_number, raft_iter_number, subvideo_length_number,
                  neighbor_length_number, ref_stride_number, mask_dropdown):
    operation_log = [("", ""), ("Inpainting finished!", "Normal")]

    frames = np.asarray(video_state["origin_images"])
    fps = video_state["fps"]
    inpaint_masks = np.asarray(video_state["masks"])
    if len(mask_dropdown) == 0:
        mask_dropdown = ["mask_001"]
    mask_dropdown.sort()
    # convert the mask to 0/1 inpaint mask
    inpaint_mask_numbers = [int(mask_dropdown[i].split("_")[1]) for i in range(len(mask_dropdown))]
    unique_masks = np.unique(inpaint_masks)
    num_masks = len(unique_masks) - 1
    for i in range(1, num_masks + 1):
        if i in inpaint_mask_numbers:
            continue
        inpaint_masks[inpaint_masks == i] = 0

    # inpaint for videos
    inpainted_frames = model.baseinpainter.inpaint(frames,
                                                   inpaint_masks,
                                                   ratio=resize_ratio_number,
                                                   dilate_radius=dilate_radius_number,
                                                   raft_iter=raft_iter_number,
                                                   subvideo_length=subvideo_length_number,
                                                   neighbor_length=neighbor_length_number,
                                                   ref_stride=ref_stride_number)  # numpy array, T, H, W, 3

    video_output = generate_video_from_frames(inpainted_frames, output_path="./result/inpaint/{}".format(video_state["video_name"]), fps=fps)
    torch.cuda.empty_cache()  # release ProPainter activations between requests
    return video_output, operation_log


# generate video after vos inference
def generate_video_from_frames(frames, output_path, fps=30):
    """
    Generates a video from a list of frames.

    Args:
        frames (list of numpy arrays): The frames to include in the video.
        output_path (str): The path to save the generated video.
        fps (int, optional): The frame rate of the output video. Defaults to 30.
    """
    frames = torch.from_numpy(np.asarray(frames))
    if not os.path.exists(os.path.dirname(output_path)):
        os.makedirs(os.path.dirname(output_path))
    torchvision.io.write_video(output_path, frames, fps=fps, video_codec="libx264")
    return output_path


def restart():
    operation_log = [("", ""), ("Try to upload your video and click the Get video info button to get started!", "Normal")]
    return {
        "user_name": "",
        "video_name": "",
        "origin_images": None,
        "painted_images": None,
        "masks": None,
        "inpaint_masks": None,
        "logits": None,
        "select_frame_number": 0,
        "fps": 30
    }, {
        "inference_times": 0,
        "negative_click_times": 0,
        "positive_click_times": 0,
        "mask_save": args.mask_save,
        "multi_mask": {
            "mask_names": [],
            "masks": []
        },
        "track_end_number": None,
    }, [[], []], None, None, None, \
        gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), \
        gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), \
        gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), "", \
        gr.update(visible=True, value=operation_log), gr.update(visible=False, value=operation_log)


# args, defined in track_anything.py
args = parse_augment()
pretrain_model_url = 'https://github.com/sczhou/ProPainter/releases/download/v0.1.0/'
sam_checkpoint_url_dict = {
    'vit_h': "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_h_4b8939.pth",
    'vit_l': "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_l_0b3195.pth",
    'vit_b': "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_b_01ec64.pth"
}
checkpoint_fodler = os.path.join('..', '..', 'weights')

sam_checkpoint = load_file_from_url(sam_checkpoint_url_dict[args.sam_model_type], checkpoint_fodler)
cutie_checkpoint = load_file_from_url(os.path.join(pretrain_model_url, 'cutie-base-mega.pth'), checkpoint_fodler)
propainter_checkpoint = load_file_from_url(os.path.join(pretrain_model_url, 'ProPainter.pth'), checkpoint_fodler)
raft_checkpoint = load_file_from_url(os.path.join(pretrain_model_url, 'raft-things.pth'), checkpoint_fodler)
flow_completion_checkpoint = load_file_from_url(os.path.join(pretrain_model_url, 'recurrent_flow_completion.pth'), checkpoint_fodler)

# initialize sam, cutie, propainter models
# On the Space the A10G is shared by several workers; cap what this one may take.
if torch.cuda.is_available():
    torch.cuda.set_per_process_memory_fraction(0.9, 0)
model = TrackingAnything(sam_checkpoint, cutie_checkpoint, propainter_checkpoint, raft_checkpoint, flow_completion_checkpoint, args)

title = r"""<h1 align="center">ProPainter: Improving Propagation and Transformer for Video Inpainting</h1>"""

description = r"""
<center><img src='https://github.com/sczhou/ProPainter/raw/main/assets/propainter_logo1_glow.png' alt='Propainter logo' style="width:180px; margin-bottom:20px"></center>
<b>Official Gradio demo</b> for <a href='https://github.com/sczhou/ProPainter' target='_blank'><b>Improving Propagation and Transformer for Video Inpainting (ICCV 2023)</b></a>.<br>
🔥 Propainter is a robust inpainting algorithm.<br>
🤗 Try to drop your video, add the masks and get the the inpainting results!<br>
"""

with gr.Blocks(theme=gr.themes.Monochrome()) as iface:
    click_state = gr.State([[], []])
    interactive_state = gr.State({
        "inference_times": 0,
        "negative_click_times": 0,
        "positive_click_times": 0,
        "mask_save": args.mask_save,
        "multi_mask": {"mask_names": [], "masks": []},
        "track_end_number": None,
    })
    video_state = gr.State({
        "user_name": "",
        "video_name": "",
        "origin_images": None,
        "painted_images": None,
        "masks": None,
        "inpaint_masks": None,
        "logits": None,
        "select_frame_number": 0,
        "fps": 30
    })
    gr.Markdown(title)
    gr.Markdown(description)

    with gr.Column():
        video_input = gr.Video(elem_classes="video")
        extract_frames_button = gr.Button(value="Get video info", interactive=True, variant="primary")
        video_info = gr.Textbox(label="Video Info")
        template_frame = gr.Image(type="pil", interactive=True, elem_id="template_frame")
        point_prompt = gr.Radio(choices=["Positive", "Negative"], value="Positive", label="Point prompt", interactive=True)
        tracking_video_predict_button = gr.Button(value="Tracking", variant="primary")
        video_output = gr.Video()
        inpaint_video_predict_button = gr.Button(value="Inpainting", variant="primary")
        resize_ratio_number = gr.Slider(label='Resize ratio', minimum=0.01, maximum=1.0, step=0.01, value=1.0)
        dilate_radius_number = gr.Slider(label='Mask dilation', minimum=0, maximum=10, step=1, value=8)
        raft_iter_number = gr.Slider(label='RAFT iterations', minimum=1, maximum=50, step=1, value=20)
        subvideo_length_number = gr.Slider(label='Sub-video length', minimum=40, maximum=200, step=1, value=80)
        neighbor_length_number = gr.Slider(label='Neighbor length', minimum=5, maximum=20, step=1, value=10)
        ref_stride_number = gr.Slider(label='Ref stride', minimum=1, maximum=50, step=1, value=10)
        mask_dropdown = gr.Dropdown(multiselect=True, value=[], label="Mask selection", info=".", visible=True)
        run_status = gr.HighlightedText(value=[("", "")])

    extract_frames_button.click(
        fn=get_frames_from_video,
        inputs=[video_input, video_state],
        outputs=[video_state, video_info, template_frame, tracking_video_predict_button, run_status],
    )
    template_frame.select(
        fn=sam_refine,
        inputs=[video_state, point_prompt, click_state, interactive_state],
        outputs=[template_frame, video_state, interactive_state, run_status],
    )
    tracking_video_predict_button.click(
        fn=vos_tracking_video,
        inputs=[video_state, interactive_state, mask_dropdown],
        outputs=[video_output, video_state, interactive_state, run_status],
    )
    inpaint_video_predict_button.click(
        fn=inpaint_video,
        inputs=[video_state, resize_ratio_number, dilate_radius_number, raft_iter_number, subvideo_length_number,
                neighbor_length_number, ref_stride_number, mask_dropdown],
        outputs=[video_output, run_status],
    )

iface.queue(concurrency_count=1)
iface.launch(debug=True, server_name="0.0.0.0", server_port=args.port)
