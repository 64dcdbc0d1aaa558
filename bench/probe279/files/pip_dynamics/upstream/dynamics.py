r"""
    Physics-aware motion optimizer (PIP, CVPR 2022).

    A dual PD controller tracks the kinematic estimates (pose, joint velocity, foot contacts) and a QP
    solves for joint accelerations, ground reaction forces and joint torques that satisfy the equations
    of motion. Everything here runs on the CPU in float64 numpy (pybullet + qpsolvers); the networks in
    net.py hand over CPU tensors.
"""

import os
import numpy as np
import pybullet as p
import torch
from qpsolvers import solve_qp

import articulate as art
from config import *
from utils import smpl_to_rbdl, rbdl_to_smpl, normalize_and_concat, read_debug_param_values_from_json

try:
    import cupy as cp           # optional: batched inverse of the mass matrix on the GPU
    HAS_CUPY = True
except ImportError:
    cp = None
    HAS_CUPY = False


class PhysicsOptimizer:
    test_contact_joints = ['LHipJoint', 'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase',
                           'RHipJoint', 'RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase']

    def __init__(self, debug=False, quiet=False, use_gpu_mass_inverse=False):
        mu = 0.6
        supp_poly_size = 0.2
        self.debug = debug
        self.quiet = quiet
        self.model = art.RobotModel(paths.physics_model_file)
        self.params = read_debug_param_values_from_json(paths.physics_parameter_file)
        self.friction_constraint_matrix = np.array([[np.sqrt(2), -mu, 0],
                                                    [-np.sqrt(2), -mu, 0],
                                                    [0, -mu, np.sqrt(2)],
                                                    [0, -mu, -np.sqrt(2)]])
        self.support_polygon = np.array([[-supp_poly_size / 2, 0, -supp_poly_size / 2],
                                         [supp_poly_size / 2, 0, -supp_poly_size / 2],
                                         [-supp_poly_size / 2, 0, supp_poly_size / 2],
                                         [supp_poly_size / 2, 0, supp_poly_size / 2]])

        # the OSQP CUDA backend was tried and was slower than quadprog for 75-dof problems; kept off
        self.use_cuda_qp = False
        self.use_gpu_mass_inverse = use_gpu_mass_inverse and HAS_CUPY

        # states
        self.last_x = []
        self.q = None
        self.qdot = np.zeros(self.model.qdot_size)
        self.reset_states()

        # debug
        if self.debug:
            p.connect(p.GUI)
            p.setGravity(0, -9.8, 0)
            p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0)
            p.resetDebugVisualizerCamera(cameraDistance=3, cameraYaw=0, cameraPitch=-20, cameraTargetPosition=[0, 1, 0])
            p.loadURDF(paths.plane_file, [0, -0.881, 0], [-0.7071068, 0, 0, 0.7071068])
            self.id_robot = p.loadURDF(paths.physics_model_file, [0, 0, 0], useFixedBase=False,
                                       flags=p.URDF_MAINTAIN_LINK_ORDER)
            self.debug_params = {}
            for k, v in self.params.items():
                self.debug_params[k] = p.addUserDebugParameter(k, 0, max(v * 4, 1), v)

    def reset_states(self):
        self.last_x = []
        self.q = None
        self.qdot = np.zeros(self.model.qdot_size)

    def _mass_matrix_inverse(self, M):
        if self.use_gpu_mass_inverse:
            return cp.asnumpy(cp.linalg.inv(cp.asarray(M)))
        return np.linalg.inv(M)

    def _contact_jacobian(self, q, contact_joint_names):
        Js, ps = [], []
        for name in contact_joint_names:
            for offset in self.support_polygon:
                J = self.model.calc_point_Jacobian(q, self.model.body_id[name], offset)
                Js.append(J)
                ps.append(self.model.calc_body_to_base_coordinates(q, self.model.body_id[name], offset))
        return Js, ps

    def optimize_frame(self, pose, jvel, contact, acc, return_grf=False):
        r"""
        One step of the physics-aware optimisation.

        :param pose: [24, 3, 3] local rotations from the kinematics module (CPU tensor).
        :param jvel: [24, 3] joint velocities in the global frame (CPU tensor).
        :param contact: [2] foot contact logits (CPU tensor).
        :param acc: [6, 3] global IMU accelerations (CPU tensor).
        :return: Optimised pose [24, 3, 3] and root translation [3] (CPU tensors).
        """
        if self.debug:
            for k in self.params.keys():
                self.params[k] = p.readUserDebugParameter(self.debug_params[k])
        kp_angular, kd_angular = self.params['kp_angular'], self.params['kd_angular']
        kp_linear, kd_linear = self.params['kp_linear'], self.params['kd_linear']
        w_tau, w_F = self.params['coeff_tau_regularization'], self.params['coeff_F_regularization']
        delta_t = self.params['delta_t']

        q_ref = smpl_to_rbdl(pose.unsqueeze(0), torch.zeros(1, 3))[0]
        v_ref = jvel.double().numpy()
        c_ref = contact.sigmoid().double().numpy()
        a_ref = acc.double().numpy()

        if self.q is None:
            self.q = q_ref
            pose_opt, tran_opt = rbdl_to_smpl(self.q.reshape(1, -1))
            return pose_opt[0], tran_opt[0]
        q, qdot = self.q, self.qdot

        # determine the contact joints
        contact_joint_names = []
        if c_ref[0] > self.params['contact_threshold']:
            contact_joint_names.append('LeftFoot')
        if c_ref[1] > self.params['contact_threshold']:
            contact_joint_names.append('RightFoot')

        # dual PD controller: desired joint accelerations (angular) and root acceleration (linear)
        qddot_des = kp_angular * art.math.angle_difference(q_ref[6:], q[6:]) - kd_angular * qdot[6:]
        root_pos = self.model.calc_body_to_base_coordinates(q, self.model.body_id['Hips'], np.zeros(3))
        root_vel = self.model.calc_point_velocity(q, qdot, self.model.body_id['Hips'], np.zeros(3))
        root_acc_des = kp_linear * (root_pos + v_ref[0] * delta_t - root_pos) + kd_linear * (v_ref[0] - root_vel)
        root_acc_des = root_acc_des + 0.1 * a_ref[5]

        # equations of motion  M qddot + h = S tau + J^T F
        M = self.model.calc_M(q)
        h = self.model.calc_h(q, qdot)
        Js, ps = self._contact_jacobian(q, contact_joint_names)
        nq, nc = self.model.qdot_size, len(Js)

        # variables x = [qddot (nq), F (3 nc), tau (nq - 6)]
        nx = nq + 3 * nc + (nq - 6)
        A1 = np.zeros((nq - 6, nx))
        A1[:, 6:nq] = np.eye(nq - 6)
        b1 = qddot_des
        J_root = self.model.calc_point_Jacobian(q, self.model.body_id['Hips'], np.zeros(3))
        A2 = np.zeros((3, nx))
        A2[:, :nq] = J_root
        b2 = root_acc_des - self.model.calc_point_acceleration(q, qdot, np.zeros(nq), self.model.body_id['Hips'],
                                                              np.zeros(3))
        A3 = np.zeros((nx - nq - 3 * nc, nx))
        A3[:, nq + 3 * nc:] = np.eye(nx - nq - 3 * nc) * w_tau
        A4 = np.zeros((3 * nc, nx))
        A4[:, nq:nq + 3 * nc] = np.eye(3 * nc) * w_F

        P = A1.T @ A1 + A2.T @ A2 + A3.T @ A3 + A4.T @ A4 + np.eye(nx) * 1e-6
        q_ = -(A1.T @ b1 + A2.T @ b2)

        # equality: equations of motion
        Aeq = np.zeros((nq, nx))
        Aeq[:, :nq] = M
        for i, J in enumerate(Js):
            Aeq[:, nq + 3 * i:nq + 3 * i + 3] = -J.T
        Aeq[6:, nq + 3 * nc:] = -np.eye(nq - 6)
        beq = -h

        # inequality: friction cone for every contact point
        G = np.zeros((4 * nc, nx))
        for i in range(nc):
            G[4 * i:4 * i + 4, nq + 3 * i:nq + 3 * i + 3] = self.friction_constraint_matrix
        hq = np.zeros(4 * nc)

        x = solve_qp(P, q_, G if nc > 0 else None, hq if nc > 0 else None, Aeq, beq, solver='quadprog')
        if x is None or np.isnan(x).any():
            if not self.quiet:
                print('[PhysicsOptimizer] QP failed, falling back to the kinematic reference')
            x = self.last_x if len(self.last_x) == nx else np.zeros(nx)
        self.last_x = x

        qddot = x[:nq]
        GRF = x[nq:nq + 3 * nc]

        # semi-implicit Euler integration
        qdot = qdot + qddot * delta_t
        q = self.model.integrate(q, qdot, delta_t)
        self.q, self.qdot = q, qdot

        if self.debug:
            p.resetBasePositionAndOrientation(self.id_robot, q[:3], p.getQuaternionFromEuler(q[3:6]))
            for i, jid in enumerate(range(p.getNumJoints(self.id_robot))):
                p.resetJointState(self.id_robot, jid, q[6 + i] if 6 + i < len(q) else 0)

        pose_opt, tran_opt = rbdl_to_smpl(q.reshape(1, -1))
        pose_opt = torch.from_numpy(pose_opt[0]).float() if isinstance(pose_opt, np.ndarray) else pose_opt[0].float()
        tran_opt = torch.from_numpy(tran_opt[0]).float() if isinstance(tran_opt, np.ndarray) else tran_opt[0].float()
        if return_grf:
            return pose_opt, tran_opt, GRF
        return pose_opt, tran_opt

    def optimize_sequence(self, pose, jvel, contact, acc, verbose=False):
        r"""
        Run `optimize_frame` over a whole sequence (offline evaluation).

        :param pose: [T, 24, 3, 3]; :param jvel: [T, 24, 3]; :param contact: [T, 2]; :param acc: [T, 6, 3]
        :return: pose [T, 24, 3, 3] and translation [T, 3] tensors, plus per-frame QP statistics.
        """
        self.reset_states()
        poses, trans, n_fail = [], [], 0
        for t in range(pose.shape[0]):
            before = len(self.last_x)
            p_, t_ = self.optimize_frame(pose[t], jvel[t], contact[t], acc[t])
            if len(self.last_x) == 0 and before > 0:
                n_fail += 1
            poses.append(p_)
            trans.append(t_)
            if verbose and t % 600 == 0:
                print('[PhysicsOptimizer] frame %d/%d' % (t, pose.shape[0]))
        stats = {'frames': pose.shape[0], 'qp_failures': n_fail}
        return torch.stack(poses), torch.stack(trans), stats

    def kinetic_energy(self):
        r"""
        0.5 * qdot^T M qdot of the current state (for debugging the PD gains).
        """
        if self.q is None:
            return 0.
        M = self.model.calc_M(self.q)
        return float(0.5 * self.qdot @ M @ self.qdot)

    def save_params(self, path):
        import json
        with open(path, 'w') as f:
            json.dump(self.params, f, indent=2)
