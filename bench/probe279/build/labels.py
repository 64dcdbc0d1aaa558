# Labels for probe279 (sparse-IMU motion capture / inertial pose estimation, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# "=text" matches a line whose stripped text equals text; otherwise a unique substring.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


ADD_IMPORT = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------- TransPose
E("transpose_config", "config.py", "explicit_replacement",
  "TransPose / PIP config.py (paths, joint_set, acc/vel scale, global device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "config.py is the first project import of every TransPose script and builds torch.device('npu:0') at import "
        "time; without torch_npu loaded (torch < 2.5.1, no autoload) the 'npu' device string is rejected"),
      C("device = torch.device('cuda:0') if use_gpu else torch.device('cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0') if use_gpu else torch.device('cpu')",
        "global device used by every script; torch.device('cuda:0') tensors/modules fail on an NPU host"),
  ])

E("transpose_net", "net.py", "explicit_replacement",
  "TransPose net.py (TransPoseNet: 3-stage pose RNNs + fusion translation)",
  [
      C("self.load_state_dict(torch.load(paths.weights_file))", "device_type", "replace", True,
        "self.load_state_dict(torch.load(paths.weights_file, map_location='cpu'))",
        "weights.pt holds CUDA-tagged tensors (exported from the GPU run); torch.load without map_location tries to "
        "restore them on cuda and raises on a host without CUDA"),
  ])

E("transpose_live_demo", "live_demo.py", "explicit_replacement",
  "TransPose live_demo.py (Noitom Axis Studio UDP -> online TransPose -> Unity socket)",
  [
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "torch.cuda.set_device initialises CUDA and raises without it"),
      C("run_device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
        "run_device = torch.device('npu', args.gpu)", "network device for the live loop and the replay path"),
      C("print('Running TransPose on', torch.cuda.get_device_name(args.gpu))", "torch_cuda_api", "replace", True,
        "print('Running TransPose on', torch.npu.get_device_name(args.gpu))", "get_device_name raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "end of the warm-up; torch.cuda.synchronize raises without CUDA"),
      C("data_nn = torch.cat((acc.view(-1, 18), ori.view(-1, 54)), dim=1).cuda(args.gpu)", "tensor_to_device",
        "replace", True, "data_nn = torch.cat((acc.view(-1, 18), ori.view(-1, 54)), dim=1).to(run_device)",
        "per-frame network input hard-coded to .cuda()"),
  ])

E("transpose_evaluate", "evaluate.py", "explicit_replacement",
  "TransPose evaluate.py (PoseEvaluator / offline+online evaluation on DIP-IMU and TotalCapture)",
  [
      C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
        "on NPU the sync is skipped, so the reported per-frame time measures only kernel launch (wrong number)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "reached once the branch above matches 'npu'; torch.cuda.synchronize raises without CUDA"),
      C("parser.add_argument('--device', default='cuda', help='cuda / cpu')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', help='npu / cpu')",
        "with the cuda default the fallback below silently switches the whole evaluation to CPU"),
      C("if args.device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if args.device.startswith('npu') and not torch.npu.is_available():",
        "dead once the default is 'npu'; ported only so the CPU fallback keeps working"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op when CUDA was never initialised"),
  ])

# ----------------------------------------------------------------------------------------------- articulate
E("articulate_angular", "articulate/math/angular.py", "device_branch_or_abstraction",
  "articulate math/angular.py (rotation conversions shared by TransPose/PIP)",
  [])

E("articulate_model", "articulate/model.py", "explicit_replacement",
  "articulate model.py (ParametricModel: SMPL FK + skinning, benchmark __main__)",
  [
      C("=import sys", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "the __main__ benchmark runs standalone (python -m articulate.model) and needs the npu backend loaded"),
      C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
        "silently benchmarks the CPU on an NPU host"),
      C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish warm-up", "raises without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
  ])

E("articulate_utils_torch", "articulate/utils/torch.py", "device_branch_or_abstraction",
  "articulate utils/torch.py (set_seed, get_device, checkpoints, RNN / RNNWithInit)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generators"),
      C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "removal", False, None,
        "cuBLAS-only determinism knob, ignored on NPU"),
      C("if torch.cuda.is_available():", "device_type", "add_branch", True,
        "if torch.npu.is_available(): return torch.device('npu:%d' % gpu)",
        "without an NPU branch get_device() silently returns CPU on an NPU host"),
      C("return x.detach().cpu().numpy() if x.is_cuda else x.detach().numpy()", "device_type", "replace", True,
        "return x.detach().cpu().numpy()",
        "is_cuda is False for NPU tensors, so .numpy() is called on a device tensor and raises"),
      C("cur = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "cur = torch.npu.memory_allocated() / 1024 ** 2", "returns 0 silently (log string only)"),
      C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2", "returns 0 silently (log string only)"),
      C("def load_checkpoint(path, model, optimizer=None, map_location='cuda'):", "device_type", "replace", True,
        "def load_checkpoint(path, model, optimizer=None, map_location='npu'):",
        "default map_location='cuda' makes torch.load raise on an NPU host"),
  ])

E("articulate_evaluator", "articulate/evaluator.py", "device_branch_or_abstraction",
  "articulate evaluator.py (FullMotionEvaluator: SIP / angular / mesh / jitter errors)",
  [
      C("if joint_mask is not None and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if joint_mask is not None and device.type != 'cpu':",
        "on NPU the mask stays on CPU; indexing device tensors with a CPU index tensor should still work "
        "(unconfirmed for NPU), so this is a host-to-device copy per call, not a failure"),
  ])

# ----------------------------------------------------------------------------------------------- PIP
E("pip_net", "net.py", "explicit_replacement",
  "PIP net.py (5 RNNs on GPU + PhysicsOptimizer on CPU)",
  [
      C("self.load_state_dict(torch.load(paths.weights_file, map_location=lambda storage, loc: storage.cuda()))",
        "tensor_to_device", "replace", True,
        "self.load_state_dict(torch.load(paths.weights_file, map_location=lambda storage, loc: storage.npu()))",
        "storage.cuda() in map_location raises without CUDA"),
      C("imu = normalize_and_concat(glb_acc, glb_rot).cuda()", "tensor_to_device", "replace", True,
        "imu = normalize_and_concat(glb_acc, glb_rot).npu()", "network input hard-coded to CUDA"),
      C("lj_init = self.forward_kinematics(init_pose.view(1, 24, 3, 3))[1][0, joint_set.leaf].view(-1).cuda()",
        "tensor_to_device", "replace", True,
        "lj_init = self.forward_kinematics(init_pose.view(1, 24, 3, 3))[1][0, joint_set.leaf].view(-1).npu()",
        "RNN init input hard-coded to CUDA"),
      C("jvel_init = torch.zeros(24 * 3).cuda()", "tensor_to_device", "replace", True,
        "jvel_init = torch.zeros(24 * 3).npu()", "hard-coded CUDA tensor"),
      C("imu = normalize_and_concat(glb_acc.view(1, 6, 3), glb_rot.view(1, 6, 3, 3)).cuda()", "tensor_to_device",
        "replace", True, "imu = normalize_and_concat(glb_acc.view(1, 6, 3), glb_rot.view(1, 6, 3, 3)).npu()",
        "online path, hard-coded CUDA"),
      C("h = self.rnn1.init_net(lj_init.cuda())", "tensor_to_device", "replace", True,
        "h = self.rnn1.init_net(lj_init.npu()).view(1, 2, 2, self.n_hid).permute(1, 2, 0, 3)",
        "online path, hard-coded CUDA"),
  ])

E("pip_dynamics", "dynamics.py", "explicit_replacement",
  "PIP dynamics.py (PhysicsOptimizer: dual PD controller + QP with pybullet/qpsolvers on CPU)",
  [
      C("import cupy as cp           # optional", "unsupported_op_workaround", "removal", False, None,
        "cupy has no Ascend backend; the guarded import fails (or the flag stays off) and np.linalg.inv is used"),
  ])

E("pip_benchmark", "benchmark_runtime.py", "explicit_replacement",
  "PIP runtime breakdown (CUDA-event timing of the kinematics RNNs vs CPU physics)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script of the PIP repo; the npu device string and torch.npu.* need torch_npu loaded"),
      C("self._start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self._start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created without CUDA"),
      C("self._end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self._end = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity",
        "torch_cuda_api", "replace", False,
        "from torch_npu.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity",
        "--profile only; torch_npu.profiler collects the NPU kernel timeline"),
      C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace",
        False, "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
        "--profile only; the CUDA activity records nothing on NPU (no device timeline)"),
      C("device = torch.device('cuda:%d' % args.gpu)", "device_type", "replace", True,
        "device = torch.device('npu:%d' % args.gpu)", "benchmark device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "resolves the current CUDA device and raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.fp16):",
        "--fp16 only; cuda autocast warns and disables itself without CUDA, so the run is silently fp32"),
      C("peak_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated(device) / 2 ** 20",
        "returns 0 when CUDA is uninitialised: the benchmark's reported peak memory would be wrong"),
      C("print('GPU:', torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
        "print('NPU:', torch.npu.get_device_name(device))", "raises without CUDA"),
  ])

# ----------------------------------------------------------------------------------------------- DIP (PyTorch)
E("dip_train", "train_dip.py", "explicit_replacement",
  "Deep Inertial Poser PyTorch re-implementation: train script with args.cuda / --no-cuda idiom",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script; torch.npu.* and .npu() need torch_npu loaded (torch < 2.5.1)"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        "ignored by the NPU runtime: --gpu would silently stop selecting the card"),
      C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.cuda = not args.no_cuda and torch.npu.is_available()",
        "False on an NPU host, so training silently runs on CPU"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "torch.manual_seed already seeds the NPU; this is a silent no-op"),
      C("dtype = torch.cuda.FloatTensor if args.cuda else torch.FloatTensor", "tensor_to_device", "replace", True,
        "dtype = torch.npu.FloatTensor if args.cuda else torch.FloatTensor",
        ".type(torch.cuda.FloatTensor) moves batches to CUDA; reached once args.cuda is true on NPU"),
      C("kwargs = {'num_workers': args.workers, 'pin_memory': True} if args.cuda else {}", "pin_memory", "replace",
        False, "kwargs = {'num_workers': args.workers, 'pin_memory': True, 'pin_memory_device': 'npu'} if args.cuda else {}",
        "performance only; pinning for the NPU copy engine (pin_memory_device='npu' unconfirmed in knowledge)"),
      C("state = torch.load(args.finetune)", "device_type", "replace", True,
        "state = torch.load(args.finetune, map_location='cpu')",
        "checkpoints written by save() hold CUDA tensors; loading them without map_location raises on NPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU; use DDP via torchrun for several cards",
        "torch.nn.DataParallel is marked unsupported on Ascend (msFmkTransplt / 2.7.1 API list); --multi-gpu"),
      C("x, y, mask = x.cuda(non_blocking=True), y.cuda(non_blocking=True), mask.cuda(non_blocking=True)",
        "tensor_to_device", "replace", True,
        "x, y, mask = x.npu(non_blocking=True), y.npu(non_blocking=True), mask.npu(non_blocking=True)",
        "validation batches"),
      C("net = net.cuda().eval() if args.cuda else net.eval()", "tensor_to_device", "replace", True,
        "net = net.npu().eval() if args.cuda else net.eval()", "test model placement"),
  ])

E("dip_model", "dip/model.py", "explicit_replacement",
  "DIP BiRNN model (init_hidden with is_cuda, flatten_parameters, TorchScript export)",
  [
      C("if weight.is_cuda:", "device_type", "replace", True, "if weight.device.type != 'cpu':",
        "False for NPU weights, so CPU hidden states are fed to an LSTM on the NPU (device mismatch)"),
      C("return (torch.zeros(*shape).cuda(weight.get_device()), torch.zeros(*shape).cuda(weight.get_device()))",
        "tensor_to_device", "replace", True,
        "return (torch.zeros(*shape, device=weight.device), torch.zeros(*shape, device=weight.device))",
        "hard-coded CUDA hidden states"),
      C("self.lstm.flatten_parameters()", "unsupported_op_workaround", "removal", False, None,
        "cuDNN weight compaction; returns early for non-CUDA weights; listed unsupported by msFmkTransplt"),
      C("def export_torchscript(model, path, seq_len=26, device='cuda'):", "device_type", "replace", True,
        "def export_torchscript(model, path, seq_len=26, device='npu'):",
        "default device makes .to('cuda') raise when called without a device"),
  ])

E("dip_data", "dip/data.py", "explicit_replacement",
  "DIP-IMU dataset + apex-style CUDA-stream DataPrefetcher",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream cannot be created without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "stream context"),
      C("self.batch = tuple(t.cuda(non_blocking=True) for t in self.batch)", "tensor_to_device", "replace", True,
        "self.batch = tuple(t.npu(non_blocking=True) for t in self.batch)", "prefetch copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("t.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "t.record_stream(torch.npu.current_stream())", "record_stream against the NPU stream"),
  ])

E("dip_train_sh", "scripts/train_dip.sh", "explicit_replacement",
  "DIP two-stage training launcher (bash)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before python imports torch_npu (libhccl/ASCEND_OPP_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "ignored by the NPU runtime: card selection silently lost"),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api",
        "replace", True, "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3 python preprocess/synthesize_amass_imu.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python preprocess/synthesize_amass_imu.py \\",
        "performance only: once the export above is ported the stage-0 workers otherwise share one NPU"),
  ])

# ----------------------------------------------------------------------------------------------- DynaIP
E("dynaip_train", "train.py", "explicit_replacement",
  "DynaIP train.py (YAML config, AMP, part-based losses, wandb)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script; setup_device() builds an 'npu' device and calls torch.npu.set_device"),
      C("num_workers=cfg.train.num_workers, pin_memory=True, persistent_workers=True,", "pin_memory", "replace",
        False, "num_workers=cfg.train.num_workers, pin_memory=True, pin_memory_device='npu', persistent_workers=True,",
        "performance only (unpinned host buffers without CUDA)"),
      C("val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, pin_memory=True,", "pin_memory",
        "replace", False,
        "val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, pin_memory=True, pin_memory_device='npu',",
        "performance only"),
      C("device = setup_device(cfg.gpu, cfg.get('device', 'cuda'))", "device_type", "replace", False,
        "device = setup_device(cfg.gpu, cfg.get('device', 'npu'))",
        "fallback default only; the shipped YAML sets device explicitly"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "log line only; skipped on NPU"),
      C("logger.info('Using GPU %d: %s' % (cfg.gpu, torch.cuda.get_device_name(cfg.gpu)))", "torch_cuda_api",
        "replace", False, "logger.info('Using NPU %d: %s' % (cfg.gpu, torch.npu.get_device_name(cfg.gpu)))",
        "inside the log-only branch; must change together with it"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=cfg.train.amp)",
        "cuda GradScaler disables itself without CUDA; training still runs (in fp32 with the autocast below)"),
      C("with torch.cuda.amp.autocast(enabled=cfg.train.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=cfg.train.amp):",
        "cfg.train.amp is true; cuda autocast warns and disables itself, so AMP is silently lost (speed/memory)"),
      C("mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 1024 ** 3", "log only; returns 0 without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("dynaip_config", "configs/dynaip_xsens.yaml", "explicit_replacement",
  "DynaIP YAML experiment config",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "passed to setup_device(); 'cuda' on an NPU host falls back to CPU"),
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "eval.py builds torch.device(cfg.eval.device) and moves model/SMPL there"),
  ])

E("dynaip_misc", "utils/misc.py", "device_branch_or_abstraction",
  "DynaIP utils/misc.py (seeding, setup_device, Timer, checkpoint helpers)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of a redundant seed call (torch.manual_seed already seeds the NPU)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "redundant with torch.manual_seed"),
      C("def setup_device(gpu=0, kind='cuda'):", "device_type", "replace", False,
        "def setup_device(gpu=0, kind='npu'):", "default only; callers pass cfg.device"),
      C("if kind == 'cuda':", "device_type", "add_branch", True,
        "if kind == 'npu': torch.npu.set_device(gpu); return torch.device('npu', gpu)",
        "no branch accepts 'npu' (ValueError), and 'cuda' silently falls back to CPU"),
      C("=if device.type == 'cuda':", "device_type", "add_branch", False,
        "if device.type == 'npu': return torch.npu.get_device_name(device)",
        "log description only; NPU get_device_properties has no major/minor, so the CUDA branch cannot be reused"),
      C("if self.device is not None and self.device.type == 'cuda':", "device_type", "add_branch", True,
        "elif self.device is not None and self.device.type == 'npu': torch.npu.synchronize(self.device)",
        "Timer otherwise reads the clock before queued NPU work finishes (wrong timings)"),
  ])

E("dynaip_eval", "eval.py", "explicit_replacement",
  "DynaIP eval.py (smplx-based metrics, offline/online protocol, timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script; torch.device('npu:0') from the YAML needs the backend"),
      C("sync = device.type == 'cuda'", "device_type", "replace", True, "sync = device.type == 'npu'",
        "timing without sync reports launch time only"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA once the condition is ported"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA once the condition is ported"),
      C("res['device'] = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'", "torch_cuda_api",
        "replace", False, "res['device'] = torch.npu.get_device_name(device) if device.type == 'npu' else 'cpu'",
        "metadata only: records 'cpu' on NPU"),
  ])

E("dynaip_model", "model/dynaip.py", "device_branch_or_abstraction",
  "DynaIP part-based model (encoder + per-part RNN branches)",
  [])

# ----------------------------------------------------------------------------------------------- IMUPoser
E("imuposer_config", "src/imuposer/config.py", "explicit_replacement",
  "IMUPoser src/imuposer/config.py (Config class, device combos)",
  [
      C('self.device = torch.device("cuda:%d" % gpu if torch.cuda.is_available() else "cpu")', "device_type",
        "replace", True, 'self.device = torch.device("npu:%d" % gpu if torch.npu.is_available() else "cpu")',
        "SMPL/VPoser buffers silently land on CPU while Lightning moves the model elsewhere"),
      C('self.accelerator = "gpu" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'self.accelerator = "npu" if torch.npu.is_available() else "cpu"',
        "Lightning silently trains on CPU; an 'npu' accelerator needs an NPU-enabled Lightning (unconfirmed in "
        "knowledge)"),
  ])

E("imuposer_train", "scripts/train_model.py", "explicit_replacement",
  "IMUPoser scripts/train_model.py (pytorch_lightning Trainer, per-combo evaluation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script"),
      C('state = torch.load(ckpt_path, map_location="cuda:0")', "device_type", "replace", True,
        'state = torch.load(ckpt_path, map_location="npu:0")', "map_location cuda raises without CUDA"),
      C('print(f"Training {config.model} on {torch.cuda.get_device_name(args.gpu)} -> {checkpoint_path}")',
        "torch_cuda_api", "replace", True,
        'print(f"Training {config.model} on {torch.npu.get_device_name(args.gpu)} -> {checkpoint_path}")',
        "get_device_name raises without CUDA (before trainer.fit)"),
  ])

E("imuposer_model", "src/imuposer/models/LSTMs/IMUPoser_Model.py", "explicit_replacement",
  "IMUPoser LightningModule (packed bi-LSTM, joint loss via SMPL FK, live-demo step)",
  [
      C('x = imu_frame.view(1, 1, -1).float().to("cuda")', "tensor_to_device", "replace", True,
        "x = imu_frame.view(1, 1, -1).float().to(self.device)", "live path hard-codes 'cuda'"),
  ])

E("amass_synth", "preprocess/synthesize_amass_imu.py", "explicit_replacement",
  "AMASS -> synthetic IMU (comp_device idiom, human_body_prior BodyModel, one worker per GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script (also re-imported by the spawned workers)"),
      C('comp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
        True, 'comp_device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "the AMASS comp_device idiom silently selects CPU on an NPU host"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "returns 0, so every worker silently runs the body model on CPU"),
      C("torch.cuda.set_device(rank % n_gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % n_gpu)", "reached once device_count is ported"),
      C("device = torch.device('cuda', rank % n_gpu)", "device_type", "replace", True,
        "device = torch.device('npu', rank % n_gpu)", "per-worker device"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("parser.add_argument('--workers', type=int, default=max(1, torch.cuda.device_count()))", "torch_cuda_api",
        "replace", False, "parser.add_argument('--workers', type=int, default=max(1, torch.npu.device_count()))",
        "default worker count collapses to 1 (performance only)"),
  ])

# ----------------------------------------------------------------------------------------------- physics
E("physics_refine", "physics/physcap_refine.py", "kernel_rewrite",
  "PhysCap-style physics-aware refinement (custom CUDA friction-cone kernel, NVTX, CUDA-event timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script; the ported NVTX ranges use torch_npu.npu.mstx"),
      C("import contact_lcp_cuda as _lcp", "custom_cuda_extension", "removal", False, None,
        "the prebuilt CUDA extension is absent; the ImportError is caught (the JIT fallback below is what fails)"),
      C("_lcp = load(name='contact_lcp_cuda',", "custom_cuda_extension", "removal", True, None,
        "JIT build of a .cu kernel needs nvcc/CUDA_HOME and fails at import; use the PyTorch reference or an "
        "Ascend C kernel"),
      C("out, active = _lcp.project_forward(", "custom_cuda_extension", "replace", True,
        "out = _project_friction_cone_ref(forces, normals, mu)", "call site of the CUDA kernel"),
      C("grad_forces = _lcp.project_backward(", "custom_cuda_extension", "replace", True,
        "grad_forces = torch.autograd.functional.vjp(lambda f: _project_friction_cone_ref(f, normals, ctx.mu), forces, grad_out)[1]",
        "call site of the CUDA backward kernel"),
      C("device='cuda', profile=False):", "device_type", "replace", True, "device='npu', profile=False):",
        "PhysicsRefiner default device; main() does not pass one"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device)", "--profile; raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "--profile; raises without CUDA"),
      C("torch.cuda.nvtx.range_push('friction_cone_projection')", "torch_cuda_api", "replace", True,
        "mstx_id = torch_npu.npu.mstx.range_start('friction_cone_projection')",
        "torch.cuda.nvtx raises 'NVTX functions not installed' without a CUDA build; mstx is the NPU counterpart "
        "(exact call signature unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(mstx_id)",
        "see range_push"),
      C("f = torch.randn(n, 4, 3, device='cuda', dtype=torch.float64)", "tensor_to_device", "replace", True,
        "f = torch.randn(n, 4, 3, device='npu', dtype=torch.float32)",
        "--check-kernel; fp64 support on NPU is limited, so the check is done in fp32"),
      C("nrm = F.normalize(torch.randn(n, 4, 3, device='cuda', dtype=torch.float64), dim=-1)", "tensor_to_device",
        "replace", True, "nrm = F.normalize(torch.randn(n, 4, 3, device='npu', dtype=torch.float32), dim=-1)",
        "--check-kernel"),
      C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
        "torch.set_default_device('npu')", "default tensor type on CUDA raises without CUDA"),
      C("body = art.ParametricModel(args.smpl, device=torch.device('cuda'))", "device_type", "replace", True,
        "body = art.ParametricModel(args.smpl, device=torch.device('npu'))", "body model device"),
      C("data = torch.load(args.input, map_location='cuda')", "device_type", "replace", True,
        "data = torch.load(args.input, map_location='npu')", "map_location cuda raises without CUDA"),
      C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api",
        "replace", True, "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
        "CUDA events cannot be created without CUDA"),
  ])

E("physics_setup", "physics/setup.py", "kernel_rewrite",
  "setup.py building the contact_lcp_cuda CUDAExtension",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension",
        "replace", False,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "the import itself succeeds on an NPU host; it changes with the extension class below"),
      C("if CUDA_HOME is None:", "custom_cuda_extension", "removal", True, None,
        "CUDA_HOME is None on an Ascend host, so setup.py raises before building anything"),
      C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
        "no nvcc on Ascend; an NPU build needs torch_npu's NpuExtension (links torch_npu/ACL)"),
      C("os.path.join(this_dir, 'csrc', 'contact_lcp_kernel.cu')],", "custom_cuda_extension", "replace", True,
        "os.path.join(this_dir, 'csrc', 'contact_lcp_ascendc.cpp')],",
        "the .cu kernel has to be rewritten (Ascend C or plain torch ops)"),
      C("'nvcc': ['-O3', '--use_fast_math', '-std=c++17'] + get_cuda_arch_flags()},", "custom_cuda_extension",
        "removal", False, None, "nvcc flags and sm_XX gencodes are meaningless for an NPU build"),
  ])

# ----------------------------------------------------------------------------------------------- transformer + DDP
E("tip_train_ddp", "train_ddp.py", "explicit_replacement",
  "transformer inertial poser DDP trainer (torchrun, NCCL, bf16 autocast, apex FusedAdam, torch.compile)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script; needed for torch.npu / hccl before init_process_group"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank)",
        "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("device = torch.device('cuda', local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', local_rank)", "training device"),
      C("use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
        "device_capability_check", "replace", False,
        "use_bf16 = torch.npu.is_available() and torch.npu.is_bf16_supported()",
        "short-circuits to False on NPU: fp16 is used instead of bf16 (no failure; NPU has no SM capability)"),
      C("autocast = torch.autocast(device_type='cuda', dtype=amp_dtype) if cfg['train']['amp'] else nullcontext()",
        "amp", "replace", False,
        "autocast = torch.autocast(device_type='npu', dtype=amp_dtype) if cfg['train']['amp'] else nullcontext()",
        "cuda autocast disables itself without CUDA: silently fp32"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=cfg['train']['amp'] and not use_bf16)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=cfg['train']['amp'] and not use_bf16)",
        "cuda GradScaler disables itself without CUDA; needed for fp16 AMP on NPU"),
      C("num_workers=cfg['train']['workers'], pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
        "num_workers=cfg['train']['workers'], pin_memory=True, pin_memory_device='npu', drop_last=True)",
        "performance only"),
      C("val_loader = DataLoader(val_set, batch_size=bs, shuffle=False, num_workers=2, pin_memory=True)",
        "pin_memory", "replace", False,
        "val_loader = DataLoader(val_set, batch_size=bs, shuffle=False, num_workers=2, pin_memory=True, pin_memory_device='npu')",
        "performance only"),
      C("model = torch.compile(model, mode='max-autotune')", "compile_mode", "replace", False,
        "model = torch.compile(model, backend='npugraphs')",
        "--compile only; max-autotune relies on Triton GPU autotuning; NPU graph mode needs torch_npu >= 2.6 or "
        "the npugraphs backend (behaviour on this torch version unconfirmed)"),
      C("optimizer = FusedAdam(groups, lr=cfg['train']['lr'], betas=(0.9, 0.95), adam_w_mode=True)",
        "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(groups, lr=cfg['train']['lr'], betas=(0.9, 0.95))",
        "apex FusedAdam has no NPU kernels; with NVIDIA apex absent the guarded import falls back to AdamW. "
        "Would fail if an apex without CUDA extensions is installed (unconfirmed)"),
      C("batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
        "batch = {k: v.npu(non_blocking=True) for k, v in batch.items()}", "training batches"),
      C("err = torch.zeros(2, device='cuda')", "tensor_to_device", "replace", True,
        "err = torch.zeros(2, device='npu')", "validation accumulator (also all_reduced over HCCL)"),
  ])

E("tip_transformer", "models/tip_transformer.py", "explicit_replacement",
  "causal transformer inertial poser (xformers / SDPA / math attention, KV-cache streaming)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "the module's __main__ benchmark runs standalone on the NPU"),
      C("y = xops.memory_efficient_attention(q, k, v, attn_bias=bias, p=p)", "attention_kernel", "replace", False,
        "y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=p, is_causal=causal).transpose(1, 2)",
        "xformers has no NPU backend; the guarded import fails and attn_impl falls back to sdpa"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "removal", False, None,
        "CUDA SDPA backend selector (unsupported in Ascend's list); with every backend enabled it only sets global "
        "flags, so probably harmless (unconfirmed)"),
      C("def load_for_inference(ckpt_path, cfg=None, device='cuda', half=True):", "device_type", "replace", True,
        "def load_for_inference(ckpt_path, cfg=None, device='npu', half=True):", "default device for the demo"),
      C("model = TIPTransformer().cuda().eval().half()", "tensor_to_device", "replace", True,
        "model = TIPTransformer().npu().eval().half()", "benchmark"),
      C("x = torch.randn(batch, T, 72, device='cuda', dtype=torch.half)", "tensor_to_device", "replace", True,
        "x = torch.randn(batch, T, 72, device='npu', dtype=torch.half)", "benchmark"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().synchronize()", "raises without CUDA"),
  ])

E("tip_launch_sh", "scripts/launch_ddp.sh", "explicit_replacement",
  "torchrun multi-node launcher with NCCL environment",
  [
      C("=export OMP_NUM_THREADS=8", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment for torch_npu / HCCL"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "ignored on NPU: GPUS would no longer restrict the cards"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no effect with HCCL"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
        "multi-node: otherwise HCCL picks the host NIC by its own priority and may choose one the root cannot reach"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL equivalent needed"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink setting, meaningless on NPU"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1", "watchdog setting; HCCL_ASYNC_ERROR_HANDLING is the torch_npu analogue"),
  ])

# ----------------------------------------------------------------------------------------------- environments
E("pip_requirements", "requirements.txt", "explicit_replacement",
  "PIP / TransPose requirements.txt (cu113 wheels, pybullet, qpsolvers, cupy)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch build (x86 from the cpu index, aarch64 from PyPI)"),
      C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "no torch_npu release pairs with torch 1.12.1; +cu113 is a CUDA build"),
      C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must follow the torch version; +cu113 wheel is CUDA-only"),
      C("=numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu wheel matching torch 2.1.0"),
      C("cupy-cuda11x==11.6.0", "unsupported_op_workaround", "removal", False, None,
        "CUDA-only package for an optional code path; no Ascend support (install behaviour on aarch64 unconfirmed)"),
      C("nvidia-ml-py==11.495.46", "unsupported_op_workaround", "removal", False, None,
        "NVML has no NPU counterpart; optional logging dependency"),
  ])

E("dynaip_environment", "environment.yml", "explicit_replacement",
  "DynaIP conda environment.yml (pytorch + nvidia channels, pytorch-cuda)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel no longer needed"),
      C("- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
        "pytorch-cuda selects the CUDA build of pytorch; torch_npu needs the CPU build"),
      C("- cudatoolkit-dev=11.8", "custom_cuda_extension", "removal", False, None,
        "nvcc only used to build pytorch3d's CUDA ops; pytorch3d builds CPU-only without it"),
      C("- easydict==1.10", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "torch_npu wheel matching pytorch 2.1.0"),
      C("- pynvml==11.5.0", "unsupported_op_workaround", "removal", False, None, "NVML has no NPU counterpart"),
  ])

E("tip_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile on nvidia/cuda with apex, xformers and the CUDA extension",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "needs a CANN base image (driver libs mounted by Ascend Docker Runtime); CANN ENV comes with the image"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit in the image"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "CUDA arch list, ignored"),
      C("=RUN python -m pip install --upgrade pip setuptools wheel", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post17", "torch_npu wheel"),
      C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
        "torch_npu 2.1.0 requires exactly torch 2.1.0 (CPU build)"),
      C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "fused_optimizer", "removal", True, None,
        "--cuda_ext build needs nvcc and fails; use torch_npu.optim.NpuFused* (or Ascend apex)"),
      C("RUN pip install xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
        "CUDA wheel that pins torch 2.1.2+cu118 (breaks the torch_npu pairing); no NPU backend"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at run time"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no effect with HCCL"),
  ])
