'''
Run a trained VOCA model (PyTorch port) on an audio file and write one FLAME mesh per frame,
optionally rendering a video.
'''

import os
import cv2
import pickle
import logging
import numpy as np
import torch
from psbody.mesh import Mesh

from config_parser import read_config
from utils.audio_handler import AudioHandler, load_wav
from utils.voca_model import VOCAModel
from utils.rendering import render_mesh_helper

logger = logging.getLogger('voca')


def process_audio(config, audio, sample_rate, device):
    tmp_audio = {'subj': {'seq': {'audio': audio, 'sample_rate': sample_rate}}}
    audio_handler = AudioHandler(config, device=device)
    return audio_handler.process(tmp_audio)['subj']['seq']['audio']


def output_sequence_meshes(sequence_vertices, template, out_path, uv_template_fname='', texture_img_fname=''):
    mesh_out_path = os.path.join(out_path, 'meshes')
    if not os.path.exists(mesh_out_path):
        os.makedirs(mesh_out_path)

    num_frames = sequence_vertices.shape[0]
    for i_frame in range(num_frames):
        out_fname = os.path.join(mesh_out_path, '%05d.obj' % i_frame)
        out_mesh = Mesh(sequence_vertices[i_frame], template.f)
        out_mesh.write_obj(out_fname)


def render_sequence(sequence_vertices, template, audio_fname, out_path):
    video_fname = os.path.join(out_path, 'video.mp4')
    writer = cv2.VideoWriter(video_fname + '.tmp.avi', cv2.VideoWriter_fourcc(*'MJPG'), 60, (800, 800), True)
    center = np.mean(sequence_vertices[0], axis=0)
    for i_frame in range(sequence_vertices.shape[0]):
        render_mesh = Mesh(sequence_vertices[i_frame], template.f)
        img = render_mesh_helper(render_mesh, center)
        writer.write(img)
    writer.release()
    cmd = 'ffmpeg -y -i %s -i %s -pix_fmt yuv420p -qscale 0 %s' % (audio_fname, video_fname + '.tmp.avi', video_fname)
    os.system(cmd)
    os.remove(video_fname + '.tmp.avi')


@torch.no_grad()
def inference(ckpt_fname, audio_fname, template_fname, condition_idx, out_path, render=True, fp16=False):
    torch.backends.cudnn.benchmark = True
    checkpoint_dir = os.path.dirname(os.path.dirname(ckpt_fname))
    with open(os.path.join(checkpoint_dir, 'config.pkl'), 'rb') as fp:
        config = pickle.load(fp)

    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    sample_rate, audio = load_wav(audio_fname)
    processed_audio = process_audio(config, audio, sample_rate, device)

    template = Mesh(filename=template_fname)
    model = VOCAModel(config)
    ckpt = torch.load(ckpt_fname, map_location='cuda:0')
    model.load_state_dict(ckpt['model'])
    model = model.to(device).eval()
    if fp16:
        model = model.half()

    num_frames = processed_audio.shape[0]
    speech = torch.from_numpy(processed_audio).float().to(device)
    condition = torch.full((num_frames,), condition_idx, dtype=torch.long, device=device)
    templates = torch.from_numpy(np.repeat(template.v[np.newaxis, :, :], num_frames, axis=0)).float().to(device)
    if fp16:
        speech, templates = speech.half(), templates.half()

    predicted_vertices, _ = model(speech, condition, templates)
    predicted_vertices = predicted_vertices.float().cpu().numpy()
    logger.info('predicted %d frames' % num_frames)

    output_sequence_meshes(predicted_vertices, template, out_path)
    if render:
        render_sequence(predicted_vertices, template, audio_fname, out_path)
    return predicted_vertices
