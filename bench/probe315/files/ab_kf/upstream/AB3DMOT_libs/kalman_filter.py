# Author: Xinshuo Weng
# email: xinshuo.weng@gmail.com
#
# Batched constant-velocity Kalman filter for 3D boxes.
# Replaces filterpy.kalman.KalmanFilter (one object per track) with a single
# set of tensors so T tracks are predicted / updated in one shot.

import torch


class BatchedKalmanBox(object):
    """State: [x, y, z, theta, l, w, h, dx, dy, dz]; measurement: first 7 dims.

    Covariances are kept in float64 because the innovation covariance gets
    badly conditioned for long-lived static objects (the velocity variance
    collapses), and float32 inverses then produce negative variances.
    """

    def __init__(self, dim_x=10, dim_z=7, device="cuda",
                 dtype=torch.float64):
        self.dim_x = dim_x
        self.dim_z = dim_z
        self.device = torch.device(device)
        self.dtype = dtype

        # state transition matrix, dim_x * dim_x
        F = torch.eye(dim_x, dtype=dtype)
        F[0, 7] = F[1, 8] = F[2, 9] = 1.0  # constant velocity model: x' = x + dx
        self.F = F.to(self.device)

        # measurement function, dim_z * dim_x, the first 7 dimensions of the measurement correspond to the state
        H = torch.zeros((dim_z, dim_x), dtype=dtype)
        H[:dim_z, :dim_z] = torch.eye(dim_z, dtype=dtype)
        self.H = H.to(self.device)

        # measurement uncertainty, uncomment if not super trust the measurement data due to detection noise
        # self.R[0:,0:] *= 10.
        self.R = torch.eye(dim_z, dtype=dtype, device=self.device)

        # initial state uncertainty
        P0 = torch.eye(dim_x, dtype=dtype)
        P0[7:, 7:] *= 1000.  # state uncertainty, give high uncertainty to the unobservable initial velocities
        P0 *= 10.
        self.P0 = P0.to(self.device)

        # process uncertainty, make the constant velocity part more certain
        Q = torch.eye(dim_x, dtype=dtype)
        Q[7:, 7:] *= 0.01
        self.Q = Q.to(self.device)

        self.reset()

    def reset(self):
        self.x = torch.zeros((0, self.dim_x), dtype=self.dtype, device=self.device)
        self.P = torch.zeros((0, self.dim_x, self.dim_x), dtype=self.dtype, device=self.device)

    @property
    def num_tracks(self):
        return self.x.shape[0]

    def add(self, z):
        """Initialise new tracks from measurements z: (N, 7)."""
        n = z.shape[0]
        x_new = torch.zeros((n, self.dim_x), dtype=self.dtype, device=self.device)
        x_new[:, :self.dim_z] = z.to(self.dtype)
        P_new = self.P0.unsqueeze(0).expand(n, -1, -1).clone()
        self.x = torch.cat([self.x, x_new], dim=0)
        self.P = torch.cat([self.P, P_new], dim=0)

    def select(self, idx):
        self.x = self.x.index_select(0, idx)
        self.P = self.P.index_select(0, idx)

    def predict(self):
        # x = F x ; P = F P F^T + Q
        self.x = self.x @ self.F.T
        self.P = self.F @ self.P @ self.F.T + self.Q

    def innovation_covariance(self):
        # S = H P H^T + R, used by the Mahalanobis-distance association
        return self.H @ self.P @ self.H.T + self.R

    def update(self, z, idx):
        """Kalman update for the tracks in idx with measurements z (len(idx), 7)."""
        z = z.to(self.dtype)
        x = self.x[idx]
        P = self.P[idx]

        y = z - x @ self.H.T                                    # residual
        S = self.H @ P @ self.H.T + self.R                      # innovation covariance
        K = P @ self.H.T @ torch.linalg.inv(S)                  # Kalman gain
        x = x + (K @ y.unsqueeze(-1)).squeeze(-1)

        # Joseph form keeps P symmetric positive definite
        I_KH = torch.eye(self.dim_x, dtype=self.dtype, device=self.device) - K @ self.H
        P = I_KH @ P @ I_KH.transpose(-1, -2) + K @ self.R @ K.transpose(-1, -2)

        self.x[idx] = x
        self.P[idx] = P

    def mahalanobis(self, dets, trks):
        """Squared Mahalanobis distance between detections (N, 7) and predicted tracks (T, 7)."""
        S = self.innovation_covariance()                        # T x 7 x 7
        S_inv = torch.linalg.inv(S)
        diff = dets.to(self.dtype).unsqueeze(1) - trks.to(self.dtype).unsqueeze(0)   # N x T x 7
        # wrap the heading difference
        diff[..., 3] = torch.remainder(diff[..., 3] + torch.pi, 2 * torch.pi) - torch.pi
        d2 = torch.einsum('ntj,tjk,ntk->nt', diff, S_inv, diff)
        return torch.sqrt(d2.clamp(min=0)).float()

    def state_dict(self):
        return {'x': self.x.cpu(), 'P': self.P.cpu()}

    def load_state_dict(self, sd):
        self.x = sd['x'].to(self.device)
        self.P = sd['P'].to(self.device)
