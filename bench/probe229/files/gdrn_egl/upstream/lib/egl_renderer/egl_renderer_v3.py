"""Offscreen EGL renderer (headless) with optional CUDA-GL interop.

modified from the iGibson mesh renderer / PoseCNN-PyTorch ycb_renderer.
When `image_tensor` / `seg_tensor` are given, the framebuffer textures are
copied straight into the (GPU) torch tensors through pycuda, avoiding a
round-trip through host memory.
"""
import ctypes
import logging
import os
import os.path as osp
import sys
from contextlib import contextmanager

import cv2
import numpy as np
import torch
from tqdm import tqdm
from transforms3d.euler import euler2quat, mat2euler, quat2euler
from transforms3d.quaternions import axangle2quat, mat2quat, qinverse, qmult

cur_dir = osp.dirname(osp.abspath(__file__))
sys.path.insert(0, cur_dir)
from glutils.meshutil import homotrans, lookat, mat2rotmat, perspective, quat2rotmat, safemat2quat, xyz2mat
from glutils.egl_offscreen_context import OffscreenContext
from glutils.utils import colormap, load_mesh_pyassimp, load_mesh_sixd

import OpenGL.GL as GL

try:
    import pycuda.driver
    from pycuda.gl import graphics_map_flags
    import pycuda.gl

    _HAS_PYCUDA = True
except ImportError:
    _HAS_PYCUDA = False

logger = logging.getLogger(__name__)


@contextmanager
def cuda_activate(img):
    """Context manager simplifying use of pycuda.gl.RegisteredImage."""
    mapping = img.map()
    yield mapping.array(0, 0)
    mapping.unmap()


class EGLRenderer(object):
    def __init__(
        self,
        model_paths,
        K=None,
        model_ids=None,
        width=640,
        height=480,
        gpu_id=None,
        render_marker=False,
        robot="panda_arm",
        vertex_scale=1.0,
        znear=0.25,
        zfar=6.0,
        model_loadfn=None,
        use_cache=False,
        cad_model_colors=None,
    ):
        if model_loadfn == "pyassimp":
            self.model_load_fn = load_mesh_pyassimp
        elif model_loadfn is None:
            self.model_load_fn = load_mesh_sixd
        else:
            self.model_load_fn = model_loadfn
        self.use_cache = use_cache

        # the EGL context has to live on the same GPU as the torch tensors
        if gpu_id is None:
            cuda_device_idx = torch.cuda.current_device()
        else:
            with torch.cuda.device(gpu_id):
                cuda_device_idx = torch.cuda.current_device()  # == gpu_id
        self._context = OffscreenContext(gpu_id=cuda_device_idx)
        self.render_marker = render_marker

        self.texUnitUniform = None
        self.width = width
        self.height = height
        self.znear = znear
        self.zfar = zfar
        self.faces = []
        self.poses_trans = []
        self.poses_rot = []
        self.instances = []
        self.robot = robot
        self._has_tex = []
        self.lightpos = [0, 0, 0]
        self.lightcolor = [1, 1, 1]

        self.shaders = self._compile_shaders()

        self._setup_framebuffer()

        self.color_cuda_buffer = None
        self.seg_cuda_buffer = None
        if _HAS_PYCUDA:
            self._register_cuda_buffers()

        if K is not None:
            self.set_projection_matrix_from_K(K)
        else:
            self.set_fov(20)

        self.vertex_scale = vertex_scale
        self.load_objects(model_paths, cad_model_colors=cad_model_colors)
        self.set_camera_default()

    # ------------------------------------------------------------------ GL setup
    def _compile_shaders(self):
        from glutils.shaders import compile_program

        shaders = {}
        for name in ("textured", "colored", "xyz"):
            shaders[name] = compile_program(osp.join(cur_dir, "shader", name + ".vs"), osp.join(cur_dir, "shader", name + ".frag"))
        return shaders

    def _setup_framebuffer(self):
        self.fbo = GL.glGenFramebuffers(1)
        self.color_tex = GL.glGenTextures(1)
        self.color_tex_2 = GL.glGenTextures(1)
        self.color_tex_3 = GL.glGenTextures(1)
        self.color_tex_4 = GL.glGenTextures(1)
        self.color_tex_5 = GL.glGenTextures(1)
        self.depth_tex = GL.glGenTextures(1)

        for tex in [self.color_tex, self.color_tex_2, self.color_tex_3, self.color_tex_4, self.color_tex_5]:
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGBA32F, self.width, self.height, 0, GL.GL_RGBA, GL.GL_FLOAT, None)

        GL.glBindTexture(GL.GL_TEXTURE_2D, self.depth_tex)
        GL.glTexImage2D.wrappedOperation(
            GL.GL_TEXTURE_2D, 0, GL.GL_DEPTH24_STENCIL8, self.width, self.height, 0,
            GL.GL_DEPTH_STENCIL, GL.GL_UNSIGNED_INT_24_8, None,
        )

        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.fbo)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT0, GL.GL_TEXTURE_2D, self.color_tex, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT1, GL.GL_TEXTURE_2D, self.color_tex_2, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT2, GL.GL_TEXTURE_2D, self.color_tex_3, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT3, GL.GL_TEXTURE_2D, self.color_tex_4, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT4, GL.GL_TEXTURE_2D, self.color_tex_5, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_STENCIL_ATTACHMENT, GL.GL_TEXTURE_2D, self.depth_tex, 0)
        GL.glViewport(0, 0, self.width, self.height)
        GL.glDrawBuffers(5, [GL.GL_COLOR_ATTACHMENT0, GL.GL_COLOR_ATTACHMENT1, GL.GL_COLOR_ATTACHMENT2,
                             GL.GL_COLOR_ATTACHMENT3, GL.GL_COLOR_ATTACHMENT4])

        assert GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER) == GL.GL_FRAMEBUFFER_COMPLETE

    def _register_cuda_buffers(self):
        # NOTE: requires a CUDA context on the same device as the EGL context
        self.color_cuda_buffer = pycuda.gl.RegisteredImage(
            int(self.color_tex), GL.GL_TEXTURE_2D, graphics_map_flags.WRITE_DISCARD
        )
        self.seg_cuda_buffer = pycuda.gl.RegisteredImage(
            int(self.color_tex_3), GL.GL_TEXTURE_2D, graphics_map_flags.WRITE_DISCARD
        )

    # ------------------------------------------------------------------ camera
    def set_projection_matrix_from_K(self, K, znear=None, zfar=None):
        if znear is None:
            znear = self.znear
        if zfar is None:
            zfar = self.zfar
        fx, fy, u0, v0 = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
        L = -(u0) * znear / fx
        R = +(self.width - u0) * znear / fx
        T = -(v0) * znear / fy
        B = +(self.height - v0) * znear / fy

        P = np.zeros((4, 4), dtype=np.float32)
        P[0, 0] = 2 * znear / (R - L)
        P[1, 1] = -2 * znear / (T - B)
        P[2, 0] = (R + L) / (R - L)
        P[2, 1] = (T + B) / (T - B)
        P[2, 2] = -(zfar + znear) / (zfar - znear)
        P[2, 3] = -1.0
        P[3, 2] = (2 * zfar * znear) / (znear - zfar)
        self.P = P

    def set_fov(self, fov):
        self.fov = fov
        self.P = perspective(self.fov, float(self.width) / float(self.height), self.znear, self.zfar)

    def set_camera_default(self):
        self.V = np.eye(4)

    def set_poses(self, poses, rot_type="mat"):
        self.poses_rot = [np.ascontiguousarray(quat2rotmat(pose[:4])) if rot_type == "quat" else mat2rotmat(pose[:3, :3]) for pose in poses]
        self.poses_trans = [np.ascontiguousarray(xyz2mat(pose[4:7])) if rot_type == "quat" else xyz2mat(pose[:3, 3]) for pose in poses]

    # ------------------------------------------------------------------ models
    def load_objects(self, obj_paths, cad_model_colors=None):
        for i, obj_path in enumerate(tqdm(obj_paths)):
            color = cad_model_colors[i] if cad_model_colors is not None else None
            self.load_object(obj_path, obj_id=i, color=color)

    def load_object(self, obj_path, obj_id=None, color=None):
        mesh = self.model_load_fn(obj_path, vertex_scale=self.vertex_scale)
        self._has_tex.append(mesh.get("uv") is not None)
        self.faces.append(mesh["faces"])
        self.instances.append(len(self.instances))

    # ------------------------------------------------------------------ render
    def _copy_tex_to_tensor(self, cuda_buffer, tensor):
        assert tensor.is_cuda, "tensor must be on GPU"
        nbytes = tensor.numel() * tensor.element_size()
        with cuda_activate(cuda_buffer) as ary:
            cpy = pycuda.driver.Memcpy2D()
            cpy.set_src_array(ary)
            cpy.set_dst_device(tensor.data_ptr())
            cpy.width_in_bytes = cpy.src_pitch = cpy.dst_pitch = nbytes // self.height
            cpy.height = self.height
            cpy(aligned=False)
        torch.cuda.synchronize()

    def render(self, obj_ids, poses, K=None, to_bgr=True, to_255=True, rot_type="mat", instance_colors=None,
               light_pos=None, light_color=None, image_tensor=None, seg_tensor=None, pc_obj_tensor=None,
               pc_cam_tensor=None):
        """
        image_tensor / seg_tensor: preallocated float32 (H, W, 4) GPU tensors (flipped vertically)
        """
        if K is not None:
            self.set_projection_matrix_from_K(K)
        if not isinstance(obj_ids, (list, tuple)):
            obj_ids = [obj_ids]
            poses = [poses]
        self.set_poses(poses, rot_type=rot_type)

        GL.glClearColor(0, 0, 0, 1)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        GL.glEnable(GL.GL_DEPTH_TEST)

        for i, obj_id in enumerate(obj_ids):
            self._draw_instance(obj_id, i, instance_colors=instance_colors)

        GL.glDisable(GL.GL_DEPTH_TEST)

        if image_tensor is not None:
            self._copy_tex_to_tensor(self.color_cuda_buffer, image_tensor)
        if seg_tensor is not None:
            self._copy_tex_to_tensor(self.seg_cuda_buffer, seg_tensor)
        if image_tensor is None and seg_tensor is None:
            GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
            frame = GL.glReadPixels(0, 0, self.width, self.height, GL.GL_RGBA, GL.GL_FLOAT)
            frame = np.frombuffer(frame, dtype=np.float32).reshape(self.height, self.width, 4)
            frame = frame[::-1, :, :3]
            if to_255:
                frame = (frame * 255).clip(0, 255).astype(np.uint8)
            if to_bgr:
                frame = frame[:, :, ::-1]
            return frame

    def _draw_instance(self, obj_id, pose_idx, instance_colors=None):
        shader = self.shaders["textured" if self._has_tex[obj_id] else "colored"]
        GL.glUseProgram(shader)
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(shader, "V"), 1, GL.GL_TRUE, self.V)
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(shader, "P"), 1, GL.GL_FALSE, self.P)
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(shader, "pose_trans"), 1, GL.GL_FALSE, self.poses_trans[pose_idx])
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(shader, "pose_rot"), 1, GL.GL_TRUE, self.poses_rot[pose_idx])
        GL.glUniform3f(GL.glGetUniformLocation(shader, "light_position"), *self.lightpos)
        GL.glUniform3f(GL.glGetUniformLocation(shader, "light_color"), *self.lightcolor)
        if instance_colors is not None:
            GL.glUniform3f(GL.glGetUniformLocation(shader, "instance_color"), *instance_colors[pose_idx])
        GL.glDrawElements(GL.GL_TRIANGLES, self.faces[obj_id].size, GL.GL_UNSIGNED_INT, ctypes.c_void_p(0))
        GL.glUseProgram(0)

    def close(self):
        self._context.close()
        if _HAS_PYCUDA:
            self.color_cuda_buffer.unregister()
            self.seg_cuda_buffer.unregister()


if __name__ == "__main__":
    model_root = "datasets/BOP_DATASETS/lm/models"
    model_paths = [osp.join(model_root, "obj_{:06d}.ply".format(i)) for i in (1, 5, 6)]
    K = np.array([[572.4114, 0, 325.2611], [0, 573.57043, 242.04899], [0, 0, 1]])
    ren = EGLRenderer(model_paths, K=K, width=640, height=480, vertex_scale=0.001, gpu_id=0)
    pose = np.hstack([np.eye(3), np.array([0, 0, 0.7]).reshape(3, 1)])
    image_tensor = torch.empty((480, 640, 4), dtype=torch.float32, device="cuda").detach()
    ren.render([0], [pose], image_tensor=image_tensor)
    im = (image_tensor[:, :, :3].flip(0).cpu().numpy() * 255).astype("uint8")
    cv2.imwrite("/tmp/egl_test.png", im[:, :, ::-1])
