import numpy as np
import librosa
import os, argparse, pickle
from SelfTalk import SelfTalk
from transformers import Wav2Vec2Processor
import torch
import time
import cv2
import tempfile
from subprocess import call

os.environ['PYOPENGL_PLATFORM'] = 'egl'  # headless rendering on the GPU node
import pyrender
import trimesh
from psbody.mesh import Mesh

DEVICE = torch.device("cuda:0")


@torch.no_grad()
def test_model(args):
    if not os.path.exists(args.result_path):
        os.makedirs(args.result_path)

    # build model
    model = SelfTalk(args)
    model.load_state_dict(torch.load(os.path.join(args.dataset, '{}.pth'.format(args.model_name)),
                                     map_location=torch.device('cuda')))
    model = model.to(DEVICE)
    model.eval()

    template_file = os.path.join(args.dataset, args.template_path)
    with open(template_file, 'rb') as fin:
        templates = pickle.load(fin, encoding='latin1')

    temp = templates[args.subject]
    template = temp.reshape((-1))
    template = np.reshape(template, (-1, template.shape[0]))
    template = torch.FloatTensor(template).to(device=DEVICE)

    wav_path = args.wav_path
    test_name = os.path.basename(wav_path).split(".")[0]
    speech_array, sampling_rate = librosa.load(os.path.join(wav_path), sr=16000)
    processor = Wav2Vec2Processor.from_pretrained("facebook/wav2vec2-large-xlsr-53")
    audio_feature = np.squeeze(processor(speech_array, sampling_rate=16000).input_values)
    audio_feature = np.reshape(audio_feature, (-1, audio_feature.shape[0]))
    audio_feature = torch.FloatTensor(audio_feature).to(device=DEVICE)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    prediction, lip_features, logits = model.predict(audio_feature, template)
    end.record()
    torch.cuda.synchronize()
    print("inference time: {:.2f} ms for {} frames".format(start.elapsed_time(end), prediction.shape[1]))
    prediction = prediction.squeeze()  # (seq_len, V*3)
    np.save(os.path.join(args.result_path, test_name), prediction.detach().cpu().numpy())


def render_mesh_helper(args, mesh, t_center, rot=np.zeros(3), z_offset=0):
    if args.dataset == "BIWI":
        camera_params = {'c': np.array([400, 400]),
                         'k': np.array([-0.19816071, 0.92822711, 0, 0, 0]),
                         'f': np.array([4754.97941935 / 8, 4754.97941935 / 8])}
    else:
        camera_params = {'c': np.array([400, 400]),
                         'k': np.array([-0.19816071, 0.92822711, 0, 0, 0]),
                         'f': np.array([4754.97941935 / 2, 4754.97941935 / 2])}

    frustum = {'near': 0.01, 'far': 3.0, 'height': 800, 'width': 800}
    mesh_copy = Mesh(mesh.v, mesh.f)
    mesh_copy.v[:] = cv2.Rodrigues(rot)[0].dot((mesh_copy.v - t_center).T).T + t_center

    primitive_material = pyrender.material.MetallicRoughnessMaterial(
        alphaMode='BLEND', baseColorFactor=[0.3, 0.3, 0.3, 1.0], metallicFactor=0.8, roughnessFactor=0.8)
    tri_mesh = trimesh.Trimesh(vertices=mesh_copy.v, faces=mesh_copy.f)
    render_mesh = pyrender.Mesh.from_trimesh(tri_mesh, material=primitive_material, smooth=True)

    scene = pyrender.Scene(ambient_light=[.2, .2, .2], bg_color=[0, 0, 0] if args.background_black else [255, 255, 255])
    camera = pyrender.IntrinsicsCamera(fx=camera_params['f'][0], fy=camera_params['f'][1],
                                       cx=camera_params['c'][0], cy=camera_params['c'][1],
                                       znear=frustum['near'], zfar=frustum['far'])
    scene.add(render_mesh, pose=np.eye(4))
    camera_pose = np.eye(4)
    camera_pose[:3, 3] = np.array([0, 0, 1.0 - z_offset])
    scene.add(camera, pose=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]])

    angle = np.pi / 6.0
    pos = camera_pose[:3, 3]
    light = pyrender.DirectionalLight(color=np.array([1., 1., 1.]), intensity=2.0)
    light_pose = np.eye(4)
    light_pose[:3, 3] = pos
    scene.add(light, pose=light_pose.copy())
    for rvec in ([angle, 0, 0], [-angle, 0, 0], [0, -angle, 0], [0, angle, 0]):
        light_pose[:3, 3] = cv2.Rodrigues(np.array(rvec))[0].dot(pos)
        scene.add(light, pose=light_pose.copy())

    flags = pyrender.RenderFlags.SKIP_CULL_FACES
    try:
        r = pyrender.OffscreenRenderer(viewport_width=frustum['width'], viewport_height=frustum['height'])
        color, _ = r.render(scene, flags=flags)
    except Exception:
        print('pyrender: Failed rendering frame')
        color = np.zeros((frustum['height'], frustum['width'], 3), dtype='uint8')
    return color[..., ::-1]


def render_sequence(args):
    wav_path = args.wav_path
    test_name = os.path.basename(wav_path).split(".")[0]
    predicted_vertices_path = os.path.join(args.result_path, test_name + ".npy")
    template_file = os.path.join(args.dataset, "FLAME_sample.ply" if args.dataset == "vocaset" else "BIWI.ply")
    print("rendering: ", test_name)

    template = Mesh(filename=template_file)
    predicted_vertices = np.load(predicted_vertices_path)
    predicted_vertices = np.reshape(predicted_vertices, (-1, args.vertice_dim // 3, 3))

    output_path = args.output_path
    os.makedirs(output_path, exist_ok=True)
    num_frames = predicted_vertices.shape[0]
    tmp_video_file = tempfile.NamedTemporaryFile('w', suffix='.mp4', dir=output_path)
    writer = cv2.VideoWriter(tmp_video_file.name, cv2.VideoWriter_fourcc(*'mp4v'), args.fps, (800, 800), True)
    center = np.mean(predicted_vertices[0], axis=0)
    t0 = time.time()
    for i_frame in range(num_frames):
        render_mesh = Mesh(predicted_vertices[i_frame], template.f)
        pred_img = render_mesh_helper(args, render_mesh, center)
        writer.write(pred_img.astype(np.uint8))
    writer.release()
    print("rendered {} frames in {:.1f}s".format(num_frames, time.time() - t0))

    video_fname = os.path.join(output_path, test_name + '_' + args.subject + '.mp4')
    call(('ffmpeg -i {0} -pix_fmt yuv420p -qscale 0 {1}'.format(tmp_video_file.name, video_fname)).split())
    call(('ffmpeg -i {0} -i {1} -vcodec h264 -ac 2 -channel_layout stereo -qscale 0 {2}'.format(
        wav_path, video_fname, video_fname.replace('.mp4', '_audio.mp4'))).split())


def main():
    parser = argparse.ArgumentParser(description='SelfTalk demo (VOCASET)')
    parser.add_argument("--model_name", type=str, default="vocaset")
    parser.add_argument("--dataset", type=str, default="vocaset", help='vocaset or BIWI')
    parser.add_argument("--fps", type=float, default=30, help='frame rate - 30 for vocaset; 25 for BIWI')
    parser.add_argument("--feature_dim", type=int, default=512, help='512 for vocaset; 1024 for BIWI')
    parser.add_argument("--period", type=int, default=30, help='period in PPE - 30 for vocaset; 25 for BIWI')
    parser.add_argument("--vertice_dim", type=int, default=5023 * 3,
                        help='number of vertices - 5023*3 for vocaset; 23370*3 for BIWI')
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--train_subjects", type=str, default="FaceTalk_170728_03272_TA"
                                                               " FaceTalk_170904_00128_TA FaceTalk_170725_00137_TA FaceTalk_170915_00223_TA"
                                                               " FaceTalk_170811_03274_TA FaceTalk_170913_03279_TA"
                                                               " FaceTalk_170904_03276_TA FaceTalk_170912_03278_TA")
    parser.add_argument("--output_path", type=str, default="demo/output", help='path of the rendered video sequence')
    parser.add_argument("--wav_path", type=str, default="demo/wav/test.wav", help='path of the input audio signal')
    parser.add_argument("--result_path", type=str, default="demo/result", help='path of the predictions')
    parser.add_argument("--subject", type=str, default="FaceTalk_170731_00024_TA",
                        help='select a subject from test_subjects or train_subjects')
    parser.add_argument("--background_black", type=bool, default=True, help='whether to use black background')
    parser.add_argument("--template_path", type=str, default="templates.pkl", help='path of the personalized templates')
    args = parser.parse_args()

    test_model(args)
    render_sequence(args)


if __name__ == "__main__":
    main()
