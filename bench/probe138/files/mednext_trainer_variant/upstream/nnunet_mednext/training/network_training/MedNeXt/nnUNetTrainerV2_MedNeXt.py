import torch
import torch.nn as nn

from nnunet_mednext.training.network_training.nnUNetTrainerV2 import nnUNetTrainerV2
from nnunet_mednext.network_architecture.mednextv1.MedNextV1 import MedNeXt as MedNeXt_Orig
from nnunet_mednext.utilities.nd_softmax import softmax_helper
from nnunet_mednext.run.load_weights import upkern_load_weights


class MedNeXt(MedNeXt_Orig, nn.Module):
    """Thin wrapper so that nnU-Net's SegmentationNetwork-style code (do_ds, inference_apply_nonlin,
    get_device) keeps working with the MedNeXt architecture."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.do_ds = self.do_ds if hasattr(self, 'do_ds') else True
        self.inference_apply_nonlin = softmax_helper
        self.num_classes = kwargs['n_classes']
        self.conv_op = nn.Conv3d
        self.input_shape_must_be_divisible_by = 2 ** 4

    def get_device(self):
        # used by nnU-Net's sliding window code
        if next(self.parameters()).device.type == "cpu":
            return "cpu"
        return next(self.parameters()).device.index


class nnUNetTrainerV2_Optim_and_LR(nnUNetTrainerV2):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial_lr = 1e-3

    def process_plans(self, plans):
        super().process_plans(plans)
        # Please don't do this for nnunet. This is only for MedNeXt for all the DS to be used
        num_of_outputs_in_mednext = 5
        self.net_num_pool_op_kernel_sizes = [[2, 2, 2] for i in range(num_of_outputs_in_mednext + 1)]

    def initialize_optimizer_and_scheduler(self):
        assert self.network is not None, "self.initialize_network must be called first"
        self.optimizer = torch.optim.AdamW(self.network.parameters(),
                                           self.initial_lr,
                                           weight_decay=self.weight_decay,
                                           eps=1e-4  # 1e-8 might cause nans in fp16
                                           )
        self.lr_scheduler = None


class nnUNetTrainerV2_MedNeXt_base(nnUNetTrainerV2_Optim_and_LR):
    """All MedNeXt sizes share this; subclasses only change the architecture kwargs."""

    mednext_kwargs = dict(
        n_channels=32,
        exp_r=2,
        kernel_size=3,
        deep_supervision=True,
        do_res=True,
        do_res_up_down=True,
        block_counts=[2, 2, 2, 2, 2, 2, 2, 2, 2],
        checkpoint_style=None,
    )

    def initialize_network(self):
        self.network = MedNeXt(
            in_channels=self.num_input_channels,
            n_classes=self.num_classes,
            **self.mednext_kwargs
        )

        if torch.cuda.is_available():
            self.network.cuda()


class nnUNetTrainerV2_MedNeXt_S_kernel3(nnUNetTrainerV2_MedNeXt_base):
    mednext_kwargs = dict(nnUNetTrainerV2_MedNeXt_base.mednext_kwargs)


class nnUNetTrainerV2_MedNeXt_B_kernel3(nnUNetTrainerV2_MedNeXt_base):
    mednext_kwargs = dict(nnUNetTrainerV2_MedNeXt_base.mednext_kwargs,
                          exp_r=[2, 3, 4, 4, 4, 4, 4, 3, 2])


class nnUNetTrainerV2_MedNeXt_M_kernel3(nnUNetTrainerV2_MedNeXt_base):
    mednext_kwargs = dict(nnUNetTrainerV2_MedNeXt_base.mednext_kwargs,
                          exp_r=[2, 3, 4, 4, 4, 4, 4, 3, 2],
                          block_counts=[3, 4, 4, 4, 4, 4, 4, 4, 3],
                          checkpoint_style='outside_block')


class nnUNetTrainerV2_MedNeXt_L_kernel3(nnUNetTrainerV2_MedNeXt_base):
    mednext_kwargs = dict(nnUNetTrainerV2_MedNeXt_base.mednext_kwargs,
                          exp_r=[3, 4, 8, 8, 8, 8, 8, 4, 3],
                          block_counts=[3, 4, 8, 8, 8, 8, 8, 4, 3],
                          checkpoint_style='outside_block')


class nnUNetTrainerV2_MedNeXt_L_kernel5(nnUNetTrainerV2_MedNeXt_L_kernel3):
    mednext_kwargs = dict(nnUNetTrainerV2_MedNeXt_L_kernel3.mednext_kwargs, kernel_size=5)


class nnUNetTrainerV2_MedNeXt_L_kernel5_upkern(nnUNetTrainerV2_MedNeXt_L_kernel5):
    """UpKern: initialise the k5 network from a trained k3 network by trilinearly upsampling the kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # path to the model_final_checkpoint.model of the matching *_kernel3 run
        self.pretrained_k3_checkpoint = None

    def initialize(self, training=True, force_load_plans=False):
        super().initialize(training, force_load_plans)
        if self.pretrained_k3_checkpoint is None:
            return
        self.print_to_log_file("UpKern: loading kernel-3 weights from", self.pretrained_k3_checkpoint)
        saved_model = torch.load(self.pretrained_k3_checkpoint, map_location=torch.device('cpu'))
        pretrained_model = MedNeXt(in_channels=self.num_input_channels, n_classes=self.num_classes,
                                   **nnUNetTrainerV2_MedNeXt_L_kernel3.mednext_kwargs)
        pretrained_model.load_state_dict(saved_model['state_dict'])
        self.network = upkern_load_weights(self.network, pretrained_model)
        # upkern_load_weights builds new tensors on the CPU
        self.network = self.network.to(next(pretrained_model.parameters()).device)
        if torch.cuda.is_available():  # back onto the accelerator after UpKern
            self.network = self.network.cuda()
        del pretrained_model
