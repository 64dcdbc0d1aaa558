"""Labels for probe427 (video prediction / future-frame synthesis, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line alone
fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any 'npu' device string is used "
               "(mandatory for torch_npu < 2.5.1, which this port pins; autoloaded from 2.5.1)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------- PredRNN
E("predrnn_run", "run.py", "explicit_replacement",
  "thuml/predrnn-pytorch run.py (argparse entry point, --device flag passed from the shell scripts)", [
    C("=import os", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])
E("predrnn_model_factory", "core/models/model_factory.py", "explicit_replacement",
  "thuml/predrnn-pytorch core/models/model_factory.py (Model wrapper: build, save, load, train/test steps)", [
    C("stats = torch.load(checkpoint_path)", "device_type", "replace", True,
      "stats = torch.load(checkpoint_path, map_location=self.configs.device)",
      "--pretrained_model points at the released checkpoints, which hold CUDA tensors; without map_location "
      "torch.load tries to restore them on a CUDA device and raises on an NPU host"),
])
E("predrnn_v2_net", "core/models/predrnn_v2.py", "explicit_replacement",
  "thuml/predrnn-pytorch core/models/predrnn_v2.py (PredRNN-V2 with decoupling loss)", [])
E("predrnn_trainer", "core/trainer.py", "explicit_replacement",
  "thuml/predrnn-pytorch core/trainer.py (train/test loops, PSNR/SSIM/LPIPS on CPU)", [])
E("predrnn_mnist_script", "mnist_script/predrnn_v2_mnist_train.sh", "explicit_replacement",
  "thuml/predrnn-pytorch mnist_script/predrnn_v2_mnist_train.sh (launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "card 0 is also the default NPU of a single-process job, so leaving it only loses the intent; "
      "any other index would be silently ignored"),
    C("=cd ..", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment for the launcher; often already set by the container or login shell"),
    C("--device cuda", "device_type", "replace", True, "--device npu \\",
      "run.py passes args.device straight to .to(); 'cuda' fails on an NPU host"),
])

# ----------------------------------------------------------------------------- SimVP (original repo)
E("simvp_main", "main.py", "explicit_replacement",
  "A4Bio/SimVP main.py (argparse, Exp driver)", [
    C("from exp import Exp", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", False,
      "parser.add_argument('--device', default='npu', type=str, help='Name of device to use for tensor computations (npu/cpu)')",
      "inert: Exp._acquire_device never reads args.device (it uses --use_gpu/--gpu)"),
])
E("simvp_exp", "exp.py", "explicit_replacement",
  "A4Bio/SimVP exp.py (Exp class: _acquire_device, train/vali/test)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(self.args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(self.args.gpu)',
      "with --gpu N (N != 0) the CUDA variable is ignored on Ascend and the job silently runs on card 0; "
      "the variable is set before the first NPU call (when the runtime reads it is unconfirmed)"),
    C("device = torch.device('cuda:{}'.format(0))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(0))", "model and batches go to this device"),
])

# ----------------------------------------------------------------------------- OpenSTL (SimVP / TAU home)
E("openstl_main_utils", "openstl/utils/main_utils.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/utils/main_utils.py (mmcv-style seed/env/dist helpers, throughput)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "reproducibility only; torch.manual_seed on the line above is expected to seed the NPU generator too (unconfirmed)"),
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "cuda_available = torch.npu.is_available()", "environment report only"),
    C("for k in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for k in range(torch.npu.device_count()):", "environment report only (CUDA count is 0 -> no device lines)"),
    C("devices[torch.cuda.get_device_name(k)].append(str(k))", "torch_cuda_api", "replace", True,
      "devices[torch.npu.get_device_name(k)].append(str(k))",
      "once the guard and the count are ported this runs and torch.cuda.get_device_name raises on an NPU host"),
    C("def init_dist(launcher: str, backend: str = 'nccl', **kwargs) -> None:", "dist_backend", "replace", False,
      "def init_dist(launcher: str, backend: str = 'hccl', **kwargs) -> None:",
      "default only; BaseExperiment always passes backend explicitly"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "CUDA count is 0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "per-rank device binding for the pytorch launcher"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "per-rank device binding for the mpi launcher"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "the seed tensor is created on this device and broadcast over HCCL when world_size > 1"),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "--fps path; CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--fps path; also needed so elapsed_time measures the NPU work"),
])
E("openstl_parser", "openstl/utils/parser.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/utils/parser.py (create_parser / default_parser)", [
    C("parser.add_argument('--device', default='cuda', type=str,", "device_type", "replace", False,
      "parser.add_argument('--device', default='npu', type=str,",
      "inert: BaseExperiment overwrites self.device in _acquire_device"),
    C("'device': 'cuda',", "device_type", "replace", False, "'device': 'npu',", "inert default, see --device"),
])
E("openstl_exp", "openstl/api/exp.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/api/exp.py (BaseExperiment: device, DDP init, train/vali/test)", [
    C("device = f'cuda:{self._rank}'", "device_type", "replace", True, "device = f'npu:{self._rank}'",
      "distributed device string handed to the method and DDP"),
    C("torch.cuda.set_device(self._rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self._rank)",
      "per-rank device binding"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "single-device path"),
    C("dist_params = dict(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend"),
    C("self.method.model.cuda()", "tensor_to_device", "replace", True, "self.method.model.npu()",
      "raises without CUDA even though the model is already on self.device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silently a no-op on an NPU host (CUDA never initialised); memory only"),
])
E("openstl_base_method", "openstl/methods/base_method.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/methods/base_method.py (AMP via timm NativeScaler, DDP wrap, collect loops)", [
    C("self.amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True,
      "self.amp_autocast = torch.npu.amp.autocast",
      "CUDA autocast does not touch NPU ops: --fp16 would silently train in fp32 while the scaler runs"),
    C("self.loss_scaler = NativeScaler()", "amp", "replace", True,
      "self.loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler builds a CUDA GradScaler, which disables itself without CUDA -> fp16 training with no "
      "loss scaling; device= needs timm >= 1.0 (from memory of timm, not in the knowledge base)"),
    C("torch.cuda.empty_cache()  # release per-batch buffers before gathering", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release per-batch buffers before gathering", "no-op on an NPU host; memory only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on an NPU host; memory only"),
])
E("openstl_simvp_method", "openstl/methods/simvp.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/methods/simvp.py (SimVP train_one_epoch)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "called every iteration; raises on a host without CUDA"),
])
E("openstl_parallel", "openstl/utils/parallel.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/utils/parallel.py (all_gather of numpy results for distributed eval)", [
    C("shape_tensor = torch.Tensor(np.array(myshape)).cuda()", "tensor_to_device", "replace", True,
      "shape_tensor = torch.Tensor(np.array(myshape)).npu()", "HCCL all_gather needs NPU tensors"),
    C("torch.Tensor(np.array(myshape)).cuda() for i in range(world_size)", "tensor_to_device", "replace", True,
      "torch.Tensor(np.array(myshape)).npu() for i in range(world_size)", "HCCL all_gather output buffers"),
    C("torch.Tensor(max_count).cuda() for i in range(world_size)", "tensor_to_device", "replace", True,
      "torch.Tensor(max_count).npu() for i in range(world_size)", "HCCL all_gather output buffers"),
    C("input_tensor = torch.Tensor(padded_input_array).cuda()", "tensor_to_device", "replace", True,
      "input_tensor = torch.Tensor(padded_input_array).npu()", "HCCL all_gather input"),
])
E("openstl_simvp_model", "openstl/models/simvp_model.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/models/simvp_model.py (SimVP encoder / translator / decoder)", [])
E("openstl_modules", "openstl/modules/simvp_modules.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/modules/simvp_modules.py (ConvSC, gSTA, TAU blocks)", [])
E("openstl_metrics", "openstl/core/metrics.py", "explicit_replacement",
  "chengtan9907/OpenSTL openstl/core/metrics.py (MSE/SSIM/PSNR/LPIPS)", [
    C("self.use_gpu = use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_gpu = use_gpu and torch.npu.is_available()",
      "with the default use_gpu=True the net is moved to the NPU (the check below tests the raw argument) while "
      "inputs stay on CPU -> device mismatch"),
    C("self.loss_fn.cuda()", "tensor_to_device", "replace", True, "self.loss_fn.npu()",
      "default use_gpu=True; raises without CUDA"),
    C("img1, img2 = img1.cuda(), img2.cuda()", "tensor_to_device", "replace", True,
      "img1, img2 = img1.npu(), img2.npu()", "inputs must follow the LPIPS net"),
])
E("openstl_train", "tools/train.py", "explicit_replacement",
  "chengtan9907/OpenSTL tools/train.py (entry point)", [
    C("from openstl.api import BaseExperiment", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE),
])
E("openstl_env", "environment.yml", "explicit_replacement",
  "chengtan9907/OpenSTL environment.yml (conda env)", [
    C("- pytorch==1.12.1", "import_torch_npu", "replace", True,
      "- pytorch==2.1.0  # CPU build; the NPU backend comes from torch-npu",
      "torch_npu wheels exist only for specific torch versions (2.1.0 <-> torch-npu 2.1.0.postN); none for 1.12"),
    C("- torchvision==0.13.1", "import_torch_npu", "replace", True, "- torchvision==0.16.0",
      "torchvision must match the torch pin"),
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
      "dead weight on an NPU host; whether it even resolves on aarch64 is unconfirmed"),
    C("- -e .", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "the NPU backend itself (2.1.0.post17 pairs with CANN 8.3.RC1 in the version matrix)"),
])

# ----------------------------------------------------------------------------- E3D-LSTM (PyTorch re-implementation)
E("e3d_model", "src/e3d_lstm.py", "explicit_replacement",
  "PyTorch re-implementation of google/e3d_lstm (E3DLSTM / E3DLSTMCell with recall attention), e.g. metrofun/E3D-LSTM", [
    C("c_history = torch.zeros(tau, batch_size, *memory_shape).cuda()", "tensor_to_device", "replace", True,
      "c_history = torch.zeros(tau, batch_size, *memory_shape).npu()", "hidden state init; raises without CUDA"),
    C("m = torch.zeros(batch_size, *memory_shape).cuda()", "tensor_to_device", "replace", True,
      "m = torch.zeros(batch_size, *memory_shape).npu()", "hidden state init"),
    C("h = torch.zeros(batch_size, *memory_shape).cuda()", "tensor_to_device", "replace", True,
      "h = torch.zeros(batch_size, *memory_shape).npu()", "hidden state init"),
])
E("e3d_trainer", "src/trainer.py", "explicit_replacement",
  "PyTorch E3D-LSTM re-implementation src/trainer.py (legacy typed-tensor idiom, TensorBoard)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "otherwise the whole trainer silently stays on CPU"),
    C("self.dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor", "torch_cuda_api",
      "replace", True, "self.dtype = torch.npu.FloatTensor if torch.npu.is_available() else torch.FloatTensor",
      "batches are moved with .type(self.dtype); unported they stay on CPU while the model is on the NPU "
      "(torch.npu.FloatTensor is in torch_npu.npu.__all__)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "reproducibility only (unconfirmed whether torch.manual_seed already covers the NPU)"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False, "if torch.npu.device_count() > 1:",
      "log message only"),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
      "print(\"Let's use\", torch.npu.device_count(), \"NPUs!\")", "log message only"),
])
E("e3d_dataset", "src/dataset.py", "explicit_replacement",
  "PyTorch E3D-LSTM re-implementation src/dataset.py (Moving MNIST windows, loaders)", [
    C("pin_memory=pin_memory, drop_last=True)", "pin_memory", "replace", False,
      "pin_memory=pin_memory, pin_memory_device='npu', drop_last=True)",
      "performance only: without pin_memory_device older DataLoaders pin only when CUDA is available (unconfirmed for torch_npu)"),
    C("=pin_memory=pin_memory)", "pin_memory", "replace", False,
      "pin_memory=pin_memory, pin_memory_device='npu')", "performance only (unconfirmed)"),
])

# ----------------------------------------------------------------------------- PhyDNet
E("phydnet_main", "main.py", "explicit_replacement",
  "vincent-leguen/PhyDNet main.py (module-level device, train/eval loops, moment constraint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "otherwise training silently falls back to CPU"),
    C("m = k2m(filters.double())", "unsupported_op_workaround", "replace", True, "m = k2m(filters.float())",
      "the K2M moment loss runs tensordot/mm in float64; Ascend lists mm/matmul/tensordot inputs as fp16/fp32(/bf16) "
      "only (torch_api_npu_support_2.7.1.tsv); whether fp64 errors or falls back to CPU is unconfirmed"),
    C("encoder.load_state_dict(torch.load(args.pretrained))", "device_type", "replace", True,
      "encoder.load_state_dict(torch.load(args.pretrained, map_location=device))",
      "released PhyDNet weights were saved from CUDA tensors"),
])
E("phydnet_models", "models/models.py", "explicit_replacement",
  "vincent-leguen/PhyDNet models/models.py (PhyCell, ConvLSTM, EncoderRNN; device passed in)", [])
E("phydnet_moments", "constrain_moments.py", "explicit_replacement",
  "vincent-leguen/PhyDNet constrain_moments.py (K2M / M2K moment matrices)", [
    C("self.register_buffer('_M' + str(j), torch.from_numpy(M[-1]))", "unsupported_op_workaround", "replace", True,
      "self.register_buffer('_M' + str(j), torch.from_numpy(M[-1]).float())",
      "numpy float64 buffer used by K2M; with the input cast to fp32 in main.py a double buffer would be a dtype "
      "mismatch, and fp64 mm is not listed for NPU"),
    C("self.register_buffer('_invM' + str(j), torch.from_numpy(invM[-1]))", "unsupported_op_workaround", "replace",
      False, "self.register_buffer('_invM' + str(j), torch.from_numpy(invM[-1]).float())",
      "only M2K uses it and training never calls M2K; changed for consistency"),
])

# ----------------------------------------------------------------------------- MCVD
E("mcvd_main", "main.py", "explicit_replacement",
  "voletiv/mcvd-pytorch main.py (ncsnv2-style config + device setup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace",
      True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "config.device drives every .to() in the runner; unported everything silently runs on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards seeding only"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", "reproducibility only (unconfirmed)"),
])
E("mcvd_runner", "runners/ncsn_runner.py", "explicit_replacement",
  "voletiv/mcvd-pytorch runners/ncsn_runner.py (train loop, video_gen with FVD)", [
    C("scorenet = torch.nn.DataParallel(get_model(self.config))", "unsupported_op_workaround", "replace", True,
      "scorenet = get_model(self.config)  # nn.DataParallel is not supported on Ascend",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3; use one card (or DDP over HCCL)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; memory only"),
    C("scorenet = torch.nn.DataParallel(scorenet)", "unsupported_op_workaround", "removal", True, None,
      "DataParallel unsupported on Ascend"),
    C("scorenet.load_state_dict(states[0], strict=True)", "unsupported_op_workaround", "replace", True,
      "scorenet.load_state_dict({k[len('module.'):] if k.startswith('module.') else k: v for k, v in states[0].items()}, strict=True)",
      "released MCVD checkpoints were saved from a DataParallel model ('module.' keys); once the wrapper is gone "
      "strict loading fails unless the prefix is stripped"),
    C("torch.cuda.empty_cache()  # free sampler buffers", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free sampler buffers before the next checkpoint", "no-op on an NPU host; memory only"),
    C("num = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "num = torch.npu.device_count()",
      "memory log only; reports 0 GB unported"),
    C("mem_free, mem_total = torch.cuda.mem_get_info(i)", "torch_cuda_api", "replace", False,
      "mem_free, mem_total = torch.npu.mem_get_info(i)", "memory log only, inside try/except"),
])
E("mcvd_models_init", "models/__init__.py", "explicit_replacement",
  "voletiv/mcvd-pytorch models/__init__.py (sigmas, DDPM/DDIM/FPNDM/Langevin samplers)", [])
E("mcvd_fvd", "models/fvd/fvd.py", "explicit_replacement",
  "voletiv/mcvd-pytorch models/fvd/fvd.py (TorchScript I3D features, Frechet distance)", [
    C("i3d = torch.jit.load(filepath).eval().to(device)", "device_type", "replace", False,
      "i3d = torch.jit.load(filepath, map_location='cpu').eval().to(device)",
      "only needed if the TorchScript archive holds CUDA tensors (unconfirmed)"),
    C("i3d = torch.nn.DataParallel(i3d)", "unsupported_op_workaround", "removal", True, None,
      "DataParallel unsupported on Ascend; callers use the module directly"),
])
E("mcvd_upfirdn2d", "models/better/op/upfirdn2d.py", "device_branch_or_abstraction",
  "voletiv/mcvd-pytorch models/better/op/upfirdn2d.py (score_sde / rosinality JIT CUDA op with native fallback)", [
    C('upfirdn2d_op = load("upfirdn2d", sources=[os.path.join(module_path, "upfirdn2d.cpp"),',
      "custom_cuda_extension", "add_branch", True,
      'upfirdn2d_op = None if torch.npu.is_available() else load("upfirdn2d", sources=[os.path.join(module_path, "upfirdn2d.cpp"),',
      "JIT build of a .cu kernel at import time; no nvcc/CUDA on an NPU host"),
    C('if input.device.type == "cpu":', "custom_cuda_extension", "add_branch", True,
      'if input.device.type != "cuda":',
      "route NPU tensors to upfirdn2d_native (pad/conv2d) instead of the missing CUDA op"),
])
E("mcvd_fused_act", "models/better/op/fused_act.py", "device_branch_or_abstraction",
  "voletiv/mcvd-pytorch models/better/op/fused_act.py (fused bias + leaky ReLU CUDA op)", [
    C("=fused = load(", "custom_cuda_extension", "add_branch", True,
      "fused = None if torch.npu.is_available() else load(",
      "JIT build of fused_bias_act_kernel.cu at import time"),
    C('if input.device.type == "cpu":', "custom_cuda_extension", "add_branch", True,
      'if input.device.type != "cuda":', "use the F.leaky_relu path for NPU tensors"),
])
E("mcvd_config", "configs/smmnist_DDPM_big5.yml", "explicit_replacement",
  "voletiv/mcvd-pytorch configs/smmnist_DDPM_big5.yml (no device keys)", [])
E("mcvd_requirements", "requirements.txt", "explicit_replacement",
  "voletiv/mcvd-pytorch requirements (pip)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "harmless once the pins below no longer carry +cu113; CPU index is what the torch_npu docs recommend on x86"),
    C("=# --- deep learning framework ---", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the NPU backend itself"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; torch_npu needs the matching plain torch"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match the torch pin"),
])
E("mcvd_train_sh", "example_scripts/final/training_scripts.sh", "explicit_replacement",
  "voletiv/mcvd-pytorch example_scripts/final/training_scripts.sh (launch recipes)", [
    C('export DATA="/path/to/datasets"', "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; often already set"),
    C("=nvidia-smi", "device_capability_check", "replace", False, "npu-smi info",
      "diagnostic only; the script has no set -e so a missing nvidia-smi does not stop it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "after DataParallel is removed the job uses the first visible card, which is card 0 either way"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "unported the KTH run silently lands on card 0 instead of card 4"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python main.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python main.py --config configs/bair_big.yml \\",
      "card 0 either way (see above)"),
])

# ----------------------------------------------------------------------------- DMVFN
E("dmvfn_train", "scripts/train.py", "explicit_replacement",
  "megvii-research/CVPR2023-DMVFN scripts/train.py (torch.distributed.launch + NCCL, module-level device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "every batch is moved with .to(device)"),
    C("pin_memory=True, drop_last=True, sampler=sampler)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True, sampler=sampler)", "performance only (unconfirmed)"),
    C("val_data = DataLoader(val_dataset, batch_size=1, pin_memory=True, num_workers=1)", "pin_memory", "replace",
      False, "val_data = DataLoader(val_dataset, batch_size=1, pin_memory=True, pin_memory_device='npu', num_workers=1)",
      "performance only (unconfirmed)"),
    C('torch.distributed.init_process_group(backend="nccl", world_size=args.num_gpu)', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", world_size=args.num_gpu)', "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "binds each rank to its card; device('npu') then means the current card"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "reproducibility only (unconfirmed)"),
])
E("dmvfn_model", "model/model.py", "explicit_replacement",
  "megvii-research/CVPR2023-DMVFN model/model.py (Model wrapper, DDP, checkpoint loading)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "the net and losses are moved here; unported they stay on CPU while batches are on the NPU"),
    C("self.dmvfn.load_state_dict(torch.load(load_path), strict=True)", "device_type", "replace", True,
      "self.dmvfn.load_state_dict(torch.load(load_path, map_location='cpu'), strict=True)",
      "load_path is a released (CUDA-saved) checkpoint"),
])
