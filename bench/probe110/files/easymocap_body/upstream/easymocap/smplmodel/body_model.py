'''
  @ Date: 2020-11-18 14:04:10
  @ Author: Qing Shuai
  @ LastEditors: Qing Shuai
  @ LastEditTime: 2021-05-25 19:51:12
  @ FilePath: /EasyMocap/easymocap/smplmodel/body_model.py
'''
import torch
import torch.nn as nn
from .lbs import lbs, batch_rodrigues
import os.path as osp
from os.path import join
import pickle
import numpy as np
import os


def to_tensor(array, dtype=torch.float32, device=torch.device('cpu')):
    if 'torch.tensor' not in str(type(array)):
        return torch.tensor(array, dtype=dtype).to(device)
    else:
        return array.to(device)


def to_np(array, dtype=np.float32):
    if 'scipy.sparse' in str(type(array)):
        array = array.todense()
    return np.array(array, dtype=dtype)


def load_regressor(regressor_path):
    if regressor_path.endswith('.npy'):
        X_regressor = to_tensor(np.load(regressor_path))
    elif regressor_path.endswith('.txt'):
        data = np.loadtxt(regressor_path)
        with open(regressor_path, 'r') as f:
            shape = f.readline().split()[1:]
        reg = np.zeros((int(shape[0]), int(shape[1])))
        for i, j, v in data:
            reg[int(i), int(j)] = v
        X_regressor = to_tensor(reg)
    else:
        import ipdb; ipdb.set_trace()
    return X_regressor


NUM_POSES = {'smpl': 72, 'smplh': 78, 'smplx': 66 + 12 + 9, 'mano': 9}
NUM_SHAPES = 10
NUM_EXPR = 10


class SMPLlayer(nn.Module):
    def __init__(self, model_path, model_type='smpl', gender='neutral', device=None,
        regressor_path=None,
        use_pose_blending=True, use_shape_blending=True, use_joints=True,
        with_color=False, use_lbs=True,
        **kwargs) -> None:
        super(SMPLlayer, self).__init__()
        dtype = torch.float32
        self.dtype = dtype
        self.use_pose_blending = use_pose_blending
        self.use_shape_blending = use_shape_blending
        self.use_joints = use_joints

        if isinstance(device, str):
            device = torch.device(device)
        self.device = device
        self.model_type = model_type
        # create the SMPL model
        self.lbs = lbs
        if osp.isdir(model_path):
            model_fn = '{}_{}.{ext}'.format(model_type.upper(), gender.upper(), ext='pkl')
            smpl_path = osp.join(model_path, model_fn)
        else:
            smpl_path = model_path
        assert osp.exists(smpl_path), 'Path {} does not exist!'.format(
            smpl_path)

        with open(smpl_path, 'rb') as smpl_file:
            data = pickle.load(smpl_file, encoding='latin1')
        self.faces = data['f']
        self.register_buffer('faces_tensor',
                             to_tensor(to_np(self.faces, dtype=np.int64),
                                       dtype=torch.long))
        for key in ['J_regressor', 'v_template', 'weights']:
            val = to_tensor(to_np(data[key]), dtype=dtype)
            self.register_buffer(key, val)
        # add poseblending
        if use_pose_blending:
            # Pose blend shape basis: 6890 x 3 x 207, reshaped to 6890*3 x 207
            num_pose_basis = data['posedirs'].shape[-1]
            # 207 x 20670
            posedirs = data['posedirs']
            data['posedirs'] = np.reshape(data['posedirs'], [-1, num_pose_basis]).T
            val = to_tensor(to_np(data['posedirs']), dtype=dtype)
            self.register_buffer('posedirs', val)
        else:
            self.posedirs = None
        # add shape blending
        if use_shape_blending:
            val = to_tensor(to_np(data['shapedirs']), dtype=dtype)
            self.register_buffer('shapedirs', val)
        else:
            self.shapedirs = None
        if use_shape_blending:
            self.J_shaped = None
        else:
            val = to_tensor(to_np(data['J']), dtype=dtype)
            self.register_buffer('J_shaped', val)

        self.nVertices = self.v_template.shape[0]
        # indices of parents for each joints
        parents = to_tensor(to_np(data['kintree_table'][0])).long()
        parents[0] = -1
        self.register_buffer('parents', parents)

        if self.model_type == 'smplx':
            # shape
            self.num_expression_coeffs = 10
            self.num_shapes = 10
            self.shapedirs = self.shapedirs[:, :, :self.num_shapes+self.num_expression_coeffs]
        # joints regressor
        if regressor_path is not None and use_joints:
            X_regressor = load_regressor(regressor_path)
            X_regressor = torch.cat((self.J_regressor, X_regressor), dim=0)

            j_J_regressor = torch.zeros(self.J_regressor.shape[0], X_regressor.shape[0], device=device)
            for i in range(self.J_regressor.shape[0]):
                j_J_regressor[i, i] = 1
            j_v_template = X_regressor @ self.v_template
            #
            j_shapedirs = torch.einsum('vij,kv->kij', [self.shapedirs, X_regressor])
            # (25, 24)
            j_weights = X_regressor @ self.weights
            j_posedirs = torch.einsum('ab, bde->ade', [X_regressor, torch.Tensor(posedirs)]).numpy()
            j_posedirs = np.reshape(j_posedirs, [-1, num_pose_basis]).T
            j_posedirs = to_tensor(j_posedirs)
            self.register_buffer('j_posedirs', j_posedirs)
            self.register_buffer('j_shapedirs', j_shapedirs)
            self.register_buffer('j_weights', j_weights)
            self.register_buffer('j_v_template', j_v_template)
            self.register_buffer('j_J_regressor', j_J_regressor)
        self.to(self.device)

    @staticmethod
    def extend_hand(poses, use_pca, use_flat_mean, coeffs, mean):
        if use_pca:
            poses = poses @ coeffs
        if use_flat_mean:
            poses = poses + mean
        return poses

    def extend_pose(self, poses):
        # skip SMPL or already extend
        if self.model_type not in ['smplh', 'smplx', 'mano'] or poses.shape[-1] == 156:
            return poses
        return poses

    def full_poses(self, poses):
        if 'torch' not in str(type(poses)):
            poses = torch.Tensor(poses).to(self.device)
        poses = self.extend_pose(poses)
        return poses.detach().cpu().numpy()

    def forward(self, poses, shapes, Rh=None, Th=None, expression=None,
        v_template=None,
        return_verts=True, return_tensor=True, return_smpl_joints=False,
        only_shape=False, pose2rot=True, **kwargs):
        """ Forward pass for SMPL model

        Args:
            poses (n, 72)
            shapes (n, 10)
            Rh (n, 3): global orientation
            Th (n, 3): global translation
            return_verts (bool, optional): if True return (6890, 3). Defaults to False.
        """
        if 'torch' not in str(type(poses)):
            dtype, device = self.dtype, self.device
            poses = to_tensor(poses, dtype, device)
            shapes = to_tensor(shapes, dtype, device)
            if Rh is not None:
                Rh = to_tensor(Rh, dtype, device)
            if Th is not None:
                Th = to_tensor(Th, dtype, device)
            if expression is not None:
                expression = to_tensor(expression, dtype, device)

        bn = poses.shape[0]
        # process Rh, Th
        if Rh is None:
            Rh = torch.zeros(bn, 3, device=poses.device)
        if Th is None:
            Th = torch.zeros(bn, 3, device=poses.device)

        if len(Rh.shape) == 2:  # angle-axis
            rot = batch_rodrigues(Rh)
        else:
            rot = Rh
        transl = Th.unsqueeze(dim=1)
        # process shapes
        if shapes.shape[0] < bn:
            shapes = shapes.expand(bn, -1)
        if expression is not None and self.model_type == 'smplx':
            shapes = torch.cat([shapes, expression], dim=1)
        # process poses
        poses = self.extend_pose(poses)
        if return_verts or not self.use_joints:
            vertices, joints = lbs(shapes, poses, self.v_template,
                                   self.shapedirs, self.posedirs,
                                   self.J_regressor, self.parents,
                                   self.weights, pose2rot=pose2rot, dtype=self.dtype,
                                   use_pose_blending=self.use_pose_blending,
                                   use_shape_blending=self.use_shape_blending,
                                   J_shaped=self.J_shaped)
        else:
            vertices, joints = lbs(shapes, poses, self.j_v_template,
                                   self.j_shapedirs, self.j_posedirs,
                                   self.j_J_regressor, self.parents,
                                   self.j_weights, pose2rot=pose2rot, dtype=self.dtype,
                                   use_pose_blending=self.use_pose_blending,
                                   use_shape_blending=self.use_shape_blending,
                                   J_shaped=self.J_shaped)
            vertices = vertices[:, self.J_regressor.shape[0]:, :]
        vertices = torch.matmul(vertices, rot.transpose(1, 2)) + transl
        if not return_tensor:
            vertices = vertices.detach().cpu().numpy()
        return vertices

    def init_params(self, nFrames=1, nShapes=1, ret_tensor=False):
        params = {
            'poses': np.zeros((nFrames, NUM_POSES[self.model_type])),
            'shapes': np.zeros((nShapes, NUM_SHAPES)),
            'Rh': np.zeros((nFrames, 3)),
            'Th': np.zeros((nFrames, 3)),
        }
        if self.model_type == 'smplx':
            params['expression'] = np.zeros((nFrames, NUM_EXPR))
        if ret_tensor:
            for key in params.keys():
                params[key] = to_tensor(params[key], self.dtype, self.device)
        return params

    def check_params(self, body_params):
        model_type = self.model_type
        nFrames = body_params['poses'].shape[0]
        if body_params['poses'].shape[1] != NUM_POSES[model_type]:
            body_params['poses'] = np.hstack((body_params['poses'], np.zeros((nFrames, NUM_POSES[model_type] - body_params['poses'].shape[1]))))
        if model_type == 'smplx' and 'expression' not in body_params.keys():
            body_params['expression'] = np.zeros((nFrames, NUM_EXPR))
        return body_params


def load_model(gender='neutral', use_cuda=True, model_type='smpl', skel_type='body25', device=None, model_path='data/smplx'):
    # prepare SMPL model
    # print('[Load model {}/{}]'.format(model_type, gender))
    if device is None:
        if use_cuda and torch.cuda.is_available():
            device = torch.device('cuda')
        else:
            device = torch.device('cpu')
    if model_type == 'smpl':
        if skel_type == 'body25':
            reg_path = join(model_path, 'J_regressor_body25.npy')
        elif skel_type == 'h36m':
            reg_path = join(model_path, 'J_regressor_h36m.npy')
        else:
            raise NotImplementedError
        body_model = SMPLlayer(join(model_path, 'smpl'), gender=gender, device=device,
            regressor_path=reg_path)
    elif model_type == 'smplh':
        body_model = SMPLlayer(join(model_path, 'smplh/SMPLH_MALE.pkl'), model_type='smplh', gender=gender, device=device,
            regressor_path=join(model_path, 'J_regressor_body25_smplh.txt'))
    elif model_type == 'smplx':
        body_model = SMPLlayer(join(model_path, 'smplx/SMPLX_{}.pkl'.format(gender.upper())), model_type='smplx', gender=gender, device=device,
            regressor_path=join(model_path, 'J_regressor_body25_smplx.txt'))
    else:
        body_model = None
    body_model.to(device)
    return body_model
