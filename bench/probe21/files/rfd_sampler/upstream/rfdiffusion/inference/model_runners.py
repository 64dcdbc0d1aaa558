import torch
import numpy as np
from omegaconf import DictConfig, OmegaConf
from rfdiffusion.RoseTTAFoldModel import RoseTTAFoldModule
from rfdiffusion.kinematics import get_init_xyz, xyz_to_t2d
from rfdiffusion.diffusion import Diffuser
from rfdiffusion.chemical import seq2chars
from rfdiffusion.util_module import ComputeAllAtomCoords
from rfdiffusion.contigs import ContigMap
from rfdiffusion.inference import utils as iu, symmetry
from rfdiffusion.potentials.manager import PotentialManager
import logging
import torch.nn.functional as nn
from rfdiffusion import util
from hydra.core.hydra_config import HydraConfig
import os

from rfdiffusion.model_input_logger import pickle_function_call

SCRIPT_DIR = os.path.dirname(os.path.realpath(__file__))

TOR_INDICES = util.torsion_indices
TOR_CAN_FLIP = util.torsion_can_flip
REF_ANGLES = util.reference_angles


class Sampler:

    def __init__(self, conf: DictConfig):
        """
        Initialize sampler.
        Args:
            conf: Configuration.
        """
        self.initialized = False
        self.initialize(conf)

    def initialize(self, conf: DictConfig) -> None:
        self._log = logging.getLogger(__name__)
        if torch.cuda.is_available():
            self.device = torch.device("cuda")
        else:
            self.device = torch.device("cpu")
        needs_model_reload = not self.initialized or conf.inference.ckpt_override_path != self._conf.inference.ckpt_override_path

        # Assign config to Sampler
        self._conf = conf

        # Initialize inference only helper objects to Sampler
        self.ckpt_path = conf.inference.ckpt_override_path or os.path.join(SCRIPT_DIR, "../../models/Base_ckpt.pt")

        if needs_model_reload:
            # Load checkpoint, so that we can assemble the config
            self.load_checkpoint()
            self.assemble_config_from_chk()
            # Now actually load the model weights into RF
            self.model = self.load_model()
        else:
            self.assemble_config_from_chk()

        # self.initialize_sampler(conf)
        self.initialized = True

        # Initialize helper objects
        self.inf_conf = self._conf.inference
        self.contig_conf = self._conf.contigmap
        self.denoiser_conf = self._conf.denoiser
        self.ppi_conf = self._conf.ppi
        self.potential_conf = self._conf.potentials
        self.diffuser_conf = self._conf.diffuser
        self.preprocess_conf = self._conf.preprocess

        self.diffuser = Diffuser(**self._conf.diffuser, cache_dir=os.path.join(SCRIPT_DIR, "../../schedules"))

        if self.inf_conf.symmetry is not None:
            self.symmetry = symmetry.SymGen(
                self.inf_conf.symmetry,
                self.inf_conf.recenter,
                self.inf_conf.radius,
                self.inf_conf.model_only_neighbors,
            )
        else:
            self.symmetry = None

        self.allatom = ComputeAllAtomCoords().to(self.device)

        if self.inf_conf.input_pdb is None:
            # set default pdb
            self.inf_conf.input_pdb = os.path.join(SCRIPT_DIR, "../../examples/input_pdbs/1qys.pdb")
        self.target_feats = iu.process_target(self.inf_conf.input_pdb, parse_hetatom=True, center=False)
        self.chain_idx = None

        # Get recycle schedule
        recycle_schedule = str(self.inf_conf.recycle_schedule) if self.inf_conf.recycle_schedule is not None else None
        self.recycle_schedule = iu.recycle_schedule(self.T, recycle_schedule, self.inf_conf.num_recycles)

    @property
    def T(self):
        return self.diffuser_conf.T

    def load_checkpoint(self) -> None:
        """Loads RF checkpoint, from which config can be generated."""
        self._log.info(f"Reading checkpoint from {self.ckpt_path}")
        print("This is inf_conf.ckpt_path")
        print(self.ckpt_path)
        self.ckpt = torch.load(self.ckpt_path, map_location=self.device)

    def assemble_config_from_chk(self) -> None:
        overrides = []
        if HydraConfig.initialized():
            overrides = HydraConfig.get().overrides.task
        print("Assembling -model, -diffuser and -preprocess configs from checkpoint")
        for cat in ["model", "diffuser", "preprocess"]:
            for key in self._conf[cat]:
                try:
                    print(f"USING MODEL CONFIG: self._conf[{cat}][{key}] = {self.ckpt['config_dict'][cat][key]}")
                    self._conf[cat][key] = self.ckpt["config_dict"][cat][key]
                except:
                    pass
        for override in overrides:
            if override.split(".")[0] in ["model", "diffuser", "preprocess"]:
                print(f"WARNING: You are changing {override.split('=')[0]} from the value found in the checkpoint.")
                mytype = type(self._conf[override.split(".")[0]][override.split(".")[1].split("=")[0]])
                self._conf[override.split(".")[0]][override.split(".")[1].split("=")[0]] = mytype(override.split("=")[1])

    def load_model(self):
        """Create RosettaFold model from preloaded checkpoint."""
        self.d_t1d = self._conf.preprocess.d_t1d
        self.d_t2d = self._conf.preprocess.d_t2d
        model = RoseTTAFoldModule(**self._conf.model, d_t1d=self.d_t1d, d_t2d=self.d_t2d, T=self._conf.diffuser.T).to(self.device)
        if self._conf.logging.inputs:
            pickle_dir = pickle_function_call(model, "forward", "inference")
            print(f"pickle_dir: {pickle_dir}")
        model = model.eval()
        self._log.info(f"Loading checkpoint.")
        model.load_state_dict(self.ckpt["model_state_dict"], strict=True)
        return model

    def _preprocess(self, seq, xyz_t, t, repack=False):
        L = seq.shape[0]
        T = self.T
        binderlen = self.binderlen
        target_res = self.ppi_conf.hotspot_res

        seq_tmp = torch.full((1, 1, L, 22), 0.0)
        seq_tmp[0, 0] = seq
        msa_masked = torch.zeros((1, 1, L, 48))
        msa_masked[:, :, :, :22] = seq[None, None]
        msa_masked[:, :, :, 22:44] = seq[None, None]
        msa_full = torch.zeros((1, 1, L, 25))
        msa_full[:, :, :, :22] = seq[None, None]
        t1d = torch.zeros((1, 1, L, 21))
        t1d[:, :, :, :21] = seq[None, None, :, :21]
        t1d[:, :, :, 21] = (1 - t / T)[None]

        xyz_t = get_init_xyz(xyz_t[None, None]).squeeze(0)
        t2d = xyz_to_t2d(xyz_t)
        idx = torch.tensor(self.contig_map.rf)[None]
        seq_tmp = seq_tmp.cuda()
        msa_masked = msa_masked.cuda()
        msa_full = msa_full.cuda()
        t1d = t1d.cuda()
        t2d = t2d.cuda()
        idx = idx.cuda()
        xyz_t = xyz_t.to(self.device)
        return msa_masked, msa_full, seq_tmp, xyz_t, idx, t1d, t2d

    def sample_step(self, *, t, x_t, seq_init, final_step):
        msa_masked, msa_full, seq_in, xt_in, idx_pdb, t1d, t2d = self._preprocess(seq_init, x_t, t)
        N, L = msa_masked.shape[:2]
        with torch.no_grad():
            msa_prev, pair_prev, px0, state_prev, alpha, logits, plddt = self.model(
                msa_masked, msa_full, seq_in, xt_in, idx_pdb, t1d=t1d, t2d=t2d,
                msa_prev=None, pair_prev=None, state_prev=None, return_infer=True,
            )
        # prediction of X0
        _, px0 = self.allatom(torch.argmax(seq_in, dim=-1), px0, alpha)
        px0 = px0.squeeze()[:, :14]
        x_t_1, seq_t_1, tors_t_1, px0 = self.denoiser.get_next_pose(
            xt=x_t, px0=px0, t=t, diffusion_mask=self.mask_str.squeeze(),
            align_motif=self.inf_conf.align_motif,
        )
        return px0, x_t_1, seq_t_1, plddt.cpu()
