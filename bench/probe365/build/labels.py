"""Labels for probe365 (remote photoplethysmography / camera-based vital signs, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit for an explicit
torch_npu port (torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


EXPL = "explicit_replacement"
BRANCH = "device_branch_or_abstraction"
KERNEL = "kernel_rewrite"

# ---------------------------------------------------------------------------------------------
# rPPG-Toolbox (ubicomp-lab/rPPG-Toolbox)
# ---------------------------------------------------------------------------------------------
E("tbx_main", "main.py", EXPL, "ubicomp-lab/rPPG-Toolbox main.py (seeding, dataloaders, trainer dispatch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; the port pins torch 2.1.x + torch_npu 2.1.0.postN (setup.sh), which has no device-backend "
      "autoload (only from 2.5.1), so torch.npu / 'npu:0' from the config need the explicit import."),
    C("torch.cuda.manual_seed(RANDOM_SEED)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(RANDOM_SEED)",
      "torch.cuda.manual_seed is lazy and silently queued on a host without CUDA, and torch.manual_seed on the "
      "line above already seeds registered accelerator backends (unconfirmed in the knowledge base), so this "
      "is hygiene/reproducibility, not a failure."),
])

E("tbx_config", "config.py", EXPL, "ubicomp-lab/rPPG-Toolbox config.py (yacs defaults)", [
    C('_C.DEVICE = "cuda:0"', "device_type", "replace", True,
      '_C.DEVICE = "npu:0"',
      "Default device string consumed by every trainer via torch.device(config.DEVICE); YAMLs that omit DEVICE "
      "fall back to it, and torch.device('cuda:0') tensors fail on an NPU host."),
])

E("tbx_yaml_physnet", "configs/train_configs/PURE_PURE_UBFC-rPPG_PHYSNET_BASIC.yaml", EXPL,
  "ubicomp-lab/rPPG-Toolbox configs/train_configs/*_PHYSNET_BASIC.yaml", [
    C("=DEVICE: cuda:0", "device_type", "replace", True,
      "DEVICE: npu:0",
      "The YAML overrides the config.py default, so it must be ported too. NUM_OF_GPU_TRAIN is left alone (a count)."),
])

E("tbx_yaml_physmamba", "configs/train_configs/UBFC-rPPG_UBFC-rPPG_PURE_PHYSMAMBA_BASIC.yaml", EXPL,
  "ubicomp-lab/rPPG-Toolbox configs/train_configs/*_PHYSMAMBA_BASIC.yaml", [
    C("=DEVICE: cuda:0", "device_type", "replace", True,
      "DEVICE: npu:0",
      "Same as the PhysNet YAML: per-experiment override of the device string."),
])

E("tbx_physnet_trainer", "neural_methods/trainer/PhysnetTrainer.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/trainer/PhysnetTrainer.py", [
    C("self.model.load_state_dict(torch.load(self.config.INFERENCE.MODEL_PATH))", "tensor_to_device", "replace", True,
      "self.model.load_state_dict(torch.load(self.config.INFERENCE.MODEL_PATH, map_location=self.device))",
      "only_test loads the released PreTrainedModels .pth files, saved from CUDA training; without map_location "
      "torch.load tries to restore CUDA storages and fails on a host without CUDA. The self-trained checkpoint "
      "loads below are saved by this (NPU) run and are left alone."),
])

E("tbx_tscan_trainer", "neural_methods/trainer/TscanTrainer.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/trainer/TscanTrainer.py", [
    C("self.model = torch.nn.DataParallel(self.model, device_ids=list(range(config.NUM_OF_GPU_TRAIN)))",
      "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)  # torch.nn.DataParallel is unsupported on NPU; single device",
      "torch.nn.DataParallel is marked unsupported (✘) on Atlas A2/A3 in Ascend's 2.7.1 API list and in the "
      "msFmkTransplt unsupported list; the toolbox trains on one device (NUM_OF_GPU_TRAIN: 1) anyway."),
    C("self.model = torch.nn.DataParallel(self.model, device_ids=list(range(self.num_of_gpu)))",
      "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)  # torch.nn.DataParallel is unsupported on NPU; single device",
      "Same DataParallel wrap in the only_test branch."),
    C("self.model.load_state_dict(torch.load(self.config.INFERENCE.MODEL_PATH))", "tensor_to_device", "replace", True,
      "self.model.load_state_dict(OrderedDict((k.replace('module.', '', 1), v) for k, v in "
      "torch.load(self.config.INFERENCE.MODEL_PATH, map_location=self.device).items()))",
      "Released TS-CAN weights were saved from a CUDA DataParallel model: they need map_location, and once "
      "DataParallel is dropped the 'module.' key prefix must be stripped or load_state_dict raises."),
])

E("tbx_physmamba_trainer", "neural_methods/trainer/PhysMambaTrainer.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/trainer/PhysMambaTrainer.py", [
    C("self.model = torch.nn.DataParallel(self.model, device_ids=list(range(config.NUM_OF_GPU_TRAIN)))",
      "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)  # torch.nn.DataParallel is unsupported on NPU; single device",
      "DataParallel is ✘ on Ascend (2.7.1 API list)."),
    C("self.model = torch.nn.DataParallel(self.model, device_ids=list(range(self.num_of_gpu)))",
      "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)  # torch.nn.DataParallel is unsupported on NPU; single device",
      "only_test branch, same reason."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised, so nothing fails; porting it only "
      "restores the intended release of cached NPU memory between epochs (memory/performance)."),
    C("self.model.load_state_dict(torch.load(self.config.INFERENCE.MODEL_PATH))", "tensor_to_device", "replace", True,
      "self.model.load_state_dict(OrderedDict((k.replace('module.', '', 1), v) for k, v in "
      "torch.load(self.config.INFERENCE.MODEL_PATH, map_location=self.device).items()))",
      "Released PhysMamba weights: CUDA storages plus DataParallel 'module.' prefix (OrderedDict import needed)."),
])

E("tbx_physmamba_model", "neural_methods/model/PhysMamba.py", KERNEL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/model/PhysMamba.py (mamba_ssm blocks)", [
    C("from mamba_ssm.modules.mamba_simple import Mamba", "custom_cuda_extension", "replace", True,
      "from neural_methods.model.mamba_ref import Mamba  # pure-PyTorch selective scan + causal conv1d, no CUDA kernels",
      "mamba_ssm imports selective_scan_cuda / causal_conv1d_cuda, compiled with nvcc; there is no Ascend build. "
      "The port swaps in a reference (torch-op) implementation with the same constructor (bimamba flag)."),
])

E("tbx_physnet_model", "neural_methods/model/PhysNet.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/model/PhysNet.py", [])

E("tbx_post_process", "evaluation/post_process.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox evaluation/post_process.py (numpy/scipy HR and SNR)", [])

E("tbx_rhythm_loss", "neural_methods/loss/RythmFormerLossComputer.py", EXPL,
  "ubicomp-lab/rPPG-Toolbox neural_methods/loss/RythmFormerLossComputer.py", [])

E("tbx_setup", "setup.sh", EXPL, "ubicomp-lab/rPPG-Toolbox setup.sh (conda/uv env + mamba build)", [
    C("=PIP=${PIP:-pip}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "Only the final import check in this script needs the CANN environment; the runtime launch needs it too, "
      "but that lives outside this file."),
    C("torch==2.1.2+cu121", "import_torch_npu", "replace", True,
      "$PIP install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post12",
      "cu121 wheels are CUDA builds; torch_npu 2.1.0.postN pairs with torch 2.1.0 exactly (version matrix), "
      "so torch is also pinned down from 2.1.2."),
    C("export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}", "env_var", "removal", False,
      None,
      "Only feeds the nvcc build removed below; inert on its own."),
    C("=python setup.py install", "custom_cuda_extension", "removal", True,
      None,
      "Builds mamba_ssm / causal-conv1d CUDA kernels with nvcc; fails without a CUDA toolkit and is replaced by "
      "the pure-PyTorch Mamba reference."),
    C("python -c \"import torch; print('torch'", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npu available:', torch.npu.is_available())\"",
      "Diagnostic print only; it would just print False."),
])

# ---------------------------------------------------------------------------------------------
# PhysFormer (ZitongYu/PhysFormer)
# ---------------------------------------------------------------------------------------------
E("pf_train", "train_Physformer_160_VIPL.py", EXPL, "ZitongYu/PhysFormer train_Physformer_160_VIPL.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script using .npu(); needed on the pre-2.5.1 torch_npu the port targets."),
    C("model.load_state_dict(torch.load(args.pretrained))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.pretrained, map_location='cpu'))",
      "Finetuning starts from released CUDA-trained .pkl weights; map_location avoids CUDA deserialisation."),
    C("model = model.cuda()  # move to GPU before the optimizer is built", "tensor_to_device", "replace", True,
      "model = model.npu()  # move to NPU before the optimizer is built",
      ".cuda() fails on an NPU host."),
    C("=model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Train-from-scratch branch."),
    C("inputs, ecg = sample_batched['video_x'].cuda(), sample_batched['ecg'].cuda()", "tensor_to_device", "replace", True,
      "inputs, ecg = sample_batched['video_x'].npu(), sample_batched['ecg'].npu()",
      "Batch to device."),
    C("clip_average_HR, frame_rate = sample_batched['clip_average_HR'].cuda(), sample_batched['frame_rate'].cuda()",
      "tensor_to_device", "replace", True,
      "clip_average_HR, frame_rate = sample_batched['clip_average_HR'].npu(), sample_batched['frame_rate'].npu()",
      "Labels used by the frequency-domain losses."),
    C("inputs = sample_batched['video_x'].cuda()", "tensor_to_device", "replace", True,
      "inputs = sample_batched['video_x'].npu()",
      "Validation clips."),
    C("frame_rate = sample_batched['frame_rate'].cuda()", "tensor_to_device", "replace", True,
      "frame_rate = sample_batched['frame_rate'].npu()",
      "Unused afterwards, but the .cuda() call itself raises."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "--gpu selects the card (default 2). CUDA_VISIBLE_DEVICES is ignored by the NPU runtime, so the job would "
      "silently run on npu:0; set_device is used rather than ASCEND_RT_VISIBLE_DEVICES because the variable is "
      "set after torch/torch_npu are imported and the runtime read time is unconfirmed."),
])

E("pf_loss", "TorchLossComputer.py", EXPL, "ZitongYu/PhysFormer TorchLossComputer.py (spectral CE / DLDL losses)", [
    C("k = k.type(torch.FloatTensor).cuda()", "tensor_to_device", "replace", True,
      "k = k.type(torch.FloatTensor).npu()", "Frequency bins moved to the accelerator."),
    C("two_pi_n_over_N = two_pi_n_over_N.cuda()", "tensor_to_device", "replace", True,
      "two_pi_n_over_N = two_pi_n_over_N.npu()", "DFT phase vector."),
    C("hanning = hanning.cuda()", "tensor_to_device", "replace", True,
      "hanning = hanning.npu()", "Hann window."),
    C("output = output.view(1, 1, -1).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "output = output.view(1, 1, -1).type(torch.npu.FloatTensor)",
      "Legacy CUDA tensor type: .type(torch.cuda.FloatTensor) raises without CUDA."),
    C("=bpm_range = torch.arange(40, 180, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
      "bpm_range = torch.arange(40, 180, dtype=torch.float).npu()",
      "cross_entropy_power_spectrum_loss. The commented-out variants nearby are left alone."),
    C("bpm_range = torch.arange(40, 180, dtype=torch.float, device='cuda')", "device_type", "replace", True,
      "bpm_range = torch.arange(40, 180, dtype=torch.float, device='npu')",
      "Focal-loss variant; not called by the VIPL script, but fails whenever it is used."),
    C("bpm_range = torch.arange(40, 190, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
      "bpm_range = torch.arange(40, 190, dtype=torch.float).npu()",
      "forward_pred, used by the inference script."),
    C("target_distribution = torch.Tensor(target_distribution).cuda()", "tensor_to_device", "replace", True,
      "target_distribution = torch.Tensor(target_distribution).npu()", "Label distribution for the KL term."),
    C("rank = torch.Tensor([i for i in range(140)]).cuda()", "tensor_to_device", "replace", True,
      "rank = torch.Tensor([i for i in range(140)]).npu()",
      "Unused value, but the .cuda() call raises."),
    C("bpm_range = torch.arange(40, 180, dtype=torch.float).to('cuda')", "device_type", "replace", True,
      "bpm_range = torch.arange(40, 180, dtype=torch.float).to('npu')", "DLDL loss used in training."),
])

E("pf_model", "model/Physformer.py", EXPL, "ZitongYu/PhysFormer model/Physformer.py (ViT_ST_ST_Compact3_TDC_gra_sharp)", [])

E("pf_infer", "inference_OneSample_VIPL_PhysFormer.py", EXPL,
  "ZitongYu/PhysFormer inference_OneSample_VIPL_PhysFormer.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "Pins card 0, which is the NPU default anyway; inert if left (contrast with --gpu in the training script)."),
    C("model.load_state_dict(torch.load(args.checkpoint))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.checkpoint, map_location='cpu'))",
      "Released checkpoint trained on a V100 (CUDA storages)."),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Model to device."),
    C("inputs = torch.from_numpy(video_x.astype(np.float32)).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "inputs = torch.from_numpy(video_x.astype(np.float32)).unsqueeze(0).npu()", "Input clip."),
    C("torch.tensor(args.fps).cuda()", "tensor_to_device", "replace", True,
      "hr_dl = TorchLossComputer.cross_entropy_power_spectrum_forward_pred(rPPG[0], torch.tensor(args.fps).npu())",
      "Frame-rate tensor."),
])

# ---------------------------------------------------------------------------------------------
# Contrast-Phys (zhaodongsun/contrast-phys)
# ---------------------------------------------------------------------------------------------
E("cp_train", "train.py", BRANCH, "zhaodongsun/contrast-phys train.py (sacred experiment)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Needed for torch.npu.is_available() in the device branch (pre-2.5.1 torch_npu)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Module-level device branch: unported, training silently falls back to CPU on an NPU host."),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')", "Branch body. The cudnn flags under it are inert and left alone."),
])

E("cp_test", "test.py", BRANCH, "zhaodongsun/contrast-phys test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script with torch.npu.is_available()."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "Inference would otherwise silently run on CPU."),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')", "torch.load already passes map_location=device, so no other change."),
])

E("cp_loss", "loss.py", EXPL, "zhaodongsun/contrast-phys loss.py (PSD contrastive loss, IPR)", [])
E("cp_model", "PhysNetModel.py", EXPL, "zhaodongsun/contrast-phys PhysNetModel.py (ST-rPPG block)", [])
E("cp_data", "utils_data.py", EXPL, "zhaodongsun/contrast-phys utils_data.py (H5 datasets)", [])

# ---------------------------------------------------------------------------------------------
# pyVHR (phuselab/pyVHR)
# ---------------------------------------------------------------------------------------------
E("pyvhr_methods", "pyVHR/BVP/methods.py", BRANCH, "phuselab/pyVHR pyVHR/BVP/methods.py (cpu_/cupy_/torch_ rPPG methods)", [
    C("=import cupy", "custom_cuda_extension", "replace", True,
      "cupy = None  # CuPy has no Ascend backend; GPU requests go through the torch_* methods on NPU",
      "The NPU environment has no cupy (see pyVHR_env.yml), so the unconditional import fails. The cupy_* "
      "bodies become dead code; the torch_* twins carry the accelerator path."),
])

E("pyvhr_bvp", "pyVHR/BVP/BVP.py", BRANCH, "phuselab/pyVHR pyVHR/BVP/BVP.py (RGB->BVP dispatcher)", [
    C("=import cupy", "custom_cuda_extension", "replace", True,
      "cupy = None  # no CuPy on Ascend; device_type='torch' runs on NPU",
      "Unconditional import."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Decides where torch_* methods run; unported they silently run on CPU."),
    C("TORCH_DEVICE = torch.device('cuda:0')", "device_type", "replace", True,
      "TORCH_DEVICE = torch.device('npu:0')", "Device used by signals_to_bvps_torch."),
])

E("pyvhr_bpm", "pyVHR/BPM/BPM.py", BRANCH, "phuselab/pyVHR pyVHR/BPM/BPM.py (Welch BPM, cpu/cupy)", [
    C("=import cupy", "custom_cuda_extension", "replace", True,
      "cupy = None  # BPMcuda / BVP_to_BPM_cuda are not used on Ascend",
      "Unconditional import."),
    C("import cupyx.scipy.signal as cusignal", "custom_cuda_extension", "removal", True,
      None, "Unused cupyx import that still fails without cupy."),
])

E("pyvhr_sigproc", "pyVHR/extraction/sig_processing.py", BRANCH,
  "phuselab/pyVHR pyVHR/extraction/sig_processing.py (MediaPipe skin/landmark signal extraction)", [
    C("from numba import cuda", "torch_cuda_api", "replace", True,
      "import torch  # numba.cuda device helpers are replaced by torch.npu",
      "The ported helper bodies below call torch.npu, so this module needs torch."),
    C("cuda.select_device(n)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(n)",
      "numba.cuda.select_device raises CudaSupportError without a CUDA driver; the pipeline calls it whenever "
      "cuda=True (the default)."),
    C("cuda.detect()", "torch_cuda_api", "replace", False,
      "print(torch.npu.device_count(), 'NPU(s):', torch.npu.get_device_name(0))",
      "numba's detect() just prints that no CUDA device was found and returns False; informational only."),
])

E("pyvhr_pipeline", "pyVHR/analysis/pipeline.py", BRANCH, "phuselab/pyVHR pyVHR/analysis/pipeline.py (Pipeline.run_on_video)", [
    C("method='cupy_POS', bpm_type='welch'", "device_type", "replace", True,
      "method='torch_POS', bpm_type='welch', pre_filt=False, post_filt=True, verb=True):",
      "The default rPPG method is the CuPy one; on Ascend the default becomes the torch twin (runs on NPU)."),
    C("target_device = 'GPU' if cuda else 'CPU'", "device_type", "replace", True,
      "target_device = 'CPU'  # the skin extractors' 'GPU' path is CuPy-based",
      "SkinExtractionConvexHull/FaceParsing('GPU') use CuPy; MediaPipe itself is CPU anyway."),
    C("method_device = 'cuda'", "device_type", "replace", False,
      "raise ValueError('cupy_* methods are unavailable on Ascend; use the torch_* variant')",
      "Only reached when the user explicitly names a cupy_* method; turns a NameError/AttributeError into a "
      "clear message."),
    C("bpmES = BVP_to_BPM_cuda(bvps, fps, minHz=Pipeline.minHz, maxHz=Pipeline.maxHz)", "device_type", "replace", True,
      "bpmES = BVP_to_BPM(bvps, fps, minHz=Pipeline.minHz, maxHz=Pipeline.maxHz)",
      "The GPU Welch estimator is CuPy-only; the numpy one is used (the signals are tiny)."),
])

E("pyvhr_env", "pyVHR_env.yml", EXPL, "phuselab/pyVHR pyVHR_env.yml (conda environment)", [
    C("- cudatoolkit=11.3", "custom_cuda_extension", "removal", False,
      None, "CUDA runtime for cupy/pytorch-gpu; useless on Ascend. Whether it even resolves on aarch64 is unconfirmed."),
    C("- cupy=10.6", "custom_cuda_extension", "removal", False,
      None, "All cupy imports are ported away; whether conda can install it on the target host is unconfirmed."),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu wheels exist for 1.11/2.1+ but not 1.12.1; 2.1.0 pairs with torch_npu 2.1.0.postN."),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0",
      "Must match torch 2.1.0, otherwise the environment does not solve."),
    C("- mediapipe==0.8.10", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "pip entry added next to the other pip packages; nothing reaches the NPU without torch_npu."),
])

# ---------------------------------------------------------------------------------------------
# RhythmNet (AnweshCR7/RhythmNet, VIPL-HR STMap re-implementation)
# ---------------------------------------------------------------------------------------------
E("rn_config", "src/config.py", BRANCH, "AnweshCR7/RhythmNet src/config.py (module-level DEVICE global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "config is the first module that queries the device (imported by main/engine/loss), so torch_npu is loaded here."),
    C("DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "DEVICE = 'npu' if torch.npu.is_available() else 'cpu'",
      "Module-level device global; unported, RhythmNet silently trains on CPU."),
])

E("rn_main", "src/main.py", BRANCH, "AnweshCR7/RhythmNet src/main.py (k-fold training loop)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "Only a log message and the seeding below hang off this test."),
    C("torch.cuda.manual_seed_all(42)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(42)", "Reproducibility only."),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() > 1:", "Log-only block (the DataParallel wrap is commented out)."),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
      "print(\"Let's use\", torch.npu.device_count(), \"NPUs!\")", "Log only."),
])

E("rn_engine", "src/engine_vipl.py", EXPL, "AnweshCR7/RhythmNet src/engine_vipl.py (train/eval loops)", [])

E("rn_loss", "src/loss_func/rhythmnet_loss.py", EXPL, "AnweshCR7/RhythmNet src/loss_func/rhythmnet_loss.py", [
    C("self.device = 'cuda'", "device_type", "replace", True,
      "self.device = 'npu'",
      "Hard-coded device for the smoothness-loss accumulator; adding a 'cuda' tensor fails on an NPU host."),
])

E("rn_model_utils", "src/utils/model_utils.py", EXPL, "AnweshCR7/RhythmNet src/utils/model_utils.py (checkpointing)", [])

# ---------------------------------------------------------------------------------------------
# rPPG-MAE (MAE pre-training on STMaps; forks facebookresearch/mae)
# ---------------------------------------------------------------------------------------------
E("mae_main", "main_pretrain.py", EXPL, "rPPG-MAE main_pretrain.py (fork of facebookresearch/mae main_pretrain.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script (torchrun target)."),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "Default device string for torch.device(args.device); the launcher does not pass --device."),
    C("optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))",
      "Performance only (msFmkTransplt advice; the knowledge base notes about +70% memory for NpuFusedAdamW)."),
])

E("mae_misc", "util/misc.py", EXPL, "rPPG-MAE util/misc.py (fork of facebookresearch/mae util/misc.py)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL all_reduce needs a device tensor; fp64 is in hccl_test's datatype list, so the dtype stays."),
    C("if torch.cuda.is_available():  # report peak GPU memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # report peak NPU memory in the progress line",
      "Adds the 'max mem' field to the format string; unported, the log just lacks it."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Coupled to the line that builds log_msg: once that one is ported the format string contains {memory}, "
      "and leaving this test on CUDA takes the else branch, so format() raises KeyError('memory')."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "torch.cuda.max_memory_allocated returns 0 when CUDA is uninitialised; wrong log value only."),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host, so the modulo raises ZeroDivisionError."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "Per-rank device binding before HCCL init."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL does not exist on Ascend."),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "A CUDA GradScaler on a host without CUDA disables itself with a warning; with autocast ported to NPU fp16, "
      "the gradients would then be unscaled and underflow silently."),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "all_reduce_mean for logging across ranks."),
])

E("mae_engine", "engine_pretrain.py", EXPL, "rPPG-MAE engine_pretrain.py (fork of facebookresearch/mae engine_pretrain.py)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "On a host without CUDA, autocast('cuda') disables itself with a warning: pre-training silently runs in "
      "fp32, which is not the recipe (batch 128/device was sized for mixed precision)."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize lazily initialises CUDA and raises without it."),
])

E("mae_launch", "scripts/pretrain_vipl.sh", EXPL, "rPPG-MAE scripts/pretrain_*.sh (single-node torchrun launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "Four local ranks map to cards 0-3 even without it; it only keeps the intent on larger hosts."),
    C("=export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "Without the CANN environment, import torch_npu fails (libhccl.so / ASCEND_OPP_PATH errors)."),
    C("NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check", "replace", False,
      "NGPUS=$(npu-smi info -l | awk -F: '/Total Count/ {print $2}' | tr -d ' ')",
      "Only echoed; nvidia-smi is missing, so the banner would be wrong but nothing fails."),
])
