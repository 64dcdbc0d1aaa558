# Labels for probe294: video prediction / spatio-temporal predictive learning (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("openstl_train", "tools/train.py", "explicit_replacement",
  "OpenSTL tools/train.py (entry point; device work happens in openstl.api)", [
    # no labels: `--dist`/`--fp16` are parsed elsewhere, comments mention GPUs only.
])

E("openstl_exp", "openstl/api/exp.py", "explicit_replacement",
  "OpenSTL openstl/api/exp.py BaseExperiment (device acquisition, dist init, train/test loops)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first torch import of the experiment driver; torch_npu must be loaded before torch.npu / 'npu' devices are used (autoloaded only from 2.5.1)"),
    C("device = f'cuda:{self._rank}'", "device_type", "replace", True, "device = f'npu:{self._rank}'",
      "distributed device string; 'cuda:N' cannot be used on an NPU host"),
    C("torch.cuda.set_device(self._rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self._rank)",
      "torch.cuda.set_device raises without CUDA"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "non-distributed device"),
    C("dist_params = dict(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("self.method.model.cuda()", "tensor_to_device", "replace", True, "self.method.model.npu()",
      "moves the model before DDP wrapping; .cuda() fails without CUDA"),
    C("mem_mb = torch.cuda.max_memory_allocated() / 1024. / 1024.", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / 1024. / 1024.",
      "log only: torch.cuda memory stats return 0 when CUDA was never initialised, so the value is silently wrong, nothing fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); NPU cache is not released"),
    C("state_dict = torch.load(best_model_path)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(best_model_path, map_location='cpu')",
      "--test with a GPU-trained checkpoint.pth (Recorder saves CUDA tensors) fails to deserialize without map_location; the train() reload of a checkpoint written in the same NPU run is left unlabelled"),
])

E("openstl_main_utils", "openstl/utils/main_utils.py", "explicit_replacement",
  "OpenSTL openstl/utils/main_utils.py (seeding, env collection, throughput, mmcv-style init_dist)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator (unconfirmed in knowledge, from torch's custom-device seeding)"),
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "npu_available = torch.npu.is_available()  # plus an NPU block listing torch.npu.get_device_name(k)",
      "environment report only: on an NPU host it prints 'CUDA available: False' and no device list; the guarded CUDA block stays as is"),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "--fps throughput timing; creating CUDA events fails without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("def init_dist(launcher: str, backend: str = 'nccl', **kwargs) -> None:", "dist_backend", "replace", False,
      "def init_dist(launcher: str, backend: str = 'hccl', **kwargs) -> None:",
      "default only; BaseExperiment always passes backend explicitly (that call site is the required change)"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank % num_gpus)",
      "pytorch launcher device binding"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "mpi launcher device binding"),
    C("num_gpus = torch.cuda.device_count()  # GPUs per node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # NPUs per node", "slurm launcher; 0 on NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True, "torch.npu.set_device(proc_id % num_gpus)",
      "slurm launcher device binding"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "called without device in dist mode; with world_size>1 and no --seed the broadcast tensor is created on 'cuda' and fails"),
])

E("openstl_base_method", "openstl/methods/base_method.py", "explicit_replacement",
  "OpenSTL openstl/methods/base_method.py (native AMP via timm NativeScaler, DDP wrapping, eval loops)", [
    C("self.amp_autocast = torch.cuda.amp.autocast", "amp", "replace", False, "self.amp_autocast = torch.npu.amp.autocast",
      "torch.cuda.amp.autocast disables itself with a warning when CUDA is absent, so --fp16 silently trains in fp32 (performance, not correctness)"),
    C("self.loss_scaler = NativeScaler()", "amp", "replace", False, "self.loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler wraps torch.cuda.amp.GradScaler, which disables itself without CUDA; must follow the autocast change or fp16 runs unscaled (device= kwarg needs a recent timm - unconfirmed)"),
    C("torch.cuda.empty_cache()  # free cached blocks before the next batch", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free cached blocks before the next batch", "--empty_cache option; silent no-op on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "--empty_cache option (non-dist loop); silent no-op on an NPU host"),
])

E("openstl_parallel", "openstl/utils/parallel.py", "explicit_replacement",
  "OpenSTL openstl/utils/parallel.py (OpenMixup/mmcv-style all_gather of numpy results)", [
    C("shape_tensor = torch.Tensor(np.array(myshape)).cuda()", "tensor_to_device", "replace", True,
      "shape_tensor = torch.Tensor(np.array(myshape)).npu()", "collective buffers must live on the NPU for HCCL; .cuda() fails"),
    C("all_shape = [torch.Tensor(np.array(myshape)).cuda() for i in range(world_size)]", "tensor_to_device", "replace", True,
      "all_shape = [torch.Tensor(np.array(myshape)).npu() for i in range(world_size)]", "all_gather receive buffers"),
    C("output_tensors = [torch.Tensor(max_count).cuda() for i in range(world_size)]", "tensor_to_device", "replace", True,
      "output_tensors = [torch.Tensor(max_count).npu() for i in range(world_size)]", "all_gather receive buffers"),
    C("input_tensor = torch.Tensor(padded_input_array).cuda()", "tensor_to_device", "replace", True,
      "input_tensor = torch.Tensor(padded_input_array).npu()", "all_gather send buffer"),
    C("dir_tensor = torch.full((MAX_LEN, ), 32, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "dir_tensor = torch.full((MAX_LEN, ), 32, dtype=torch.uint8, device='npu')", "broadcast buffer for the tmpdir name"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "tmpdir name tensor"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", "pickled result part for collect_results_gpu"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "shape exchange tensor"),
])

E("openstl_simvp_method", "openstl/methods/simvp.py", "explicit_replacement",
  "OpenSTL openstl/methods/simvp.py (SimVP training step with AMP context and loss scaler)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "called every iteration; torch.cuda.synchronize raises on an NPU host"),
])

E("openstl_optim_scheduler", "openstl/core/optim_scheduler.py", "explicit_replacement",
  "OpenSTL openstl/core/optim_scheduler.py (timm-style optimizer factory with apex fused optimizers)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
      "NVIDIA apex fused optimizers are CUDA kernels; guarded import just sets has_apex=False on NPU, so the import itself does not fail"),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'NPU required for fused optimizers'",
      "any --opt fused* choice aborts here on an NPU host"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fusedsgd -> torch_npu.optim.NpuFusedSGD"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fusedmomentum -> NpuFusedSGD"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdam(parameters, **opt_args)", "fusedadam -> NpuFusedAdam (no adam_w_mode kwarg)"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdamW(parameters, **opt_args)", "fusedadamw -> NpuFusedAdamW"),
    C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedLamb(parameters, **opt_args)", "fusedlamb -> NpuFusedLamb"),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = optim.Adam(parameters, **opt_args)  # no NPU NovoGrad; fall back to a plain optimizer",
      "torch_npu.optim has no NovoGrad; the apex CUDA kernel cannot run"),
])

E("openstl_metrics", "openstl/core/metrics.py", "explicit_replacement",
  "OpenSTL openstl/core/metrics.py (numpy MSE/MAE/SSIM/PSNR, SEVIR CSI, LPIPS wrapper)", [
    C("self.use_gpu = use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_gpu = use_gpu and torch.npu.is_available()",
      "False on an NPU host while __init__ still moves the net (it tests the raw use_gpu flag), so once that move is ported the images stay on CPU and the net is on NPU -> device mismatch; the three LPIPS lines go together"),
    C("self.loss_fn.cuda()", "tensor_to_device", "replace", True, "self.loss_fn.npu()",
      "LPIPS() with the default use_gpu=True calls .cuda() and fails; metric() itself passes use_gpu=False (unlabelled near-miss)"),
    C("img1, img2 = img1.cuda(), img2.cuda()", "tensor_to_device", "replace", True, "img1, img2 = img1.npu(), img2.npu()",
      "inputs must follow the network onto the NPU"),
])

E("openstl_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "OpenSTL tools/dist_train.sh (torch.distributed.launch wrapper)", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or torch_npu cannot find libhccl/opp"),
    C('if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", "replace", False,
      'if [ -z "${ASCEND_RT_VISIBLE_DEVICES}" ]; then',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; with the default first-N selection the outcome is the same, so not required"),
    C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS-1)))", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS-1)))",
      "ignored on NPU; same cards are used anyway because the launcher binds rank i to device i"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL-only logging knob, ignored by HCCL; CANN log level is the closest equivalent"),
])

E("openstl_env_yml", "environment.yml", "explicit_replacement",
  "OpenSTL environment.yml (conda env with cudatoolkit)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "NVIDIA conda channel only serves CUDA packages; harmless once cudatoolkit is gone"),
    C("=- cudatoolkit=11.3", "custom_cuda_extension", "removal", True, None,
      "CUDA runtime package; not usable on an Ascend host (CANN provides the runtime)"),
    C("=- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0  # CPU build; must match torch-npu",
      "no torch_npu release exists for torch 1.12; torch and torch-npu versions must match (e.g. 2.1.0)"),
    C("=- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must follow the torch version"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu wheel (pip only) pinned to the torch version"),
])

E("openstl_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "OpenSTL/mmcv-style docker/Dockerfile on pytorch/pytorch CUDA devel image", [
    C('=ARG CUDA="11.3"', "custom_cuda_extension", "removal", False, None, "unused once the base image is a CANN image"),
    C('=ARG CUDNN="8"', "custom_cuda_extension", "removal", False, None, "unused once the base image is a CANN image"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image carries CUDA torch and no CANN; needs a CANN base image (Ascend/cann-container-image)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None, "nvcc arch list, meaningless without CUDA"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None, "nvcc flags, meaningless without CUDA"),
    C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64/3bf863cc.pub", "custom_cuda_extension", "removal", False, None,
      "NVIDIA apt key workaround; not needed on a CANN image"),
    C("&& apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/machine-learning/repos/ubuntu1804/x86_64/7fa2af80.pub", "custom_cuda_extension", "removal", False, None,
      "second half of the NVIDIA key workaround"),
    C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "the CANN image has no torch; install CPU torch + matching torch-npu"),
])

E("openstl_simvp_modules", "openstl/modules/simvp_modules.py", "explicit_replacement",
  "OpenSTL openstl/modules/simvp_modules.py (SimVP/TAU/gSTA translator blocks)", [
    # no labels: pure nn.Module code; PixelShuffle, grouped/dilated conv, torch.roll and GroupNorm all run on NPU.
    # torch.roll has an optional torch_npu.contrib 'roll' affinity API, deliberately not labelled (performance hint only).
])

E("predrnn_run", "run.py", "explicit_replacement",
  "thuml/predrnn-pytorch run.py (argparse entry, scheduled sampling, args.device passed to the model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch_npu must be imported before 'npu' devices are used (autoloaded only from 2.5.1)"),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')",
      "args.device is passed everywhere via .to(configs.device); default must name the NPU"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu card selection is silently ignored by the NPU runtime, so the run lands on card 0 instead of the requested one"),
    C("if args.device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.device.startswith('npu') and not torch.npu.is_available():",
      "CPU-fallback guard; once device strings say 'npu' it is simply dead, nothing fails - porter updates it to keep the fallback"),
])

E("predrnn_model_factory", "core/models/model_factory.py", "explicit_replacement",
  "thuml/predrnn-pytorch core/models/model_factory.py (network map, save/load, train/test steps)", [
    C("stats = torch.load(checkpoint_path)", "tensor_to_device", "replace", True,
      "stats = torch.load(checkpoint_path, map_location=self.configs.device)",
      "released PredRNN checkpoints hold CUDA tensors; loading them without map_location fails on a host without CUDA"),
])

E("predrnn_sh", "scripts/predrnn_v2_mnist_train.sh", "explicit_replacement",
  "thuml/predrnn-pytorch scripts/predrnn_v2_mnist_train.sh", [
    C("=export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored by the NPU runtime; pins card 0, which is the default anyway (run.py re-sets the variable from --gpu)"),
    C("=cd ..", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python starts"),
    C("--device cuda \\", "device_type", "replace", True, "--device npu \\",
      "passes the device string straight into .to(configs.device)"),
])

E("predrnnpp_model", "models/predrnn_pp.py", "explicit_replacement",
  "community PyTorch port of PredRNN++ (causal LSTM + gradient highway unit) with GPU-only hidden states", [
    C("return torch.zeros([batch, num_features, height, width]).cuda()", "tensor_to_device", "replace", True,
      "return torch.zeros([batch, num_features, height, width], device=inputs.device)",
      "GHU initial state hard-coded to CUDA"),
    C("dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "dtype=torch.float32).npu()",
      "causal LSTM initial h/c hard-coded to CUDA (the m state already uses device=x.device - unlabelled near-miss)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the model silently stays on CPU while init_state() wants the accelerator"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "model placement"),
])

E("e3d_lstm_trainer", "trainer.py", "explicit_replacement",
  "community PyTorch E3D-LSTM TaxiBJ trainer (global torch.cuda.FloatTensor dtype, DataParallel over --gpu_ids)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry script"),
    C("dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True, "dtype = torch.npu.FloatTensor",
      "legacy CUDA tensor type used with .type(dtype) for every module and batch; fails without CUDA (torch_npu.npu exports FloatTensor)"),
    C("checkpoint = torch.load(ckpt_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(ckpt_path, map_location='cpu')",
      "--ckpt files written on GPU contain CUDA tensors"),
    C("model = nn.DataParallel(self, device_ids=gpu_ids)", "unsupported_op_workaround", "replace", True,
      "model = self  # nn.DataParallel is unsupported on NPU; run one process per NPU with DDP instead",
      "torch.nn.DataParallel is marked unsupported on Ascend; --gpu_ids 0,1,2,3 fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("torch.cuda.set_device(int(args.gpu_ids.split(',')[0]))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(args.gpu_ids.split(',')[0]))", "raises without CUDA"),
])

E("simvp_exp", "exp.py", "explicit_replacement",
  "A4Bio/SimVP exp.py (original SimVP experiment class; --use_gpu/--gpu device selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first torch import of the experiment (main.py itself does not import torch)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(self.args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(self.args.gpu)',
      "--gpu selects the card only through this variable; ignored on NPU, so the run silently lands on card 0"),
    C("device = torch.device('cuda:{}'.format(0))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(0))", "device used by every .to(self.device)"),
    C("if self.args.use_gpu and torch.cuda.device_count() > 1 and self.args.multi_gpu:", "torch_cuda_api", "removal", False, None,
      "whole --multi_gpu DataParallel block goes (DataParallel is unsupported on Ascend; multi-card = DDP). Unchanged it is dead code on NPU: device_count() is 0"),
    C("print_log(\"Let's use {} GPUs!\".format(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
      "part of the removed DataParallel block"),
    C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", False, None,
      "nn.DataParallel is unsupported on Ascend; unreachable unchanged because the guard is 0 on NPU"),
    # train()'s torch.load(best_model_path) reloads the checkpoint this same run wrote: left unlabelled.
])

E("phydnet_main", "main.py", "device_branch_or_abstraction",
  "vincent-leguen/PhyDNet main.py (Moving MNIST training with moment-constraint regularisation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cuda" if torch.cuda.is_available() else "cpu")',
      "module-level device passed to every cell; unchanged it silently trains on CPU on an NPU host"),
    C("k2m = K2M([7, 7]).to(device)", "unsupported_op_workaround", "replace", True,
      "k2m = K2M([7, 7])  # keep the fp64 moment kernels on CPU",
      "K2M holds float64 buffers and contracts them with torch.tensordot, which Ascend lists as fp16/fp32 only"),
    C("m = k2m(filters.double())", "unsupported_op_workaround", "replace", True,
      "m = k2m(filters.double().cpu()).to(device)",
      "fp64 moment computation moved to CPU (alternatively rewrite K2M in fp32); result goes back to the NPU for the loss"),
    C("encoder.load_state_dict(torch.load(args.resume))", "tensor_to_device", "replace", True,
      "encoder.load_state_dict(torch.load(args.resume, map_location=device))",
      "--resume with the authors' GPU checkpoints fails to deserialize CUDA tensors without map_location"),
])

E("phydnet_models", "models/models.py", "device_branch_or_abstraction",
  "vincent-leguen/PhyDNet models/models.py (PhyCell, ConvLSTM, encoder/decoder; device passed in)", [
    # no labels: every tensor is created with .to(self.device) / .to(device) from the caller - device-agnostic.
])

E("mcvd_main", "main.py", "device_branch_or_abstraction",
  "voletiv/mcvd-pytorch main.py (NCSNv2-style arg/config parsing; config.device set here)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; config.device is chosen below"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "add_branch", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')",
      "config.device feeds every .to(config.device) and map_location in the runner; unchanged the whole diffusion model trains on CPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard of the redundant CUDA seeding below; skipped on NPU, torch.manual_seed already seeds the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "no effect on an NPU host"),
])

E("mcvd_runner", "runners/ncsn_runner.py", "explicit_replacement",
  "voletiv/mcvd-pytorch runners/ncsn_runner.py (score-network training, EMA, DDPM/DDIM sampling, FVD)", [
    C("=scorenet = torch.nn.DataParallel(scorenet)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend and breaks on a multi-NPU host; multi-card training should use DDP. Removing it drops the 'module.' prefix from state_dict keys (see the load_state_dict labels)"),
    C("scorenet.load_state_dict(states[0])", "unsupported_op_workaround", "replace", False,
      "scorenet.load_state_dict({k.replace('module.', '', 1): v for k, v in states[0].items()})",
      "--resume_training: only checkpoints written by the old DataParallel (GPU) run have 'module.' keys; a run started on NPU resumes fine"),
    C("torch.cuda.empty_cache()  # drop sampler buffers before training resumes", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop sampler buffers before training resumes", "silent no-op on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("scorenet = torch.nn.DataParallel(scorenet, device_ids=list(range(torch.cuda.device_count())))", "unsupported_op_workaround", "removal", True, None,
      "DataParallel with device_ids=[] (CUDA count is 0) cannot even be constructed once torch sees the NPU; unsupported on Ascend anyway"),
    C("scorenet.load_state_dict(states[0], strict=False)", "unsupported_op_workaround", "replace", True,
      "scorenet.load_state_dict({k.replace('module.', '', 1): v for k, v in states[0].items()}, strict=False)",
      "consequence of dropping DataParallel: GPU checkpoints carry 'module.' keys and strict=False would silently load nothing (EMA keys are already unprefixed - EMAHelper unwraps DataParallel, near-miss)"),
    C("num = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "num = torch.npu.device_count()",
      "log only: 0 on an NPU host, so 'GPUmem' is logged as 0"),
    C("mem_free, mem_total = torch.cuda.mem_get_info(i)", "torch_cuda_api", "replace", False,
      "mem_free, mem_total = torch.npu.mem_get_info(i)", "follows the device_count change; wrapped in a bare try/except"),
])

E("mcvd_fvd", "models/fvd/fvd.py", "explicit_replacement",
  "voletiv/mcvd-pytorch models/fvd/fvd.py (StyleGAN-V TorchScript I3D feature extractor + Frechet distance)", [
    C("i3d = torch.nn.DataParallel(i3d)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend; on a multi-NPU host the replicate/scatter path fails. The I3D runs fine unwrapped on one NPU"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "__main__ self-check hard-codes CUDA"),
])

E("vdp_train", "train.py", "explicit_replacement",
  "accelerate-based conditional video-diffusion frame predictor trainer (lucidrains video-diffusion-pytorch / MCVD / RaMViD style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the torch.npu calls below need torch_npu loaded (accelerate would import it itself only for its own checks)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; accelerate's set_seed and torch.manual_seed already seed the NPU"),
    C('if requested == "bf16" and torch.cuda.get_device_capability()[0] < 8:', "device_capability_check", "replace", True,
      'if requested == "bf16" and not torch.npu.is_bf16_supported():',
      "--mixed_precision bf16 evaluates get_device_capability, which raises without CUDA (and NPU capability numbers are not real sm versions anyway)"),
    C("num_workers=2, pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "num_workers=2, pin_memory=torch.npu.is_available())",
      "evaluates to False on an NPU host, so validation batches are silently not pinned (performance only)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory-based batch halving is silently skipped on NPU; harmless on 32/64GB Ascend cards"),
    C("total_mem = torch.cuda.get_device_properties(accelerator.local_process_index).total_memory", "torch_cuda_api", "replace", False,
      "total_mem = torch.npu.get_device_properties(accelerator.local_process_index).total_memory",
      "NPU device properties do expose total_memory; follows the guard change"),
    C("sdp_ctx = torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False) \\", "attention_kernel", "replace", False,
      "sdp_ctx = contextlib.nullcontext() \\",
      "torch.backends.cuda.sdp_kernel is marked unsupported in Ascend's 2.7.1 list; it only toggles CUDA SDPA backend flags, so most likely a no-op on NPU (unconfirmed). NPU SDPA picks its fused kernel itself"),
    C("if args.use_flash_sdp else torch.backends.cuda.sdp_kernel()", "attention_kernel", "replace", False,
      "if args.use_flash_sdp else contextlib.nullcontext()", "second half of the same expression"),
    C('with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):', "amp", "replace", False,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.float16):',
      "autocast('cuda') disables itself without CUDA; EMA sampling silently runs in fp32 (slower, still correct)"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3", "log only; reports 0 on an NPU host"),
])

E("vdp_attention", "models/attention.py", "explicit_replacement",
  "space-time attention for video diffusion UNets (lucidrains video-diffusion-pytorch style, with xformers / SDPA / einsum backends)", [
    C("import xformers.ops", "attention_kernel", "replace", False, "import torch_npu  # npu_fusion_attention replaces xformers",
      "xformers has no NPU backend and cannot be installed there; the ImportError guard keeps the module importable, so not required"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)", "attention_kernel", "replace", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, self.heads, 'BSND', scale=self.scale)[0]",
      "unreachable on NPU (XFORMERS_IS_AVAILABLE is False) - attention falls back to SDPA/einsum; fused NPU attention is a performance port"),
])

E("vdp_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of the accelerate video-diffusion predictor (CUDA 11.8 wheel index, xformers)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu sits on top of the CPU torch build (x86: download.pytorch.org/whl/cpu; aarch64: plain PyPI)"),
    C("=torch==2.0.1+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 local-version wheel does not exist for aarch64 and is the wrong build for torch_npu; torch must equal the torch-npu base version"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the NPU backend itself, pinned to the torch version"),
    C("accelerate>=0.20.3", "distributed_framework", "replace", False, "accelerate>=0.22.0",
      "accelerate knows Ascend NPUs from 0.22.0; this is only a floor, so pip already installs a newer release"),
    C("=xformers==0.0.20", "attention_kernel", "removal", True, None,
      "no NPU build; pip would pull a CUDA torch 2.0.1 / try an nvcc build. Code guards the import and falls back to SDPA"),
    C("=nvidia-ml-py3", "custom_cuda_extension", "removal", False, None,
      "NVML bindings are useless on Ascend (npu-smi / torch.npu memory APIs instead); installing them is harmless"),
])

E("vdp_accelerate_cfg", "configs/accelerate/4gpu.yaml", "explicit_replacement",
  "accelerate config file (accelerate config default_config.yaml) for 4-GPU single-node training", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False, "distributed_type: MULTI_NPU",
      "accelerate has a MULTI_NPU type; whether MULTI_GPU is remapped automatically when only NPUs are present is unconfirmed"),
])

E("vdp_launch_sh", "scripts/train_kth.sh", "explicit_replacement",
  "shell launcher for the video-diffusion predictor (accelerate launch, NCCL workarounds for consumer GPUs)", [
    C("# KTH 64x64, 10 context frames -> 10 predicted frames, 4 GPUs on one node.", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN env must be sourced, and before `set -u`: set_env.sh references unset variables and aborts under nounset"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored by the NPU runtime; default first-four selection gives the same cards"),
    C("=export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround for PCIe consumer cards; HCCL ignores it"),
    C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; HCCL ignores it"),
    C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | wc -l)', "env_var", "replace", False,
      'NUM_GPUS=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | wc -l)', "follows the variable rename"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "${OUT}/npus.txt"',
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts before training"),
])

E("sdcnet_resample2d_setup", "models/model_utils/resample2d_package/setup.py", "kernel_rewrite",
  "NVIDIA semantic-segmentation SDC-Net / flownet2-pytorch resample2d_package/setup.py (nvcc-built warping op)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension",
      "no nvcc/CUDAExtension path on Ascend; the warp is re-expressed with F.grid_sample (kept Python-only), or rebuilt as an Ascend C op via torch_npu.utils.cpp_extension.NpuExtension"),
    C("=nvcc_args = [", "custom_cuda_extension", "removal", False, None,
      "nvcc flag list goes with the extension; dead but harmless if left"),
    C("'-gencode', 'arch=compute_60,code=sm_60',", "custom_cuda_extension", "removal", False, None, "nvcc arch flag"),
    C("'-gencode', 'arch=compute_61,code=sm_61',", "custom_cuda_extension", "removal", False, None, "nvcc arch flag"),
    C("'-gencode', 'arch=compute_70,code=sm_70',", "custom_cuda_extension", "removal", False, None, "nvcc arch flag"),
    C("'-gencode', 'arch=compute_75,code=sm_75',", "custom_cuda_extension", "removal", False, None, "nvcc arch flag"),
    C("'-gencode', 'arch=compute_80,code=sm_80',", "custom_cuda_extension", "removal", False, None, "nvcc arch flag"),
    C("'-gencode', 'arch=compute_80,code=compute_80',", "custom_cuda_extension", "removal", False, None, "nvcc PTX flag"),
    C("CUDAExtension('resample2d_cuda', [", "custom_cuda_extension", "replace", True,
      "# resample2d is implemented with F.grid_sample on NPU; no compiled extension",
      "building this fails without CUDA/nvcc, so `python setup.py install` (run by the repo's install script) aborts"),
    C("'resample2d_cuda.cc',", "custom_cuda_extension", "removal", True, None, "pybind/ATen-CUDA glue of the extension"),
    C("'resample2d_kernel.cu'", "custom_cuda_extension", "removal", True, None, ".cu source cannot be compiled for Ascend"),
    C("], extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args})", "custom_cuda_extension", "removal", True, None,
      "closes the removed CUDAExtension(...) call"),
])

E("sdcnet_resample2d", "models/model_utils/resample2d_package/resample2d.py", "kernel_rewrite",
  "flownet2-pytorch / SDC-Net resample2d.py (autograd Function calling the compiled resample2d_cuda op)", [
    C("=import resample2d_cuda", "custom_cuda_extension", "replace", True, "import torch.nn.functional as F",
      "the compiled CUDA module does not exist on an NPU host; ImportError at import time"),
    C("resample2d_cuda.forward(input1, input2, output, kernel_size, bilinear)", "custom_cuda_extension", "replace", True,
      "output = warp_with_grid_sample(input1, input2, bilinear)  # F.grid_sample on a flow-shifted base grid",
      "forward kernel call; grid_sample (border padding, align_corners=True) reproduces the bilinear warp for kernel_size=1"),
    C("resample2d_cuda.backward(input1, input2, grad_output.data,", "custom_cuda_extension", "replace", True,
      "# backward comes from autograd through F.grid_sample; the custom Function can be dropped",
      "backward kernel call"),
])

E("sdcnet_main", "main.py", "explicit_replacement",
  "NVIDIA semantic-segmentation sdcnet/main.py (SDC-Net video prediction training with apex AMP and torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("inputs = {k: [b.cuda(non_blocking=True) for b in batch[k]] for k in batch if k != 'file_names'}", "tensor_to_device", "replace", True,
      "inputs = {k: [b.npu(non_blocking=True) for b in batch[k]] for k in batch if k != 'file_names'}", "training batch transfer"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing sync in the logging branch; raises without CUDA"),
    C("loss=losses, mem=torch.cuda.max_memory_allocated() / 1e9))", "torch_cuda_api", "replace", False,
      "loss=losses, mem=torch.npu.max_memory_allocated() / 1e9))", "log only; prints 0 on an NPU host"),
    C("val_inputs = {k: [b.cuda() for b in batch[k]] for k in batch if k != 'file_names'}", "tensor_to_device", "replace", True,
      "val_inputs = {k: [b.npu() for b in batch[k]] for k in batch if k != 'file_names'}", "validation batch transfer"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "per-process device binding under torch.distributed.launch"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL -> HCCL"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "no-op without CUDA; torch.manual_seed on the previous line already seeds the NPU (unconfirmed)"),
    C("model = get_model(args).cuda()", "tensor_to_device", "replace", True, "model = get_model(args).npu()", "model placement"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.amp_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.amp_opt_level, combine_grad=True)",
      "with Ascend's apex patch amp.initialize/scale_loss keep working (O1/O2); combine_grad is its NPU speed-up, so this is performance only. The NVIDIA apex build (--cuda_ext) cannot be installed on NPU"),
    C("checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location=f'npu:{args.local_rank}')",
      "the map_location lambda itself calls .cuda()"),
])

E("sdcnet_model", "models/sdc_net2d.py", "explicit_replacement",
  "NVIDIA semantic-segmentation sdcnet/models/sdc_net2d.py (SDC-Net with frozen FlowNet2 and Resample2d warping)", [
    C("flownet2_checkpoint = torch.load(args.flownet2_checkpoint)", "tensor_to_device", "replace", True,
      "flownet2_checkpoint = torch.load(args.flownet2_checkpoint, map_location='cpu')",
      "the released FlowNet2 checkpoint was saved from a GPU model; deserialising CUDA tensors fails without map_location"),
    C("return t_grid.cuda().half()", "tensor_to_device", "replace", False, "return t_grid.npu().half()",
      "sampling-grid helper hard-coded to CUDA; get_grid() is not called from forward() in this file, so it only fails for external callers"),
    C("=return t_grid.cuda()", "tensor_to_device", "replace", False, "return t_grid.npu()",
      "same helper, fp32 path"),
])
