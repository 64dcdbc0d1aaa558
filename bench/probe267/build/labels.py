# Labels for probe267: weakly-supervised video anomaly detection / surveillance event detection.
# One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU (torch_npu).
# required=True  -> the unchanged line fails, computes something wrong, or silently does the wrong thing on an
#                   NPU host (judged with the code path exercised and the other labelled lines already ported).
# required=False -> performance-only, silent no-op, cosmetic/logging, or not confirmable in /work/shared/knowledge.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------- RTFM
E("rtfm_main", "main.py", "explicit_replacement", "RTFM main.py (tianyu0207/RTFM)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: registers the npu device (mandatory before torch_npu 2.5.1 autoload); also needed before model.py runs torch.set_default_device('npu') at import"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(seed)",
      "torch.cuda.manual_seed is queued lazily and never applied without CUDA: NPU RNG silently unseeded"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "silent no-op on an NPU host; dropout masks not reproducible"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cudnn flag is accepted but has no effect on NPU kernels; determinism intent is lost (not a correctness issue)"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "hard-coded CUDA device; every later .to(device) fails"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 ** 2))",
      "log line only; returns 0 when CUDA was never initialised"),
])

E("rtfm_model", "model.py", "explicit_replacement", "RTFM model.py (Aggregate / NONLocalBlock1D / MSNSD top-k)", [
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device('npu')",
      "CUDA tensor type unavailable without CUDA; Ascend list says set_default_tensor_type does not accept torch.npu.*Tensor, so use set_default_device"),
    C("select_idx = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx = torch.ones_like(nfea_magnitudes).npu()", ".cuda() raises on an NPU host"),
    C("select_idx_normal = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx_normal = torch.ones_like(nfea_magnitudes).npu()", ".cuda() raises on an NPU host"),
])

E("rtfm_train", "train.py", "explicit_replacement", "RTFM train.py (RTFM_loss, sparsity/smooth terms)", [
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device('npu')", "same module-level default-type switch as model.py; fails without CUDA"),
    C("label = label.cuda()", "tensor_to_device", "replace", True, "label = label.npu()",
      ".cuda() on the labels inside the loss"),
])

E("rtfm_test", "test_10crop.py", "explicit_replacement", "RTFM test_10crop.py (+ stand-alone checkpoint evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "runnable as a script (__main__)"),
    C("device = torch.device('cuda:{}'.format(args.gpus) if args.gpus >= 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpus) if args.gpus >= 0 else 'cpu')", "CUDA device string"),
    C("model.load_state_dict(torch.load(args.ckpt))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(args.ckpt, map_location='cpu'))",
      "released RTFM checkpoints were saved from a CUDA model; torch.load without map_location tries to restore CUDA storages and raises when CUDA is unavailable"),
])

# ----------------------------------------------------------------------------------------------- MGFN
E("mgfn_main", "main.py", "explicit_replacement", "MGFN main.py (carolchenyx/MGFN.)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the device RNG is silently never seeded"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "initialises CUDA and raises"),
    C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpu))", "CUDA device string"),
    C("print('running on', torch.cuda.get_device_name(args.gpu))", "torch_cuda_api", "replace", True,
      "print('running on', torch.npu.get_device_name(args.gpu))", "raises without CUDA"),
    C("model_ckpt = torch.load(args.pretrained_ckpt)", "device_type", "replace", True,
      "model_ckpt = torch.load(args.pretrained_ckpt, map_location='cpu')",
      "the released MGFN checkpoints hold CUDA tensors; loading without map_location raises without CUDA"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only frees cached memory"),
])

E("mgfn_model", "models/mgfn.py", "explicit_replacement", "MGFN models/mgfn.py (FOCUS/GLANCE blocks, MSNSD)", [
    C("select_idx = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx = torch.ones_like(nfea_magnitudes).to(features.device)", ".cuda() raises on an NPU host"),
    C("select_idx_normal = torch.ones_like(nfea_magnitudes).cuda()", "tensor_to_device", "replace", True,
      "select_idx_normal = torch.ones_like(nfea_magnitudes).to(features.device)", ".cuda() raises on an NPU host"),
])

E("mgfn_train", "train.py", "explicit_replacement", "MGFN train.py with an optional torch.cuda.amp path", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch.npu.amp import GradScaler, autocast",
      "CUDA autocast does nothing for NPU tensors and the CUDA GradScaler disables itself: --amp silently trains in fp32 without scaling. The bare autocast()/GradScaler() call sites need no edit once the import is rebound"),
    C("label = label.cuda()", "tensor_to_device", "replace", True, "label = label.npu()", ".cuda() raises"),
])

E("mgfn_test", "test.py", "explicit_replacement", "MGFN test.py (+ __main__ evaluation of a released checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "runnable as a script"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "CUDA device"),
    C("map_location='cuda:0'", "device_type", "replace", True,
      "{k.replace('module.', ''): v for k, v in torch.load('mgfn_ucf.pkl', map_location='npu:0').items()})",
      "map_location names a CUDA device"),
])

# ----------------------------------------------------------------------------------------------- UR-DMU
E("urdmu_main", "ucf_main.py", "explicit_replacement", "UR-DMU ucf_main.py (henrryzh1/UR-DMU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so --gpus silently selects nothing (whether setting it after import takes effect before the lazy NPU init is unconfirmed)"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() raises"),
])

E("urdmu_train", "train.py", "explicit_replacement", "UR-DMU train.py (AD_Loss with dual-memory terms)", [
    C("panomaly_loss = self.bce(panomaly, torch.ones((b)).cuda())", "tensor_to_device", "replace", True,
      "panomaly_loss = self.bce(panomaly, torch.ones((b), device=panomaly.device))", ".cuda() raises"),
    C("A_loss = self.bce(A_att, torch.ones((b)).cuda())", "tensor_to_device", "replace", True,
      "A_loss = self.bce(A_att, torch.ones((b), device=A_att.device))", ".cuda() raises"),
    C("N_loss = self.bce(N_att, torch.ones_like((N_att)).cuda())", "tensor_to_device", "replace", True,
      "N_loss = self.bce(N_att, torch.ones_like(N_att))", "ones_like already follows N_att's device; .cuda() raises"),
    C("A_Nloss = self.bce(A_Natt, torch.zeros_like((A_Natt)).cuda())", "tensor_to_device", "replace", True,
      "A_Nloss = self.bce(A_Natt, torch.zeros_like(A_Natt))", ".cuda() raises"),
    C("_data = _data.cuda()", "tensor_to_device", "replace", True, "_data = _data.npu()", ".cuda() raises"),
    C("_label = _label.cuda()", "tensor_to_device", "replace", True, "_label = _label.npu()", ".cuda() raises"),
    C("_data = torch.cat((ninput, ainput), 0).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "_data = torch.cat((ninput, ainput), 0).npu(non_blocking=True)", ".cuda() raises"),
    C("_label = torch.cat((nlabel, alabel), 0).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "_label = torch.cat((nlabel, alabel), 0).npu(non_blocking=True)", ".cuda() raises"),
])

E("urdmu_model", "model.py", "explicit_replacement", "UR-DMU model.py (Memory_Unit, translayer, WSAD) with a __main__ shape check", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "only the stand-alone shape check needs it; the training entry script already imports torch_npu"),
    C('m = WSAD(input_size=1024, flag="Train", a_nums=60, n_nums=60).cuda()', "tensor_to_device", "replace", True,
      'm = WSAD(input_size=1024, flag="Train", a_nums=60, n_nums=60).npu()', "smoke test: .cuda() raises"),
    C("src = torch.rand(128, 10, 200, 1024).cuda()", "tensor_to_device", "replace", True,
      "src = torch.rand(128, 10, 200, 1024).npu()", "smoke test: .cuda() raises"),
])

E("urdmu_utils", "utils.py", "explicit_replacement", "UR-DMU utils.py (Visualizer, set_seed, smoothing helpers)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", "cudnn flag has no effect on NPU; determinism intent lost"),
])

# ----------------------------------------------------------------------------------------------- VadCLIP
E("vadclip_model", "src/model.py", "explicit_replacement", "VadCLIP src/model.py (CLIPVAD, GCN + DistanceAdj)", [
    C("self.dist = torch.from_numpy(squareform(dist)).to('cuda')", "tensor_to_device", "replace", True,
      "self.dist = torch.from_numpy(squareform(dist)).to(self.sigma.device)",
      "hard-coded 'cuda' in DistanceAdj although the model carries a device attribute"),
    C("self.dist = torch.unsqueeze(self.dist, 0).repeat(batch_size, 1, 1).to('cuda')", "tensor_to_device", "replace", True,
      "self.dist = torch.unsqueeze(self.dist, 0).repeat(batch_size, 1, 1).to(self.sigma.device)", "hard-coded 'cuda'"),
])

E("vadclip_train", "src/ucf_train.py", "device_branch_or_abstraction", "VadCLIP src/ucf_train.py (CLAS2/CLASM losses) with a bf16/fp16 AMP option", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported():",
      "queries CUDA device properties (raises on older torch, False on newer) although Atlas A2 supports bf16"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
      "autocast for device_type cuda does not touch NPU tensors: --amp silently runs fp32"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", "cudnn flag has no effect on NPU"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "torch.cuda.is_available() is False on an NPU host: silently trains on CPU"),
])

E("vadclip_test", "src/ucf_test.py", "device_branch_or_abstraction", "VadCLIP src/ucf_test.py (AUC/AP + detection mAP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "runnable as a script"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently falls back to CPU"),
    C("model_param = torch.load(args.model_path)", "device_type", "replace", True,
      "model_param = torch.load(args.model_path, map_location='cpu')",
      "the released model_ucf.pth state_dict holds CUDA tensors; loading without map_location raises without CUDA"),
])

E("vadclip_clip", "src/clip/clip.py", "device_branch_or_abstraction", "openai/CLIP clip.py as vendored by VadCLIP", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"',
      "device_type", "replace", False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default only; VadCLIP always passes the device explicitly, other callers would silently get CPU"),
])

# ----------------------------------------------------------------------------------------------- feature extraction
E("i3d_extract", "extract_features.py", "explicit_replacement", "piergiaj/pytorch-i3d extract_features.py adapted to UCF-Crime", [
    C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None,
      "CUDA-only device ordering; no effect on Ascend"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "-gpu silently ignored by the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("=i3d.cuda()", "tensor_to_device", "replace", True, "i3d.npu()", ".cuda() raises"),
    C("ip = Variable(torch.from_numpy(inputs.numpy()[:, :, start:end]).cuda(), volatile=True)", "tensor_to_device",
      "replace", True, "ip = Variable(torch.from_numpy(inputs.numpy()[:, :, start:end]).npu(), volatile=True)",
      ".cuda() raises"),
    C("inputs = Variable(inputs.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "inputs = Variable(inputs.npu(), volatile=True)", ".cuda() raises"),
])

E("i3d_resnet", "feature_extraction/extract_i3d_10crop.py", "explicit_replacement",
  "I3D_Feature_Extraction_resnet (10-crop ResNet50-I3D) with one worker process per GPU", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("b_data = Variable(b_data.cuda()).float()", "tensor_to_device", "replace", True,
      "b_data = Variable(b_data.npu()).float()", ".cuda() raises"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)", "raises without CUDA"),
    C("=i3d.cuda()", "tensor_to_device", "replace", True, "i3d.npu()", ".cuda() raises"),
    C("parser.add_argument('--num_gpus', type=int, default=torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "parser.add_argument('--num_gpus', type=int, default=torch.npu.device_count())",
      "default becomes 0 on an NPU host: videos[rank::0] raises / mp.spawn gets nprocs=0"),
])

E("c3d_extract", "feature_extractor.py", "device_branch_or_abstraction",
  "ekosman/AnomalyDetectionCVPR2018-Pytorch feature_extractor.py (C3D fc6, 32 segments)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'return torch.device("npu" if torch.npu.is_available() else "cpu")', "silently extracts on CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpu = torch.npu.device_count()",
      "returns 0: silently single-device, performance only"),
    C("network = nn.DataParallel(network)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (x in the 2.7.1 list and in msFmkTransplt's unsupported list); reached as soon as the device count is ported. Drop it (one process per NPU) or use DDP"),
    C("use_half = args.fp16 and device.type == 'cuda'", "device_type", "replace", False,
      "use_half = args.fp16 and device.type == 'npu'", "--fp16 silently ignored on NPU (runs fp32): performance only"),
    C("data = data.type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", True, "data = data.half()",
      "torch.cuda.HalfTensor type cast fails without CUDA"),
])

E("clip_feats", "tools/extract_clip_features.py", "explicit_replacement",
  "CLIP ViT-B/16 frame-feature extractor for VadCLIP (decord + mp.spawn over GPUs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("p.add_argument('--ngpus', type=int, default=torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "p.add_argument('--ngpus', type=int, default=torch.npu.device_count())",
      "0 on an NPU host: videos[rank::0] raises"),
    C("with torch.cuda.amp.autocast(enabled=use_fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_fp16):", "CUDA autocast does not affect NPU tensors"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)", "raises"),
    C("device = torch.device('cuda', rank)", "device_type", "replace", True, "device = torch.device('npu', rank)",
      "CUDA device"),
    C("ctx = gpu(rank) if args.gpu_decode else cpu(0)", "device_type", "replace", True, "ctx = cpu(0)",
      "decord's gpu() context is NVDEC (CUDA) only: with --gpu-decode the reader fails on an NPU host"),
    C("torch.cuda.memory_allocated(device) / 2 ** 20))", "torch_cuda_api", "replace", False,
      "rank, k, len(todo), name, time.time() - t0, torch.npu.memory_allocated(device) / 2 ** 20))", "log only; reports 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])

# ----------------------------------------------------------------------------------------------- event localisation
E("sed_train_ddp", "tools/train_net.py", "explicit_replacement",
  "ActionFormer-style tools/train_net.py turned into a torchrun/DDP trainer with AMP and a CUDA-stream prefetcher", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "raises"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "no NCCL on Ascend; HCCL backend"),
    C("cudnn.deterministic = True", "torch_cuda_api", "removal", False, None,
      "cudnn flag has no NPU effect (use_deterministic_algorithms two lines below already covers determinism)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(seed)", "silent no-op"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "silent no-op"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS-only knob; harmless but meaningless on Ascend"),
    C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(device=device)", "CUDA stream creation raises"),
    C("return item.pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace", False,
      "return item.pin_memory(device='npu').to(self.device, non_blocking=True)",
      "unconfirmed: on older torch the default pin_memory() device resolves to CUDA; the DataLoader already pins"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream API"),
    C("v.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "v.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "CUDA autocast does not cover NPU tensors"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
    C("block4 = 'mem {:.0f}MB'.format(torch.cuda.max_memory_allocated() / 1024.0 / 1024.0)", "torch_cuda_api",
      "replace", False, "block4 = 'mem {:.0f}MB'.format(torch.npu.max_memory_allocated() / 1024.0 / 1024.0)",
      "log only; reports 0"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "validation autocast silently inactive on NPU"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "CUDA device"),
    C("model = model.cuda(args.local_rank)", "tensor_to_device", "replace", True, "model = model.npu(args.local_rank)",
      ".cuda() raises"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg['opt'].get('amp', True))", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg['opt'].get('amp', True))", "CUDA GradScaler disables itself"),
    C("map_location=lambda storage, loc: storage.cuda(args.local_rank))", "device_type", "replace", True,
      "map_location=lambda storage, loc: storage.npu(args.local_rank))", "storage.cuda() in map_location raises"),
])

E("sed_blocks", "libs/modeling/blocks.py", "device_branch_or_abstraction",
  "ActionFormer libs/modeling/blocks.py (MaskedConv1D, MaskedMHA, TransformerBlock) with optional flash-attn / xformers / SDPA", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "needed only for the fused NPU attention branch below"),
    C('if self.attn_impl == "flash" and HAS_FLASH_ATTN and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16):',
      "attention_kernel", "add_branch", False,
      'elif self.attn_impl == "flash" and q.is_npu: out = torch_npu.npu_fusion_attention(q, k, v, self.n_head, "BNSD", atten_mask=torch.logical_not(mask[:, :, None, :]).expand(B, 1, T, T), scale=self.scale, keep_prob=1.0 - (self.attn_pdrop if self.training else 0.0))[0]',
      "flash-attn cannot be installed on Ascend and q.is_cuda is False, so the default attn_impl silently takes the math path; add an npu_fusion_attention branch (performance)"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):",
      "attention_kernel", "removal", False, None,
      "sdp_kernel is unsupported on Ascend (msFmkTransplt list) and only toggles CUDA SDPA backends; SDPA itself works on NPU"),
])

E("sed_roi_ops", "libs/ops/temporal_roi_align.py", "kernel_rewrite",
  "Python wrapper around an nvcc-built temporal RoI-Align extension (+ CPU 1D-NMS), as in temporal-localisation codebases", [
    C("import temporal_roi_align_cuda as _C", "custom_cuda_extension", "replace", True,
      "import temporal_roi_align_npu as _C",
      "nvcc-built module cannot exist on Ascend; rewrite the kernel in Ascend C (NpuExtension / OpPlugin)"),
    C("if not feats.is_cuda:", "device_type", "replace", True, "if not feats.is_npu:",
      "raises NotImplementedError for NPU tensors"),
    C("output = _C.forward(feats.contiguous(), rois.contiguous(), spatial_scale,", "custom_cuda_extension", "replace", True,
      "output = torch.ops.sed_npu.temporal_roi_align_forward(feats.contiguous(), rois.contiguous(), spatial_scale,",
      "call site of the CUDA kernel"),
    C("grad_input = _C.backward(grad_output.contiguous(), rois, ctx.spatial_scale,", "custom_cuda_extension", "replace", True,
      "grad_input = torch.ops.sed_npu.temporal_roi_align_backward(grad_output.contiguous(), rois, ctx.spatial_scale,",
      "call site of the CUDA backward kernel"),
])

E("sed_setup", "setup.py", "kernel_rewrite", "setup.py building a CppExtension (1D NMS) and a CUDAExtension (temporal RoI-Align)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME",
      "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself works on an NPU host; NpuExtension is what the build needs"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", "replace", True,
      'if os.environ.get("ASCEND_TOOLKIT_HOME") is None:', "CUDA_HOME is None on an Ascend host: setup.py aborts"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", "removal", False, None, "nvcc arch list; meaningless"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "no nvcc on Ascend"),
    C('"./csrc/temporal_roi_align_cuda.cu",', "custom_cuda_extension", "replace", True,
      '"./csrc/temporal_roi_align_npu.cpp",', ".cu kernel must be rewritten (Ascend C) and bound through the NPU extension"),
    C('define_macros=[("WITH_CUDA", None)],', "custom_cuda_extension", "replace", False,
      'define_macros=[("WITH_NPU", None)],', "depends on the csrc guards (unconfirmed)"),
    C('"nvcc": ["-O3", "--use_fast_math"', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are ignored once the extension is not a CUDAExtension"),
])

E("sed_bench", "tools/benchmark.py", "explicit_replacement",
  "latency/throughput benchmark of the VAD scoring heads (CUDA events, profiler, NVTX, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script; mstx/profiler need torch_npu"),
    C("p.add_argument('--device', default='cuda:0')", "device_type", "replace", True,
      "p.add_argument('--device', default='npu:0')", "CUDA default device"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "raises without CUDA"),
    C("'sm': '{}.{}'.format(props.major, props.minor),", "device_capability_check", "replace", True,
      "'cube_cores': props.cube_core_num,",
      "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, cube/vector core counts)"),
    C("return torch.autocast(device_type='cuda', dtype=torch.float16, enabled=enabled)", "amp", "replace", True,
      "return torch.autocast(device_type='npu', dtype=torch.float16, enabled=enabled)",
      "--amp would silently benchmark fp32"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events unusable"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events unusable"),
    C('torch.cuda.nvtx.range_push("iter{}".format(i))', "torch_cuda_api", "replace", True,
      'rid = torch_npu.npu.mstx.range_start("iter{}".format(i))',
      "torch.cuda.nvtx is not redirected and fails on NPU; mstx is the Ascend equivalent"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
      "see range_push"),
    C("torch.cuda.synchronize()  # wait for gpu sync", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for npu sync", "raises"),
    C("torch.cuda.synchronize()  # drain queued work", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain queued work before starting the clock", "raises"),
    C("torch.cuda.synchronize()  # stop the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # stop the clock after the last kernel", "raises"),
    C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api",
      "replace", True, "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "torch.profiler records no NPU kernels; ProfilerActivity is x in Ascend's list, torch_npu.profiler is the counterpart"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity collects nothing on NPU"),
    C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))', "torch_cuda_api", "removal", True,
      None, "key_averages is x in Ascend's list and cuda_time_total has no NPU meaning; read the exported trace instead"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "raises"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs")',
      "max-autotune relies on Triton/CUDA-graph autotuning; NPU Inductor support is version-dependent (unconfirmed)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "raises"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "resolves the CUDA device index and raises"),
    C("peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", True,
      "peak_mb = torch.npu.max_memory_allocated(device) / 1024 ** 2",
      "a reported benchmark metric: silently 0 MB without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])

E("sed_online", "demo/online_monitor.py", "device_branch_or_abstraction",
  "real-time CCTV anomaly monitor (I3D fp16 + UR-DMU head, NVML stats, adaptive threshold)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("=import pynvml", "torch_cuda_api", "removal", False, None, "import works if installed; NVML is unused after the port"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None, "NVML library not present on an Ascend host: raises"),
    C("h = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", "removal", True, None, "NVML handle"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu", "torch_cuda_api", "replace", True,
      "util = torch.npu.utilization(index)", "NVML query; torch.npu.utilization is the NPU counterpart"),
    C("used = pynvml.nvmlDeviceGetMemoryInfo(h).used / 2 ** 20", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(index); used = (total - free) / 2 ** 20", "NVML query"),
    C("x = torch.from_numpy(np.stack(clips)).pin_memory()", "pin_memory", "replace", False,
      "x = torch.from_numpy(np.stack(clips)).pin_memory(device='npu')",
      "unconfirmed: default pin_memory() device may resolve to CUDA on older torch"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", "CUDA autocast inactive for NPU tensors"),
    C("device=scores_t.device).scatter_reduce(", "unsupported_op_workaround", "replace", False,
      "peaks = torch.zeros(len(cam_index)).scatter_reduce(0, cam_idx.cpu(), scores_t.float().cpu(), reduce='amax', include_self=False)",
      "scatter_reduce is x in Ascend's 2.7.1 list and msFmkTransplt's unsupported list (no NPU kernel: CPU fallback at best); tiny tensor, do it on CPU"),
    C("device = 'cuda:{}'.format(args.gpu) if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu:{}'.format(args.gpu) if torch.npu.is_available() else 'cpu'", "silently runs on CPU"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", "raises"),
])

# ----------------------------------------------------------------------------------------------- non-Python
E("sh_run", "scripts/run_ucf.sh", "explicit_replacement", "reproduction script running RTFM / MGFN / UR-DMU on one GPU", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced or import torch_npu cannot find libascendcl/libhccl"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "GPU=2 would silently still use device 0 on Ascend"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info | tee -a ${LOG}/env.txt", "environment log only (pipeline exit status is tee's)"),
    C('if [ "$(nvidia-smi -L | wc -l)" -gt 1 ]; then', "torch_cuda_api", "replace", True,
      'if [ "$(npu-smi info -l | grep -c \'NPU ID\')" -gt 1 ]; then',
      "nvidia-smi missing -> count 0 -> the XD-Violence run is silently skipped"),
    C("(cd UR-DMU && CUDA_VISIBLE_DEVICES=1 python xd_main.py", "env_var", "replace", True,
      "(cd UR-DMU && ASCEND_RT_VISIBLE_DEVICES=1 python xd_main.py \\",
      "second run would land on the same NPU as the first"),
])

E("sh_dist", "scripts/dist_train.sh", "explicit_replacement", "torchrun launcher with NCCL tuning (mmaction/ActionFormer style dist_train.sh)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "source CANN before torchrun"),
    C("export CUDA_VISIBLE_DEVICES=${DEVICES}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${DEVICES}",
      "device subset silently ignored"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "logging only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node NIC choice; HCCL's default NIC order may or may not pick eth0 (unconfirmed for this cluster)"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL knob"),
])

E("reqs", "requirements.txt", "explicit_replacement", "requirements.txt pinning CUDA 11.3 torch wheels, xformers and pynvml", [
    C("# ---- deep learning framework (CUDA 11.3 wheels) ----", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17", "torch_npu pin matching torch 2.1.0 (CANN 8.3.RC1 line)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend installs CPU torch on x86 (plain PyPI on aarch64); a CUDA wheel index only adds nvidia-* downloads (unconfirmed that it breaks)"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; torch_npu needs a matching plain torch (no torch_npu for 1.12)"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match the new torch; +cu113 build"),
    C("xformers==0.0.16", "attention_kernel", "removal", True, None,
      "no NPU backend; the wheel is CUDA-built and pins torch 1.13, which would break the torch/torch_npu pairing"),
    C("pynvml==11.5.0", "torch_cuda_api", "removal", False, None, "NVML has no Ascend counterpart; unused after the port"),
])

E("envyml", "environment.yml", "explicit_replacement", "conda environment.yml of a 2021-era VAD repo (pytorch + cudatoolkit 11.3)", [
    C("=- nvidia", "env_var", "removal", False, None, "NVIDIA conda channel not needed"),
    C("=- pytorch=1.10.1=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
      "CUDA build string; torch_npu needs a matching CPU torch 2.1.0 (or install torch from pip)"),
    C("=- torchvision=0.11.2=py38_cu113", "import_torch_npu", "replace", True, "- torchvision=0.16.0=*cpu*",
      "CUDA build string"),
    C("=- cudatoolkit=11.3", "env_var", "removal", False, None, "dead weight on Ascend"),
    C("=- cudnn=8.2", "env_var", "removal", False, None, "dead weight on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17", "torch_npu from pip"),
    C("=- nvidia-ml-py3", "torch_cuda_api", "removal", False, None, "NVML bindings; unused on Ascend"),
])

E("docker", "docker/Dockerfile", "explicit_replacement", "Dockerfile on nvidia/cuda:11.3.1-cudnn8-devel for extraction and the online monitor", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11", "no CANN toolkit / driver user libs in a CUDA image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime knob; Ascend-Docker-Runtime uses ASCEND_VISIBLE_DEVICES / --device mounts"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", "removal", False, None, "nvidia runtime only"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit on Ascend"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None, "nvcc arch list"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "forces CUDA builds in third-party setup.py files"),
    C("RUN pip install --no-cache-dir torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu missing"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "device restriction silently ignored"),
])

E("yaml_cfg", "configs/ucf_crime_i3d.yaml", "explicit_replacement", "ActionFormer-style YAML config for UCF-Crime temporal events", [
    C("devices: ['cuda:0']", "device_type", "replace", True, "devices: ['npu:0']",
      "read by the eval / single-device path to place the model"),
])
