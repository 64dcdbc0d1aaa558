"""Labels for probe468 (event-camera vision: E2VID, E-RAFT, RVT, EV-FlowNet port, vid2e/esim_torch).

One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit torch_npu port).
required=True: with every other labelled line already ported, leaving this line as-is fails, computes
something wrong, or silently does the wrong thing on an NPU host.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu so torch.npu / the 'npu' device exist before any device code runs "
               "(autoloaded only from torch_npu 2.5.1; this code base predates that, so the explicit port adds it)")

# ---------------------------------------------------------------------------------------------------------------
# E2VID (uzh-rpg/rpg_e2vid)
# ---------------------------------------------------------------------------------------------------------------
E("e2vid_run", "run_reconstruction.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid run_reconstruction.py (entry script; device comes from utils.loading_utils.get_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("e2vid_loading", "utils/loading_utils.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid utils/loading_utils.py (load_model / get_device)", [
    C("raw_model = torch.load(path_to_model)", "tensor_to_device", "replace", True,
      "raw_model = torch.load(path_to_model, map_location='cpu')",
      "the released E2VID checkpoints hold CUDA tensors; without map_location torch.load raises on a host "
      "without CUDA. Weights are moved to the NPU afterwards by model.to(device)"),
    C("if use_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_gpu and torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host -> silently falls back to CPU"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True,
      "device = torch.device('npu:0')", "device used for the model and for the voxel grid"),
])

E("e2vid_timers", "utils/timers.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid utils/timers.py (CudaTimer built on CUDA events, Timer on wall clock)", [
    C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.start = torch.npu.Event(enable_timing=True)",
      "CudaTimer wraps every reconstruction step unconditionally; torch.cuda.Event cannot be created without CUDA"),
    C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.end = torch.npu.Event(enable_timing=True)", "same as start event"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
])

E("e2vid_reconstructor", "image_reconstructor.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid image_reconstructor.py (ImageReconstructor: preprocessing, recurrent inference, output)", [
    C("self.device = torch.device('cuda:0') if self.use_gpu else torch.device('cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu:0') if self.use_gpu else torch.device('cpu')",
      "second, independent device choice (events and the unsharp-mask kernel are moved here); must match the model's device"),
])

E("e2vid_inference_utils", "utils/inference_utils.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid utils/inference_utils.py (event preprocessing, rescaling, writers, voxel grid on device)", [
    C("DeviceTimer = CudaTimer if device.type == 'cuda' else Timer", "device_type", "replace", False,
      "DeviceTimer = CudaTimer if device.type == 'npu' else Timer",
      "only selects which timer records the voxel-grid timing statistics; unported it uses the wall-clock Timer "
      "(asynchronous NPU work is under-counted) but results are unchanged"),
])

E("e2vid_model", "model/model.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid model/model.py + model/unet.py (BaseE2VID, E2VIDRecurrent, UNetRecurrent)", [])

E("e2vid_submodules", "model/submodules.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid model/submodules.py (ConvLayer, ConvLSTM with device-following zero state, ConvGRU)", [])

E("e2vid_options", "options/inference_options.py", "explicit_replacement",
  "uzh-rpg/rpg_e2vid options/inference_options.py (argparse options incl. --use_gpu/--no-gpu)", [])

# ---------------------------------------------------------------------------------------------------------------
# E-RAFT (uzh-rpg/E-RAFT)
# ---------------------------------------------------------------------------------------------------------------
E("eraft_main", "main.py", "explicit_replacement",
  "uzh-rpg/E-RAFT main.py (DSEC/MVSEC test entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(config['test']['checkpoint'])", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(config['test']['checkpoint'], map_location='cpu')",
      "checkpoint saved from GPU training; deserialising CUDA storages fails without CUDA. The tester moves the "
      "model to the NPU afterwards"),
])

E("eraft_test", "test.py", "explicit_replacement",
  "uzh-rpg/E-RAFT test.py (Test / TestRaftEvents / TestRaftEventsWarm)", [
    C("if config['cuda'] and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if config['cuda'] and not torch.npu.is_available():",
      "unported, the warning branch is taken and self.gpu is never set -> AttributeError later"),
    C("self.gpu = torch.device('cuda:' + str(config['gpu']))", "device_type", "replace", True,
      "self.gpu = torch.device('npu:' + str(config['gpu']))", "device for model and batches"),
    C("if next(self.model.parameters()).is_cuda:", "device_type", "replace", True,
      "if next(self.model.parameters()).is_npu:",
      "is_cuda is False for NPU parameters -> batches stay on CPU and the forward pass hits a device mismatch"),
    C("self.flow_init = helper.forward_interpolate(flow_low_res[0])[None].cuda()", "tensor_to_device", "replace", True,
      "self.flow_init = helper.forward_interpolate(flow_low_res[0])[None].to(self.gpu)",
      "warm-start flow comes back from scipy on the CPU and must go to the model's device"),
])

E("eraft_helper", "utils/helper_functions.py", "explicit_replacement",
  "uzh-rpg/E-RAFT utils/helper_functions.py (move_*_to_cuda helpers use .to(gpu); path helpers)", [])

E("eraft_model", "model/eraft.py", "explicit_replacement",
  "uzh-rpg/E-RAFT model/eraft.py (RAFT adapted to event voxel grids)", [
    C("autocast = torch.cuda.amp.autocast", "amp", "replace", False,
      "autocast = torch.npu.amp.autocast",
      "mixed_precision is hard-coded False in get_args(), so every autocast region is disabled anyway; "
      "only matters if someone turns mixed precision on"),
])

E("eraft_corr", "model/corr.py", "explicit_replacement",
  "uzh-rpg/E-RAFT model/corr.py (CorrBlock + optional AlternateCorrBlock using the alt_cuda_corr extension)", [
    C("corr, = alt_cuda_corr.forward(fmap1_i, fmap2_i, coords_i, r)", "custom_cuda_extension", "replace", False,
      "raise NotImplementedError('alt_cuda_corr is CUDA-only; use CorrBlock (alternate_corr=False) on NPU')",
      "AlternateCorrBlock is only used with alternate_corr=True, which E-RAFT never sets; the default CorrBlock "
      "is plain matmul + grid_sample. Fail loudly instead of NameError if someone enables it"),
])

E("eraft_alt_setup", "alt_cuda_corr/setup.py", "kernel_rewrite",
  "princeton-vl/RAFT alt_cuda_corr/setup.py as vendored in E-RAFT (optional CUDA correlation kernel)", [])

E("eraft_config", "config/dsec_standard.json", "explicit_replacement",
  "uzh-rpg/E-RAFT config/dsec_standard.json", [])

E("eraft_env", "environment.yml", "explicit_replacement",
  "uzh-rpg/E-RAFT conda environment (PyTorch 1.7 + cudatoolkit 10.2)", [
    C("- python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 (the oldest line with a maintained torch_npu) supports Python 3.8-3.11 only"),
    C("- pytorch=1.7.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu wheel exists for torch 1.7; pair torch 2.1.0 with torch_npu 2.1.0.postN"),
    C("- torchvision=0.8.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.8.2 pins torch 1.7.1; 0.16.0 is the torch 2.1.0 companion"),
    C("- cudatoolkit=10.2", "import_torch_npu", "removal", False, None,
      "CUDA runtime is useless on Ascend; leaving it probably only wastes space (unconfirmed whether it breaks "
      "the solve on aarch64)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu itself (2.1.0.post12 pairs with CANN 8.1.RC1 per the compatibility matrix)"),
])

# ---------------------------------------------------------------------------------------------------------------
# RVT (uzh-rpg/RVT) - PyTorch Lightning + hydra, YOLOX head
# ---------------------------------------------------------------------------------------------------------------
E("rvt_train", "train.py", "explicit_replacement",
  "uzh-rpg/RVT train.py (hydra entry, Lightning Trainer, DDPStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("assert distributed_backend in ('nccl', 'gloo')", "dist_backend", "replace", True,
      "assert distributed_backend in ('hccl', 'gloo'), f'{distributed_backend=}'",
      "backend-string check; with config.hardware.dist_backend ported to hccl the assert fires"),
    C("accelerator='gpu',", "device_type", "replace", True, "accelerator='npu',",
      "Lightning's 'gpu' accelerator requires CUDA. 'npu' needs an NPU accelerator registered for "
      "pytorch_lightning (not built into PL 1.8.6; unconfirmed which plugin the porter would use)"),
])

E("rvt_validation", "validation.py", "explicit_replacement",
  "uzh-rpg/RVT validation.py (evaluation entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("accelerator='gpu',", "device_type", "replace", True, "accelerator='npu',",
      "same as train.py"),
])

E("rvt_general_yaml", "config/general.yaml", "explicit_replacement",
  "uzh-rpg/RVT config/general.yaml (hardware / training defaults)", [
    C('dist_backend: "nccl"', "dist_backend", "replace", True, 'dist_backend: "hccl"',
      "passed to DDPStrategy(process_group_backend=...); NCCL does not exist on Ascend"),
])

E("rvt_detection", "modules/detection.py", "explicit_replacement",
  "uzh-rpg/RVT modules/detection.py (LightningModule: recurrent backbone + YOLOX, Prophesee evaluation)", [
    C("optimizer = th.optim.AdamW(self.mdl.parameters(), lr=lr, weight_decay=weight_decay)", "fused_optimizer",
      "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(self.mdl.parameters(), lr=lr, weight_decay=weight_decay)",
      "performance only (msFmkTransplt advice; faster but more memory); torch.optim.AdamW works on NPU"),
])

E("rvt_yolo_head", "models/detection/yolox/models/yolo_head.py", "explicit_replacement",
  "uzh-rpg/RVT models/detection/yolox/models/yolo_head.py (YOLOX head with SimOTA and CPU OOM fallback)", [
    C('if "CUDA out of memory. " not in str(e):', "device_type", "replace", False,
      'if "out of memory" not in str(e):',
      "NPU OOM messages do not contain 'CUDA out of memory'; unported, an NPU OOM during label assignment is "
      "re-raised instead of retried on the CPU. Only matters on OOM"),
    C("torch.cuda.empty_cache()  # release", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the cached blocks before retrying on the CPU",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is just not released"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "per-image cache flush: no-op on an NPU host (and arguably better removed for speed)"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "RVT trains with precision 16; this block must leave NPU autocast to run the BCE cost in fp32. A CUDA "
      "autocast context does not disable NPU autocast"),
    C("gt_matched_classes = gt_matched_classes.cuda()", "tensor_to_device", "replace", True,
      "gt_matched_classes = gt_matched_classes.npu()", "CPU-fallback path moves results back to the accelerator"),
    C("fg_mask = fg_mask.cuda()", "tensor_to_device", "replace", True, "fg_mask = fg_mask.npu()",
      "as above"),
    C("pred_ious_this_matching = pred_ious_this_matching.cuda()", "tensor_to_device", "replace", True,
      "pred_ious_this_matching = pred_ious_this_matching.npu()", "as above"),
    C("matched_gt_inds = matched_gt_inds.cuda()", "tensor_to_device", "replace", True,
      "matched_gt_inds = matched_gt_inds.npu()", "as above"),
])

E("rvt_genx", "modules/data/genx.py", "explicit_replacement",
  "uzh-rpg/RVT modules/data/genx.py (LightningDataModule for Gen1/1Mpx, stream/random/mixed sampling)", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "performance only: on torch 2.1 the DataLoader pins only if torch.cuda.is_available(), so pinning is "
      "silently skipped on an NPU host (unconfirmed in the knowledge base)"),
])

E("rvt_representations", "data/utils/representations.py", "explicit_replacement",
  "uzh-rpg/RVT data/utils/representations.py (StackedHistogram, MixedDensityEventStack)", [])

E("rvt_install", "scripts/install_env.sh", "explicit_replacement",
  "uzh-rpg/RVT README installation steps (conda + pip), as a script", [
    C('conda activate "${ENV_NAME}"', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu can be imported by the sanity check below"),
    C("conda install -y pytorch==1.13.1", "import_torch_npu", "replace", True,
      "python -m pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      ("pytorch-cuda build from the nvidia channel; torch 1.13 has no torch_npu release. On x86 hosts torch/torchvision "
      "should come from the CPU wheel index (download.pytorch.org/whl/cpu); aarch64 uses plain PyPI")),
    C("conda install -y torchdata=0.5.1 -c pytorch", "import_torch_npu", "replace", True,
      "python -m pip install torchdata==0.7.0",
      "torchdata 0.5.1 pins torch 1.13.1 and would drag the CUDA/1.13 torch back in"),
    C("=nvidia-smi", "torch_cuda_api", "replace", True, "npu-smi info",
      "script runs under set -e; nvidia-smi is absent on Ascend hosts and aborts the script"),
    C("torch.cuda.is_available(), torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available(), torch.npu.get_device_name(0))\"",
      "get_device_name on CUDA raises without CUDA -> set -e aborts"),
])

# ---------------------------------------------------------------------------------------------------------------
# EV-FlowNet PyTorch re-implementation (original daniilidis-group/EV-FlowNet is TensorFlow)
# ---------------------------------------------------------------------------------------------------------------
E("evflow_config", "config.py", "explicit_replacement",
  "PyTorch ports of daniilidis-group/EV-FlowNet: config.py (argparse, --gpu / --no_cuda)", [
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "args.cuda gates every device move in train/test; unported everything silently runs on CPU"),
])

E("evflow_train", "train.py", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: train.py (DataParallel, .cuda(), tensorboard)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "device selection from --gpu is silently ignored otherwise (set before the first NPU call, NPU runtime is lazy)"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "torch.manual_seed(args.seed) above already seeds every device incl. NPU; the CUDA call is a queued no-op"),
    C("device = torch.device('cuda' if args.cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if args.cuda else 'cpu')", "device for all batches"),
    C("model = nn.DataParallel(model, device_ids=list(range(len(args.gpu_ids)))).cuda()", "distributed_framework",
      "replace", True, "model = model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (use DDP for multi-device); single device here"),
    C("next_image = next_image.cuda(non_blocking=True) if args.cuda else next_image", "tensor_to_device", "replace",
      True, "next_image = next_image.npu(non_blocking=True) if args.cuda else next_image",
      "one input was moved with .cuda() instead of .to(device)"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "global_step, loss.item(), torch.npu.max_memory_allocated() / 1024 ** 2))",
      "log only; returns 0 on an NPU host"),
    C("state = model.module.state_dict() if args.cuda else model.state_dict()", "distributed_framework", "replace",
      True, "state = model.state_dict()",
      "knock-on of dropping DataParallel: there is no .module any more, checkpoint saving would raise"),
])

E("evflow_test", "test.py", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: test.py (MVSEC AEE / outlier evaluation, timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0' if args.cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if args.cuda else 'cpu')", "device for event volumes"),
    C("print('Running on', torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "print('Running on', torch.npu.get_device_name(0))", "unconditional; initialises CUDA and raises"),
    C("model = EVFlowNet(args).cuda()", "tensor_to_device", "replace", True,
      "model = EVFlowNet(args).to(device)", "model placement"),
    C("state = torch.load(args.load_path, map_location='cuda:0')", "tensor_to_device", "replace", True,
      "state = torch.load(args.load_path, map_location='cpu')",
      "map_location='cuda:0' fails without CUDA; load_state_dict copies into the NPU model"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also needed so the inference timing covers the asynchronous NPU work"),
])

E("evflow_losses", "losses.py", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: losses.py (Charbonnier photometric + smoothness, grid_sample warping)", [
    C("if images.is_cuda:", "device_type", "replace", True, "if images.is_npu:",
      "unported, the sampling grid stays on the CPU while images are on the NPU -> grid_sample device mismatch"),
    C("grid = grid.cuda()", "tensor_to_device", "replace", True, "grid = grid.npu()",
      "reached once the is_cuda check is ported"),
])

E("evflow_model", "model.py", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: model.py (encoder-decoder with multi-scale flow heads)", [])

E("evflow_data", "data_loader.py", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: data_loader.py (MVSEC hdf5, 4-channel event image)", [])

E("evflow_run", "scripts/run_train.sh", "explicit_replacement",
  "PyTorch ports of EV-FlowNet: train + evaluate launcher", [
    C("DATA=${1:-/data/mvsec}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu (unless the login shell already sources it)"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "redundant: train.py sets the visible devices itself from --gpu 0, and test.py uses npu:0"),
])

# ---------------------------------------------------------------------------------------------------------------
# vid2e / esim_torch (uzh-rpg/rpg_vid2e)
# ---------------------------------------------------------------------------------------------------------------
E("vid2e_setup", "esim_torch/setup.py", "kernel_rewrite",
  "uzh-rpg/rpg_vid2e esim_torch/setup.py (CUDAExtension for the ESIM kernel)", [
    C("from setuptools import setup", "custom_cuda_extension", "npu_only_addition", True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/ACL include and library paths for the Ascend C rewrite of the kernel"),
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension", "unused CUDAExtension import is harmless"),
    C("CUDAExtension(name='esim_cuda',", "custom_cuda_extension", "replace", True, "NpuExtension(name='esim_npu',",
      "no nvcc on Ascend; the extension must be built as an NPU extension"),
    C("sources=['esim_torch/esim_cuda_kernel.cu'],", "custom_cuda_extension", "replace", True,
      "sources=['esim_torch/esim_npu_kernel.cpp'],",
      "the .cu kernel (count pass + emit pass) is rewritten in Ascend C"),
    C("extra_compile_args={'cxx': ['-O3'], 'nvcc':", "custom_cuda_extension", "replace", False,
      "extra_compile_args={'cxx': ['-O3']},",
      "nvcc flags become meaningless; unconfirmed whether a leftover 'nvcc' key is ignored or rejected"),
])

E("vid2e_esim", "esim_torch/esim_torch/esim_torch.py", "kernel_rewrite",
  "uzh-rpg/rpg_vid2e esim_torch/esim_torch/esim_torch.py (EventSimulator_torch around esim_cuda)", [
    C("=import esim_cuda", "custom_cuda_extension", "replace", True, "import esim_npu",
      "the compiled CUDA module does not exist on the NPU host"),
    C("event_counts = esim_cuda.forward_count_events(log_images,", "custom_cuda_extension", "replace", True,
      "event_counts = esim_npu.forward_count_events(log_images,", "first kernel pass"),
    C("events = esim_cuda.forward(log_images,", "custom_cuda_extension", "replace", True,
      "events = esim_npu.forward(log_images,", "second kernel pass"),
])

E("vid2e_generate", "esim_torch/scripts/generate_events.py", "explicit_replacement",
  "uzh-rpg/rpg_vid2e esim_torch/scripts/generate_events.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("timestamps_ns = torch.from_numpy(timestamps_ns).cuda()", "tensor_to_device", "replace", True,
      "timestamps_ns = torch.from_numpy(timestamps_ns).npu()", "simulator inputs live on the accelerator"),
    C("log_image = torch.from_numpy(log_image).cuda()", "tensor_to_device", "replace", True,
      "log_image = torch.from_numpy(log_image).npu()", "as above"),
])

E("vid2e_upsampler", "upsampling/utils/upsampler.py", "explicit_replacement",
  "uzh-rpg/rpg_vid2e upsampling/utils/upsampler.py (Super-SloMo based frame upsampling)", [
    C("device: str = 'cuda:0', num_intermediate: int = 7):", "device_type", "replace", True,
      "device: str = 'npu:0', num_intermediate: int = 7):",
      "once is_available is ported, a 'cuda:0' default would be passed to torch.device and used for .to()"),
    C("self.device = torch.device(device if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace", True,
      "self.device = torch.device(device if torch.npu.is_available() else 'cpu')",
      "unported, upsampling silently runs on the CPU"),
])
