from pathlib import Path
import datetime

import torch


class Config:
    def __init__(self, experiment=None, model=None, project_root_dir=None,
                 joints_set=None, normalize=False, r6d=False, loss_type=None,
                 use_joint_loss=False, use_glb_rot_loss=False,
                 use_acc_recon_loss=False, pred_joints_set=None, pred_last_frame=False,
                 use_vposer_loss=False, use_vel_loss=False, mkdir=True, gpu=0):
        self.experiment = experiment
        self.model = model
        self.root_dir = Path(project_root_dir).absolute() if project_root_dir else Path(__file__).absolute().parents[2]
        self.joints_set = joints_set
        self.normalize = normalize
        self.r6d = r6d
        self.loss_type = loss_type
        self.use_joint_loss = use_joint_loss
        self.use_glb_rot_loss = use_glb_rot_loss
        self.use_acc_recon_loss = use_acc_recon_loss
        self.pred_joints_set = [*range(24)] if pred_joints_set is None else pred_joints_set
        self.pred_last_frame = pred_last_frame
        self.use_vposer_loss = use_vposer_loss
        self.use_vel_loss = use_vel_loss

        # every module (SMPL, VPoser, the LSTM) is created directly on this device
        self.gpu = gpu
        self.device = torch.device("cuda:%d" % gpu if torch.cuda.is_available() else "cpu")
        self.accelerator = "gpu" if torch.cuda.is_available() else "cpu"

        self.build_paths(mkdir)

    def build_paths(self, mkdir=True):
        self.smpl_model_path = self.root_dir / "src/imuposer/smpl/model.pkl"
        self.og_smpl_model_path = self.root_dir / "src/imuposer/smpl/basicmodel_m.pkl"
        self.vposer_ckpt_path = self.root_dir / "extern/vposer_v2_05"

        self.raw_data_path = self.root_dir / "data/raw"
        self.raw_amass_path = self.raw_data_path / "AMASS"
        self.raw_dip_path = self.raw_data_path / "DIP_IMU"
        self.processed_imu_poser = self.root_dir / "data/processed_imuposer"
        self.processed_imu_poser_25fps = self.root_dir / "data/processed_imuposer_25fps"

        self.checkpoint_path = self.root_dir / "checkpoints" / \
            ("%s-%s" % (self.experiment, datetime.datetime.now().strftime("%m%d%Y-%H%M%S")))
        if mkdir and self.experiment is not None:
            self.checkpoint_path.mkdir(exist_ok=True, parents=True)

    def to_dict(self):
        r"""
        Plain-python view of the experiment settings (logged as hyper-parameters).
        """
        keys = ['experiment', 'model', 'joints_set', 'normalize', 'r6d', 'loss_type', 'use_joint_loss',
                'use_glb_rot_loss', 'use_acc_recon_loss', 'pred_last_frame', 'use_vposer_loss', 'use_vel_loss',
                'gpu', 'max_sample_len', 'batch_size', 'lr']
        d = {k: getattr(self, k) for k in keys}
        d['device'] = str(self.device)
        d['root_dir'] = str(self.root_dir)
        return d

    def __repr__(self):
        return 'Config(%s)' % ', '.join('%s=%r' % kv for kv in self.to_dict().items())

    # dataset / training constants
    max_sample_len = 300
    acc_scale = 30
    vel_scale = 3
    torch_seed = 0
    batch_size = 256
    num_workers = 8
    max_epochs = 200
    lr = 3e-4

    amass_datasets = ['ACCAD', 'BioMotionLab_NTroje', 'BMLhandball', 'BMLmovi', 'CMU',
                      'DanceDB', 'DFaust_67', 'EKUT', 'Eyes_Japan_Dataset', 'HUMAN4D',
                      'HumanEva', 'KIT', 'MPI_HDM05', 'MPI_Limits', 'MPI_mosh', 'SFU',
                      'SSM_synced', 'TCD_handMocap', 'TotalCapture', 'Transitions_mocap']

    # SMPL vertex ids where the consumer devices are worn
    # left wrist (watch), right wrist (watch), left pocket (phone), right pocket (phone), head (earbuds)
    vi_mask = torch.tensor([1961, 5424, 1176, 4662, 411])
    ji_mask = torch.tensor([18, 19, 1, 2, 15])

    # device combinations evaluated in the paper (which subset of the 5 locations is available)
    pred_combos = {
        'lw_rp_h': [0, 3, 4],
        'rw_rp_h': [1, 3, 4],
        'lw_lp_h': [0, 2, 4],
        'rw_lp_h': [1, 2, 4],
        'lw_lp': [0, 2],
        'lw_rp': [0, 3],
        'rw_lp': [1, 2],
        'rw_rp': [1, 3],
        'lp_h': [2, 4],
        'rp_h': [3, 4],
        'lp': [2],
        'rp': [3],
    }


amass_combos = Config.pred_combos
leaf_joints = [20, 21, 7, 8, 12]
