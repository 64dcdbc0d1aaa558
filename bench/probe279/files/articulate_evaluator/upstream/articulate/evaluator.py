r"""
    Basic evaluators, and evaluators that measure differences between poses/trans of MANO/SMPL/SMPLH model.
"""


__all__ = ['BinaryConfusionMatrixEvaluator', 'BinaryClassificationErrorEvaluator', 'PositionErrorEvaluator',
           'RotationErrorEvaluator', 'PerJointErrorEvaluator', 'MeanPerJointErrorEvaluator',
           'MeshErrorEvaluator', 'FullMotionEvaluator']


from .model import ParametricModel
from .math import *
import torch


class BasePoseEvaluator:
    r"""
    Base class for evaluators that evaluate motions.
    """
    def __init__(self, official_model_file: str, rep=RotationRepresentation.ROTATION_MATRIX, use_pose_blendshape=False,
                 device=torch.device('cpu')):
        self.model = ParametricModel(official_model_file, use_pose_blendshape=use_pose_blendshape, device=device)
        self.rep = rep
        self.device = device

    def _preprocess(self, pose, shape=None, tran=None):
        pose = to_rotation_matrix(pose.to(self.device), self.rep).view(pose.shape[0], -1)
        shape = shape.to(self.device) if shape is not None else shape
        tran = tran.to(self.device) if tran is not None else tran
        return pose, shape, tran


class BinaryConfusionMatrixEvaluator:
    r"""
    Confusion matrix for binary classification tasks (e.g. foot contact).
    """
    def __init__(self, is_after_sigmoid=False):
        r"""
        :param is_after_sigmoid: True if the input is after sigmoid activation (probability), False if before (logit).
        """
        self.threshold = 0.5 if is_after_sigmoid else 0

    def __call__(self, p: torch.Tensor, t: torch.Tensor):
        r"""
        Get the [true positive, false positive, true negative, false negative] of the predicted and true labels.
        """
        p = (p > self.threshold).float()
        t = t.float()
        tp = (p * t).sum()
        fp = (p * (1 - t)).sum()
        tn = ((1 - p) * (1 - t)).sum()
        fn = ((1 - p) * t).sum()
        return torch.tensor([tp, fp, tn, fn])


class BinaryClassificationErrorEvaluator(BinaryConfusionMatrixEvaluator):
    r"""
    precision, recall, and f1 score for binary classification tasks.
    """
    def __call__(self, p: torch.Tensor, t: torch.Tensor):
        tp, fp, tn, fn = super(BinaryClassificationErrorEvaluator, self).__call__(p, t)
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        f1_score = 2 * precision * recall / (precision + recall)
        return torch.tensor([precision, recall, f1_score])


class PositionErrorEvaluator:
    r"""
    Mean distance between two sets of points. Distances are defined as vector p-norm.
    """
    def __init__(self, dimension=3, p=2):
        self.dimension = dimension
        self.p = p

    def __call__(self, p: torch.Tensor, t: torch.Tensor):
        return (p.view(-1, self.dimension) - t.view(-1, self.dimension)).norm(p=self.p, dim=1).mean()


class RotationErrorEvaluator:
    r"""
    Mean angle between two sets of rotations. Angles are in degrees.
    """
    def __init__(self, rep=RotationRepresentation.ROTATION_MATRIX):
        self.rep = rep

    def __call__(self, p: torch.Tensor, t: torch.Tensor):
        return radian_to_degree(angle_between(p, t, self.rep).mean())


class PerJointErrorEvaluator(BasePoseEvaluator):
    r"""
    Position and local/global rotation error of each joint.
    """
    def __init__(self, official_model_file: str, align_joint=None, rep=RotationRepresentation.ROTATION_MATRIX,
                 device=torch.device('cpu')):
        super().__init__(official_model_file, rep, device=device)
        self.align_joint = align_joint

    def __call__(self, pose_p: torch.Tensor, pose_t: torch.Tensor):
        r"""
        :return: Tensor in shape [3, num_joint] where the ith column is the position error,
                 local rotation error, and global rotation error (in degrees) of the ith joint.
        """
        batch_size = pose_p.shape[0]
        pose_local_p, _, _ = self._preprocess(pose_p)
        pose_local_t, _, _ = self._preprocess(pose_t)
        pose_global_p, joint_p = self.model.forward_kinematics(pose_local_p)
        pose_global_t, joint_t = self.model.forward_kinematics(pose_local_t)
        if self.align_joint is not None:
            joint_p = joint_p - joint_p[:, self.align_joint:self.align_joint + 1]
            joint_t = joint_t - joint_t[:, self.align_joint:self.align_joint + 1]
        position_error_array = (joint_p - joint_t).norm(dim=2).mean(dim=0)
        local_rotation_error_array = angle_between(pose_local_p, pose_local_t).view(batch_size, -1).mean(dim=0)
        global_rotation_error_array = angle_between(pose_global_p, pose_global_t).view(batch_size, -1).mean(dim=0)
        return torch.stack((position_error_array,
                            radian_to_degree(local_rotation_error_array),
                            radian_to_degree(global_rotation_error_array)))


class MeanPerJointErrorEvaluator(PerJointErrorEvaluator):
    r"""
    Mean position and local/global rotation error of all joints.
    """
    def __call__(self, pose_p: torch.Tensor, pose_t: torch.Tensor):
        error_array = super(MeanPerJointErrorEvaluator, self).__call__(pose_p, pose_t)
        return error_array.mean(dim=1)


class MeshErrorEvaluator(BasePoseEvaluator):
    r"""
    Mean mesh vertex position error.
    """
    def __init__(self, official_model_file: str, align_joint=None, rep=RotationRepresentation.ROTATION_MATRIX,
                 use_pose_blendshape=False, device=torch.device('cpu')):
        super().__init__(official_model_file, rep, use_pose_blendshape, device=device)
        self.align_joint = align_joint

    def __call__(self, pose_p: torch.Tensor, pose_t: torch.Tensor, shape_p: torch.Tensor = None,
                 shape_t: torch.Tensor = None):
        pose_p, shape_p, _ = self._preprocess(pose_p, shape_p)
        pose_t, shape_t, _ = self._preprocess(pose_t, shape_t)
        _, joint_p, mesh_p = self.model.forward_kinematics(pose_p, shape_p, calc_mesh=True)
        _, joint_t, mesh_t = self.model.forward_kinematics(pose_t, shape_t, calc_mesh=True)
        if self.align_joint is not None:
            mesh_p = mesh_p - joint_p[:, self.align_joint:self.align_joint + 1]
            mesh_t = mesh_t - joint_t[:, self.align_joint:self.align_joint + 1]
        mesh_error = (mesh_p - mesh_t).norm(dim=2).mean()
        return mesh_error


class FullMotionEvaluator(BasePoseEvaluator):
    r"""
    Evaluator for full motions (pose sequences with global translations). Plenty of metrics.
    """
    def __init__(self, official_model_file: str, align_joint=None, rep=RotationRepresentation.ROTATION_MATRIX,
                 use_pose_blendshape=False, fps=60, joint_mask=None, device=torch.device('cpu')):
        r"""
        :param joint_mask: If not None, local angle error, global angle error, and joint position error
                           for these joints will be calculated additionally.
        :param fps: Motion fps, by default 60.
        :param device: torch.device, cpu or cuda.
        """
        super(FullMotionEvaluator, self).__init__(official_model_file, rep, use_pose_blendshape, device=device)
        self.align_joint = align_joint
        self.fps = fps
        # keep the mask next to the SMPL buffers (they are on the GPU when evaluation runs in the training loop)
        if joint_mask is not None and torch.cuda.is_available():
            joint_mask = joint_mask.to(device)
        self.joint_mask = joint_mask

    def __call__(self, pose_p, pose_t, shape_p=None, shape_t=None, tran_p=None, tran_t=None):
        r"""
        Get the measured errors. The returned tensor in shape [10, 2] contains mean and std of:
          0.  Joint position error (align_joint position aligned).
          1.  Vertex position error (align_joint position aligned).
          2.  Joint local angle error (in degrees).
          3.  Joint global angle error (in degrees).
          4.  Predicted motion jerk (with global translation).
          5.  True motion jerk (with global translation).
          6.  Translation error (mean root translation error).
          7.  Masked joint local angle error. (in degrees, zero if mask is None)
          8.  Masked joint global angle error. (in degrees, zero if mask is None)
          9.  Masked joint position error. (zero if mask is None)
        """
        f = self.fps
        pose_local_p, shape_p, tran_p = self._preprocess(pose_p, shape_p, tran_p)
        pose_local_t, shape_t, tran_t = self._preprocess(pose_t, shape_t, tran_t)
        pose_global_p, joint_p, vertex_p = self.model.forward_kinematics(pose_local_p, shape_p, tran_p, calc_mesh=True)
        pose_global_t, joint_t, vertex_t = self.model.forward_kinematics(pose_local_t, shape_t, tran_t, calc_mesh=True)

        offset_from_p_to_t = (joint_t[:, self.align_joint] - joint_p[:, self.align_joint]).unsqueeze(1) \
            if self.align_joint is not None else torch.zeros(1, 1, 3, device=joint_p.device)
        ve = (vertex_p + offset_from_p_to_t - vertex_t).norm(dim=2)   # N, J
        je = (joint_p + offset_from_p_to_t - joint_t).norm(dim=2)     # N, J
        lae = radian_to_degree(angle_between(pose_local_p, pose_local_t).view(pose_p.shape[0], -1))   # N, J
        gae = radian_to_degree(angle_between(pose_global_p, pose_global_t).view(pose_p.shape[0], -1))  # N, J
        jkp = ((joint_p[3:] - 3 * joint_p[2:-1] + 3 * joint_p[1:-2] - joint_p[:-3]) * (f ** 3)).norm(dim=2)  # N, J
        jkt = ((joint_t[3:] - 3 * joint_t[2:-1] + 3 * joint_t[1:-2] - joint_t[:-3]) * (f ** 3)).norm(dim=2)  # N, J
        te = ((joint_p[:, :1] - joint_t[:, :1]).norm(dim=2)) if tran_p is not None else torch.zeros(1, device=je.device)
        mlae = lae[:, self.joint_mask].mean(dim=1) if self.joint_mask is not None else torch.zeros(1, device=je.device)
        mgae = gae[:, self.joint_mask].mean(dim=1) if self.joint_mask is not None else torch.zeros(1, device=je.device)
        mje = je[:, self.joint_mask].mean(dim=1) if self.joint_mask is not None else torch.zeros(1, device=je.device)

        return torch.tensor([[je.mean(),   je.std(dim=0).mean()],
                             [ve.mean(),   ve.std(dim=0).mean()],
                             [lae.mean(),  lae.std(dim=0).mean()],
                             [gae.mean(),  gae.std(dim=0).mean()],
                             [jkp.mean(),  jkp.std(dim=0).mean()],
                             [jkt.mean(),  jkt.std(dim=0).mean()],
                             [te.mean(),   te.std(dim=0).mean()],
                             [mlae.mean(), mlae.std()],
                             [mgae.mean(), mgae.std()],
                             [mje.mean(),  mje.std()]])
