'''
Offscreen rendering of FLAME meshes with pyrender (VOCA, PyTorch port).
On headless GPU servers we render through EGL; set PYOPENGL_PLATFORM=osmesa for CPU-only machines.
'''

import os
import cv2
import tempfile
import numpy as np
from subprocess import call

if 'PYOPENGL_PLATFORM' not in os.environ:
    os.environ['PYOPENGL_PLATFORM'] = 'egl'
import pyrender
import trimesh
from psbody.mesh import Mesh


def get_unit_factor(unit):
    if unit == 'mm':
        return 1000.0
    elif unit == 'cm':
        return 100.0
    elif unit == 'm':
        return 1.0
    else:
        raise ValueError('Unit not supported')


def render_mesh_helper(mesh, t_center, rot=np.zeros(3), tex_img=None, v_colors=None, errors=None, error_unit='m',
                       min_dist_in_mm=0.0, max_dist_in_mm=3.0, z_offset=0):
    camera_params = {'c': np.array([400, 400]),
                     'k': np.array([-0.19816071, 0.92822711, 0, 0, 0]),
                     'f': np.array([4754.97941935 / 2, 4754.97941935 / 2])}

    frustum = {'near': 0.01, 'far': 3.0, 'height': 800, 'width': 800}

    mesh_copy = Mesh(mesh.v, mesh.f)
    mesh_copy.v[:] = cv2.Rodrigues(rot)[0].dot((mesh_copy.v - t_center).T).T + t_center

    intensity = 2.0
    rgb_per_v = None
    if errors is not None:
        unit_factor = get_unit_factor('mm') / get_unit_factor(error_unit)
        errors = unit_factor * errors
        norm = (np.clip(errors, min_dist_in_mm, max_dist_in_mm) - min_dist_in_mm) / (max_dist_in_mm - min_dist_in_mm)
        rgb_per_v = np.stack([norm, 1.0 - norm, np.zeros_like(norm)], axis=-1)
    elif v_colors is not None:
        rgb_per_v = v_colors

    primitive_material = pyrender.material.MetallicRoughnessMaterial(
        alphaMode='BLEND',
        baseColorFactor=[0.3, 0.3, 0.3, 1.0],
        metallicFactor=0.8,
        roughnessFactor=0.8
    )

    tri_mesh = trimesh.Trimesh(vertices=mesh_copy.v, faces=mesh_copy.f, vertex_colors=rgb_per_v)
    render_mesh = pyrender.Mesh.from_trimesh(tri_mesh, material=primitive_material, smooth=True)

    scene = pyrender.Scene(ambient_light=[.2, .2, .2], bg_color=[255, 255, 255])
    camera = pyrender.IntrinsicsCamera(fx=camera_params['f'][0],
                                       fy=camera_params['f'][1],
                                       cx=camera_params['c'][0],
                                       cy=camera_params['c'][1],
                                       znear=frustum['near'],
                                       zfar=frustum['far'])

    scene.add(render_mesh, pose=np.eye(4))

    camera_pose = np.eye(4)
    camera_pose[:3, 3] = np.array([0, 0, 1.0 - z_offset])
    scene.add(camera, pose=[[1, 0, 0, 0],
                            [0, 1, 0, 0],
                            [0, 0, 1, 1],
                            [0, 0, 0, 1]])

    angle = np.pi / 6.0
    pos = camera_pose[:3, 3]
    light_color = np.array([1., 1., 1.])
    light = pyrender.DirectionalLight(color=light_color, intensity=intensity)

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
        r.delete()
    except Exception:
        print('pyrender: Failed rendering frame')
        color = np.zeros((frustum['height'], frustum['width'], 3), dtype='uint8')

    return color[..., ::-1]


def render_sequence_meshes(audio, sequence_vertices, out_path, name, template_fname='./template/FLAME_sample.ply'):
    template = Mesh(filename=template_fname)
    num_frames = sequence_vertices.shape[0]
    tmp_audio_file = tempfile.NamedTemporaryFile('w', suffix='.wav', dir=out_path)
    if audio is not None:
        from scipy.io import wavfile
        wavfile.write(tmp_audio_file.name, audio['sample_rate'], audio['audio'])
    tmp_video_file = tempfile.NamedTemporaryFile('w', suffix='.mp4', dir=out_path)
    writer = cv2.VideoWriter(tmp_video_file.name, cv2.VideoWriter_fourcc(*'mp4v'), 60, (800, 800), True)
    center = np.mean(sequence_vertices[0], axis=0)
    for i_frame in range(num_frames):
        render_mesh = Mesh(sequence_vertices[i_frame], template.f)
        img = render_mesh_helper(render_mesh, center)
        writer.write(img)
    writer.release()

    video_fname = os.path.join(out_path, name + '.mp4')
    cmd = ('ffmpeg' + ' -i {0} -i {1} -pix_fmt yuv420p -qscale 0 {2}'.format(
        tmp_audio_file.name, tmp_video_file.name, video_fname)).split()
    call(cmd)
