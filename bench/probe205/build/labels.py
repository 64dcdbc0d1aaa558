"""Labels for probe205: generative-model evaluation / perceptual-metric libraries (CUDA -> Ascend NPU).

One entry per upstream file; one change per line a careful porter would edit. See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_SCRIPT = "entry script: torch 2.1 pin here predates torch_npu autoload (2.5.1), so torch_npu must be imported before any npu device is used"
IMPORT_NPU_LIB = "package API module: users import it from their own scripts, so the library itself must import torch_npu (torch 2.1, no autoload)"
FP64_NOTE = ("fp64 is not supported on the NPU (runtime warns 'Device do not support double dtype now, dtype cast "
             "repalce with float'; torch.mm is bf16/fp16/fp32 only) -> 50k-sample second moments silently accumulated in "
             "fp32 shift FID/FD; keep the fp64 cumulants on the host")
HF32_NOTE = ("precision intent (TF32 off for reproducible FID); on NPU the flag is a no-op and the analogue is the HF32 "
             "switch in torch.npu.matmul / torch.npu.conv -- attribute name and defaults unconfirmed in knowledge")


# ----------------------------------------------------------------------------------------------- pytorch-fid
E("p205_01_pfid_score", "src/pytorch_fid/fid_score.py", "device_branch_or_abstraction",
  "mseitzer/pytorch-fid fid_score.py (CLI `python -m pytorch_fid`, sched_getaffinity workers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_SCRIPT + " (`python -m pytorch_fid` runs fid_score.main)"),
    C('device = torch.device("cuda" if (torch.cuda.is_available()) else "cpu")', "device_type", "add_branch", True,
      'device = torch.device("npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"))',
      "default device picks CPU on an NPU host (cuda unavailable): Inception over 50k images silently runs on CPU"),
])

E("p205_02_pfid_inception", "src/pytorch_fid/inception.py", "explicit_replacement",
  "mseitzer/pytorch-fid inception.py (FID Inception blocks, load_state_dict_from_url)", [])

# ----------------------------------------------------------------------------------------------- clean-fid
E("p205_03_cleanfid_fid", "cleanfid/fid.py", "explicit_replacement",
  "GaParmar/clean-fid fid.py (compute_fid / compute_kid / make_custom_stats with device=torch.device(\"cuda\") defaults)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_LIB + " (`from cleanfid import fid`)"),
    C('=batch_size=128, device=torch.device("cuda"),', "device_type", "replace", False,
      'batch_size=128, device=torch.device("npu"),',
      "get_files_features default; always called with an explicit device from the public API, edited for consistency"),
    C('shuffle=False, seed=0, batch_size=128, device=torch.device("cuda"),', "device_type", "replace", False,
      'shuffle=False, seed=0, batch_size=128, device=torch.device("npu"),',
      "get_folder_features default; callers inside the package pass device"),
    C('batch_size=128, device=torch.device("cuda"), verbose=True,', "device_type", "replace", False,
      'batch_size=128, device=torch.device("npu"), verbose=True,',
      "fid_folder default; reached only via compute_fid which passes device"),
    C('num_gen=50_000, batch_size=128, device=torch.device("cuda"),', "device_type", "replace", False,
      'num_gen=50_000, batch_size=128, device=torch.device("npu"),',
      "get_model_features default; callers pass device"),
    C('=device=torch.device("cuda"), verbose=True,', "device_type", "replace", False,
      'device=torch.device("npu"), verbose=True,',
      "fid_model default; reached via compute_fid which passes device"),
    C('batch_size=8, device=torch.device("cuda"), verbose=True,', "device_type", "replace", False,
      'batch_size=8, device=torch.device("npu"), verbose=True,',
      "compare_folders default; callers pass device"),
    C('num_workers=0, batch_size=64, device=torch.device("cuda"), verbose=True):', "device_type", "replace", True,
      'num_workers=0, batch_size=64, device=torch.device("npu"), verbose=True):',
      "make_custom_stats is public API usually called without device: the default sends the Inception model to cuda and fails"),
    C('=device=torch.device("cuda"), dataset_name="FFHQ",', "device_type", "replace", True,
      'device=torch.device("npu"), dataset_name="FFHQ",',
      "compute_kid public default -> .to(cuda) fails on an NPU host"),
    C('batch_size=32, device=torch.device("cuda"), dataset_name="FFHQ",', "device_type", "replace", True,
      'batch_size=32, device=torch.device("npu"), dataset_name="FFHQ",',
      "compute_fid public default (`fid.compute_fid(dir1, dir2)`) -> .to(cuda) fails on an NPU host"),
])

E("p205_04_cleanfid_features", "cleanfid/features.py", "explicit_replacement",
  "GaParmar/clean-fid features.py (feature_extractor / build_feature_extractor, DataParallel wrap)", [
    C('def feature_extractor(name="torchscript_inception", device=torch.device("cuda")', "device_type", "replace", False,
      'def feature_extractor(name="torchscript_inception", device=torch.device("npu"), resize_inside=False, use_dataparallel=True):',
      "default only; build_feature_extractor always passes device"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "model = model  # torch.nn.DataParallel is unsupported on NPU: keep a single-device extractor",
      "nn.DataParallel is marked unsupported on NPU (Ascend 2.7.1 API list); its scatter/replicate path is CUDA comm; "
      "use_dataparallel defaults to True in compute_fid/compute_kid"),
    C('def build_feature_extractor(mode, device=torch.device("cuda"), use_dataparallel=True):', "device_type", "replace", False,
      'def build_feature_extractor(mode, device=torch.device("npu"), use_dataparallel=True):',
      "default only; every caller in the package passes device"),
])

E("p205_05_cleanfid_clip", "cleanfid/clip_features.py", "explicit_replacement",
  "GaParmar/clean-fid clip_features.py (CLIP_fx for CLIP-FID) plus a CLIP-score helper and CLI", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_SCRIPT + " (module has a __main__ CLI)"),
    C('def __init__(self, name="ViT-B/32", device="cuda"):', "device_type", "replace", True,
      'def __init__(self, name="ViT-B/32", device="npu"):',
      "make_custom_stats builds CLIP_fx without a device, so this default is what runs -> clip.load on cuda fails"),
    C('def __init__(self, name="ViT-B/32", device="cuda:0", batch_size=64):', "device_type", "replace", True,
      'def __init__(self, name="ViT-B/32", device="npu:0", batch_size=64):',
      "CLIPTextScorer default device used by the T2I scripts"),
    C('clip_fx = CLIP_fx("ViT-B/32", device=torch.device("cuda:0"))', "device_type", "replace", True,
      'clip_fx = CLIP_fx("ViT-B/32", device=torch.device("npu:0"))', "hard-coded cuda:0 device"),
    C('device=torch.device("cuda:0"), use_dataparallel=False)', "device_type", "replace", True,
      'device=torch.device("npu:0"), use_dataparallel=False)', "hard-coded cuda:0 passed to compute_fid"),
])

# ----------------------------------------------------------------------------------------------- torch-fidelity
E("p205_06_tfidelity_utils", "torch_fidelity/utils.py", "explicit_replacement",
  "toshas/torch-fidelity utils.py (cuda=True flag, .cuda(non_blocking=True), pin_memory=cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_LIB + " (every metric goes through this module; could equally live in torch_fidelity/__init__.py)"),
    C("feat_extractor.cuda()", "tensor_to_device", "replace", True, "feat_extractor.npu()",
      "cuda=True (the library default) calls Module.cuda() -> 'Torch not compiled with CUDA' on an NPU host"),
    C("sample_similarity.cuda()", "tensor_to_device", "replace", True, "sample_similarity.npu()", "same as above for the PPL LPIPS net"),
    C("pin_memory=cuda,", "pin_memory", "replace", False, 'pin_memory=cuda, pin_memory_device="npu",',
      "without pin_memory_device the DataLoader only pins when CUDA is available -> silently unpinned; performance only"),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch = batch.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
    C("gen_model.cuda()", "tensor_to_device", "replace", True, "gen_model.npu()", "generator moved with Module.cuda()"),
    C("noise = noise.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "noise = noise.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
    C("cond_labels = cond_labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "cond_labels = cond_labels.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
])

E("p205_07_tfidelity_cli", "torch_fidelity/fidelity.py", "explicit_replacement",
  "toshas/torch-fidelity fidelity.py (the `fidelity` CLI with --gpu/--cpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C('default=os.environ.get("CUDA_VISIBLE_DEVICES", None),', "env_var", "replace", False,
      'default=os.environ.get("ASCEND_RT_VISIBLE_DEVICES", None),',
      "only seeds the --gpu default; kept consistent with the setter below"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: `--gpu 3` would silently run on npu:0"),
    C("if not args.cpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not args.cpu and not torch.npu.is_available():",
      "cuda is never available on an NPU host, so the CLI forces --cpu and silently evaluates on CPU"),
])

E("p205_08_tfidelity_ppl", "torch_fidelity/metric_ppl.py", "explicit_replacement",
  "toshas/torch-fidelity metric_ppl.py (perceptual path length with is_cuda transfers)", [
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails on an NPU host"),
    C("batch_lat_e0 = batch_lat_e0.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_lat_e0 = batch_lat_e0.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
    C("batch_lat_e1 = batch_lat_e1.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_lat_e1 = batch_lat_e1.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
    C("batch_labels = batch_labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_labels = batch_labels.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
])

# ----------------------------------------------------------------------------------------------- LPIPS
E("p205_09_lpips_trainer", "lpips/trainer.py", "explicit_replacement",
  "richzhang/PerceptualSimilarity lpips/trainer.py (use_gpu / gpu_ids, DataParallel, .to(int))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_LIB + " (lpips/__init__ star-imports trainer)"),
    C("self.net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "self.net.to(f'npu:{gpu_ids[0]}')",
      "a bare int device index means a CUDA ordinal"),
    C("self.net = torch.nn.DataParallel(self.net, device_ids=gpu_ids)", "unsupported_op_workaround", "replace", True,
      "pass  # torch.nn.DataParallel is unsupported on NPU; train on a single NPU (or wrap in DDP)",
      "nn.DataParallel is unsupported on NPU (Ascend API list); its scatter uses CUDA comm even with one device id"),
    C("self.rankLoss = self.rankLoss.to(device=gpu_ids[0]) # just put this on GPU0", "tensor_to_device", "replace", True,
      "self.rankLoss = self.rankLoss.to(device=f'npu:{gpu_ids[0]}')", "int device index -> CUDA ordinal"),
    C("self.input_ref = self.input_ref.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.input_ref = self.input_ref.to(device=f'npu:{self.gpu_ids[0]}')", "int device index -> CUDA ordinal"),
    C("self.input_p0 = self.input_p0.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.input_p0 = self.input_p0.to(device=f'npu:{self.gpu_ids[0]}')", "int device index -> CUDA ordinal"),
    C("self.input_p1 = self.input_p1.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.input_p1 = self.input_p1.to(device=f'npu:{self.gpu_ids[0]}')", "int device index -> CUDA ordinal"),
    C("self.input_judge = self.input_judge.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.input_judge = self.input_judge.to(device=f'npu:{self.gpu_ids[0]}')", "int device index -> CUDA ordinal"),
    C("self.save_network(self.net.module, path, '', label)", "unsupported_op_workaround", "replace", True,
      "self.save_network(self.net, path, '', label)",
      "follow-on of dropping DataParallel: there is no .module wrapper any more"),
    C("network.load_state_dict(torch.load(save_path))", "device_type", "replace", False,
      "network.load_state_dict(torch.load(save_path, map_location='cpu'))",
      "only checkpoints written on a CUDA host carry cuda-tagged tensors; NPU-trained ones load fine"),
])

E("p205_10_lpips_dirs", "lpips_2dirs.py", "explicit_replacement",
  "richzhang/PerceptualSimilarity lpips_2dirs.py extended to a batched paired/diversity LPIPS script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("torch.cuda.set_device(opt.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu_id)",
      "torch.cuda.set_device raises without CUDA"),
    C("loss_fn.cuda()", "tensor_to_device", "replace", True, "loss_fn.npu()", "Module.cuda() fails on an NPU host"),
    C("shuffle=False, num_workers=4, pin_memory=opt.use_gpu)", "pin_memory", "replace", False,
      'shuffle=False, num_workers=4, pin_memory=opt.use_gpu, pin_memory_device="npu")',
      "pinning silently skipped without CUDA; performance only"),
    C("img0 = img0.cuda()", "tensor_to_device", "replace", True, "img0 = img0.npu()", "Tensor.cuda() fails on an NPU host"),
    C("img1 = img1.cuda()", "tensor_to_device", "replace", True, "img1 = img1.npu()", "Tensor.cuda() fails on an NPU host"),
    C("print('peak GPU memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 2**20))", "torch_cuda_api", "replace", False,
      "print('peak NPU memory: %.1f MB' % (torch.npu.max_memory_allocated() / 2**20))",
      "torch.cuda memory stats return 0 when CUDA is not initialised: wrong log line, not a failure"),
])

# ----------------------------------------------------------------------------------------------- CLIP / CLIP score
E("p205_11_clip_load", "clip/clip.py", "explicit_replacement",
  "openai/CLIP clip/clip.py (load() with cuda default, JIT device patching)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_LIB + " (clip/__init__ re-exports clip.load)"),
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type",
      "add_branch", True,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"), jit: bool = False, download_root: str = None):',
      "default evaluates to cpu on an NPU host, so every caller that relies on it (aesthetic/CLIP-score scripts) silently runs CLIP on CPU"),
])

E("p205_12_clip_score", "src/clip_score/clip_score.py", "device_branch_or_abstraction",
  "Taited/clip-score clip_score.py (pytorch-fid style CLI around clip.load)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("device = torch.device('cuda' if (torch.cuda.is_available()) else 'cpu')", "device_type", "add_branch", True,
      "device = torch.device('npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu'))",
      "falls back to CPU on an NPU host"),
    C("num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", "pinning silently skipped without CUDA; performance only"),
    C("if args.fp16 and device.type == 'cuda' and torch.cuda.get_device_capability(device)[0] >= 8:",
      "device_capability_check", "replace", False, "if args.fp16 and device.type == 'npu':",
      "short-circuits on device.type, so --fp16 is silently ignored on NPU (performance); get_device_capability has no "
      "meaningful NPU value (returns None unless TORCH_NPU_DEVICE_CAPABILITY is set)"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16):",
      "autocast for the cuda device type does not affect NPU kernels: fp32 instead of fp16, performance only"),
])

# ----------------------------------------------------------------------------------------------- aesthetic predictor
E("p205_13_aesthetic_infer", "simple_inference.py", "explicit_replacement",
  "christophschuhmann/improved-aesthetic-predictor simple_inference.py (+ folder batch mode)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("s = torch.load(args.checkpoint)", "device_type", "replace", True,
      "s = torch.load(args.checkpoint, map_location=\"cpu\")",
      "the MLP checkpoints are saved from a CUDA model (see train_predictor.py): deserialising cuda tensors raises "
      "without CUDA unless map_location is given"),
    C('model.to("cuda")', "tensor_to_device", "replace", True, 'model.to("npu")', "cuda device string"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "picks CPU on an NPU host; the MLP is on the accelerator, so the CLIP features end up on the wrong device"),
    C("prediction = model(torch.from_numpy(im_emb_arr).to(device).type(torch.cuda.FloatTensor))", "torch_cuda_api",
      "replace", True, "prediction = model(torch.from_numpy(im_emb_arr).to(device).type(torch.npu.FloatTensor))",
      "torch.cuda.FloatTensor cast needs CUDA"),
    C("num_workers=8, pin_memory=True)", "pin_memory", "replace", False,
      'num_workers=8, pin_memory=True, pin_memory_device="npu")', "pinning silently skipped without CUDA; performance only"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
    C("emb = torch.from_numpy(im_emb_arr).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "emb = torch.from_numpy(im_emb_arr).type(torch.npu.FloatTensor)", "torch.cuda.FloatTensor cast needs CUDA"),
])

E("p205_14_aesthetic_train", "train_predictor.py", "explicit_replacement",
  "christophschuhmann/improved-aesthetic-predictor train_predictor.py (+ --amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "trains on CPU on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent; training stays correct in fp32"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "cuda autocast is a no-op for NPU tensors: --amp silently becomes fp32 (performance only)"),
])

# ----------------------------------------------------------------------------------------------- torchmetrics script
E("p205_15_tm_eval", "scripts/eval_torchmetrics.py", "explicit_replacement",
  "user evaluation script over torchmetrics FrechetInceptionDistance/KID/IS/LPIPS/CLIPScore with torchrun", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL backend not available on an NPU host"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True, 'device = torch.device("npu", local_rank)',
      "cuda device"),
    C("num_workers=args.workers, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
      'num_workers=args.workers, pin_memory=True, pin_memory_device="npu", drop_last=False)',
      "pinning silently skipped without CUDA; performance only"),
    C('p.add_argument("--device", default="cuda")', "device_type", "replace", True, 'p.add_argument("--device", default="npu")',
      "single-process default device"),
    C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.matmul.allow_hf32 = False", HF32_NOTE),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.conv.allow_hf32 = False", HF32_NOTE),
    C('clip_score = CLIPScore(model_name_or_path=args.clip_model).to("cuda") if captions else None', "tensor_to_device",
      "replace", True, "clip_score = CLIPScore(model_name_or_path=args.clip_model).to(device) if captions else None",
      "hard-coded cuda string"),
    C('lpips = LearnedPerceptualImagePatchSimilarity(net_type="alex", normalize=True).cuda()', "tensor_to_device", "replace",
      True, 'lpips = LearnedPerceptualImagePatchSimilarity(net_type="alex", normalize=True).to(device)', "Module.cuda()"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C('results["gpu"] = torch.cuda.get_device_name(device)', "torch_cuda_api", "replace", True,
      'results["gpu"] = torch.npu.get_device_name(device)', "lazy CUDA init raises"),
    C('results["peak_mem_gb"] = torch.cuda.max_memory_allocated(device) / 1e9', "torch_cuda_api", "replace", False,
      'results["peak_mem_gb"] = torch.npu.max_memory_allocated(device) / 1e9',
      "returns 0 when CUDA is not initialised (stats checked before the device index): wrong number in the report"),
])

# ----------------------------------------------------------------------------------------------- EDM2 metrics / FD_DINOv2
E("p205_16_edm2_metrics", "calculate_metrics.py", "explicit_replacement",
  "NVlabs/edm2 calculate_metrics.py (FID + FD_DINOv2 detectors, fp64 cumulants on the GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("device      = torch.device('cuda'), # Which compute device to use.", "device_type", "replace", True,
      "device      = torch.device('npu'), # Which compute device to use.",
      "calc/ref never pass a device, so this default is what runs"),
    C("s.cum_mu = torch.zeros([s.detector.feature_dim], dtype=torch.float64, device=device)",
      "unsupported_op_workaround", "replace", True,
      "s.cum_mu = torch.zeros([s.detector.feature_dim], dtype=torch.float64, device='cpu')",
      FP64_NOTE + "; host-side all_reduce then needs a cpu:gloo backend (torch_utils/distributed.py)"),
    C("s.cum_sigma = torch.zeros([s.detector.feature_dim, s.detector.feature_dim], dtype=torch.float64, device=device)",
      "unsupported_op_workaround", "replace", True,
      "s.cum_sigma = torch.zeros([s.detector.feature_dim, s.detector.feature_dim], dtype=torch.float64, device='cpu')",
      FP64_NOTE),
    C("features = s.detector(images).to(torch.float64)", "unsupported_op_workaround", "replace", True,
      "features = s.detector(images).to('cpu', torch.float64)",
      FP64_NOTE + "; features.T @ features in fp64 is done on the host"),
])

E("p205_17_edm2_dist", "torch_utils/distributed.py", "explicit_replacement",
  "NVlabs/edm2 torch_utils/distributed.py (env:// init, nccl, sync device)", [
    C("backend = 'gloo' if os.name == 'nt' else 'nccl'", "dist_backend", "replace", True,
      "backend = 'gloo' if os.name == 'nt' else 'npu:hccl,cpu:gloo'",
      "NCCL unavailable on NPU; the cpu:gloo half carries the host-side fp64 FD cumulants of calculate_metrics.py"),
    C("torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "raises without CUDA"),
    C("_sync_device = torch.device('cuda') if get_world_size() > 1 else None", "device_type", "replace", True,
      "_sync_device = torch.device('npu') if get_world_size() > 1 else None",
      "training_stats all-reduces on this device; cuda tensors cannot be created on an NPU host"),
])

E("p205_18_dinov2_attn", "dinov2/layers/attention.py", "kernel_rewrite",
  "facebookresearch/dinov2 layers/attention.py (xFormers memory_efficient_attention with guarded import)", [
    C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "add_branch", False,
      "NPU_FA_AVAILABLE = importlib.util.find_spec('torch_npu') is not None  # torch_npu.npu_fusion_attention replaces xformers memory_efficient_attention",
      "xformers cannot be installed on NPU; the guarded import already falls back to the naive O(N^2) Attention, so this "
      "is performance only (ViT-L/14 FD_DINOv2 feature extraction)"),
    C("if not XFORMERS_AVAILABLE:", "attention_kernel", "replace", False,
      "if not (XFORMERS_AVAILABLE or NPU_FA_AVAILABLE):", "route NPU inputs into the fused path instead of the naive fallback"),
    C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", False, "q, k, v = torch.unbind(qkv, 2)",
      "xformers.ops.unbind is unavailable; torch.unbind is equivalent"),
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale)[0]',
      "q/k/v are (B, N, H, D) = BSND; npu_fusion_attention is the Ascend fused attention (A2 training series)"),
])

E("p205_19_dgm_eval_main", "dgm_eval/__main__.py", "device_branch_or_abstraction",
  "layer6ai-labs/dgm-eval __main__.py (FD/FD_inf/KD/PRDC on DINOv2 representations)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("device = torch.device('cuda' if (torch.cuda.is_available()) else 'cpu')", "device_type", "add_branch", True,
      "device = torch.device('npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu'))",
      "falls back to CPU on an NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is simply False on NPU; torch.manual_seed already seeds accelerator generators (unconfirmed for npu)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "see guard above"),
    C('model.model = torch.compile(model.model, mode="reduce-overhead")', "compile_mode", "replace", False,
      'model.model = torch.compile(model.model, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; the NPU analogue is the npugraphs backend -- inductor on NPU needs torch_npu>=2.6, "
      "unconfirmed for this torch 2.1 stack; only with --compile"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; NPU cache just isn't released between models"),
])

# ----------------------------------------------------------------------------------------------- StyleGAN metrics
E("p205_20_sg3_metric_utils", "metrics/metric_utils.py", "explicit_replacement",
  "NVlabs/stylegan3 metrics/metric_utils.py (MetricOptions, FeatureStats, detector cache)", [
    C("self.device         = device if device is not None else torch.device('cuda', rank)", "device_type", "replace", True,
      "self.device         = device if device is not None else torch.device('npu', rank)",
      "metric_main builds MetricOptions without device from training loops"),
    C("c = torch.from_numpy(np.stack(c)).pin_memory().to(opts.device)", "pin_memory", "replace", False,
      "c = torch.from_numpy(np.stack(c)).pin_memory('npu').to(opts.device)",
      "Tensor.pin_memory() defaults to the CUDA pinned allocator in torch 2.1; behaviour with torch_npu unconfirmed"),
    C("data_loader_kwargs = dict(pin_memory=True, num_workers=3, prefetch_factor=2)", "pin_memory", "replace", False,
      "data_loader_kwargs = dict(pin_memory=True, pin_memory_device='npu', num_workers=3, prefetch_factor=2)",
      "pinning silently skipped without CUDA; performance only"),
])

E("p205_21_sg3_calc_metrics", "calc_metrics.py", "explicit_replacement",
  "NVlabs/stylegan3 calc_metrics.py (mp.spawn, file:// init, nccl, TF32 off)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C("init_method = f'file://{init_file}'", "torch_cuda_api", "npu_only_addition", False, "torch.npu.set_device(rank)",
      "Ascend's launch pattern binds each process to its NPU before HCCL init; without it collectives guess the device "
      "-- unconfirmed whether that fails"),
    C("torch.distributed.init_process_group(backend='nccl', init_method=init_method, rank=rank, world_size=args.num_gpus)",
      "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method=init_method, rank=rank, world_size=args.num_gpus)",
      "NCCL not available on an NPU host"),
    C("sync_device = torch.device('cuda', rank) if args.num_gpus > 1 else None", "device_type", "replace", True,
      "sync_device = torch.device('npu', rank) if args.num_gpus > 1 else None", "cuda device for training_stats sync"),
    C("=device = torch.device('cuda', rank)", "device_type", "replace", True, "device = torch.device('npu', rank)",
      "every metric runs on this device"),
    C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.matmul.allow_hf32 = False", HF32_NOTE),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.conv.allow_hf32 = False", HF32_NOTE),
])

E("p205_22_sg2_fused_act", "op/fused_act.py", "kernel_rewrite",
  "rosinality/stylegan2-pytorch op/fused_act.py (JIT-built fused_bias_act CUDA kernel)", [
    C("fused = load(", "custom_cuda_extension", "replace", True,
      "fused = None  # nvcc JIT build impossible on Ascend; the pure-PyTorch path below is used (or an Ascend C op)",
      "cpp_extension.load compiles fused_bias_act_kernel.cu with nvcc at import time -> import fails on an NPU host"),
    C('if input.device.type == "cpu":', "custom_cuda_extension", "replace", True,
      'if input.device.type in ("cpu", "npu"):',
      "any non-cpu tensor is sent to the CUDA kernel; NPU tensors must take the reference leaky_relu path"),
])

E("p205_23_sg2_fid", "fid.py", "explicit_replacement",
  "rosinality/stylegan2-pytorch fid.py (generator sampling + patched Inception, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded cuda device"),
    C("ckpt = torch.load(args.ckpt)", "device_type", "replace", True, 'ckpt = torch.load(args.ckpt, map_location="cpu")',
      "train.py saves g_ema.state_dict() of CUDA modules: loading cuda-tagged tensors raises without CUDA"),
    C("g = nn.DataParallel(g)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on NPU; scatter goes through CUDA comm"),
    C("mean_latent = g.module.mean_latent(args.truncation_mean)", "unsupported_op_workaround", "replace", True,
      "mean_latent = g.mean_latent(args.truncation_mean)", "follow-on of removing the DataParallel wrapper"),
    C("inception = nn.DataParallel(load_patched_inception_v3()).to(device)", "unsupported_op_workaround", "replace", True,
      "inception = load_patched_inception_v3().to(device)", "nn.DataParallel is unsupported on NPU"),
])

# ----------------------------------------------------------------------------------------------- T2I harness
E("p205_24_t2i_run_eval", "t2i_eval/run_eval.py", "device_branch_or_abstraction",
  "COCO-30k text-to-image eval harness (diffusers generation + clean-fid + CLIP score + aesthetic), torchrun", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_SCRIPT),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL_* ignored on NPU; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster docs)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('if cfg.runtime.device == "cuda" and not torch.cuda.is_available():', "device_type", "add_branch", False,
      'if cfg.runtime.device == "npu" and not torch.npu.is_available():',
      "helper stays correct once the config says npu; NPU-aware fallback for consistency"),
    C("torch.backends.cuda.matmul.allow_tf32 = bool(cfg.runtime.tf32)", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.matmul.allow_hf32 = bool(cfg.runtime.tf32)", HF32_NOTE),
    C("torch.backends.cudnn.allow_tf32 = bool(cfg.runtime.tf32)", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.conv.allow_hf32 = bool(cfg.runtime.tf32)", HF32_NOTE),
    C("if torch.cuda.get_device_properties(device).total_memory < 20 * 2**30:", "device_capability_check", "replace", True,
      "if torch.npu.get_device_properties(device).total_memory < 20 * 2**30:",
      "torch.cuda.get_device_properties raises without CUDA; NPU properties do expose total_memory"),
    C('generator = torch.Generator(device="cuda").manual_seed(cfg.seed + rank)', "device_type", "replace", True,
      'generator = torch.Generator(device="npu").manual_seed(cfg.seed + rank)', "cuda generator cannot be created"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.runtime.mixed_precision == "fp16"):', "amp", "replace",
      False, 'with torch.autocast("npu", dtype=torch.float16, enabled=cfg.runtime.mixed_precision == "fp16"):',
      "pipeline weights are already fp16; cuda autocast just does nothing for NPU tensors"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; NPU cache kept until the metrics stage"),
    C("num_workers=cfg.data.num_workers, pin_memory=cfg.data.pin_memory)", "pin_memory", "replace", False,
      'num_workers=cfg.data.num_workers, pin_memory=cfg.data.pin_memory, pin_memory_device="npu")',
      "pinning silently skipped without CUDA; performance only"),
])

E("p205_25_t2i_config", "configs/eval_coco30k.yaml", "device_branch_or_abstraction",
  "OmegaConf config of the COCO-30k T2I eval harness", [
    C("device: cuda              # cuda | cpu", "device_type", "replace", True, "device: npu               # npu | cpu",
      "torch.device(cfg.runtime.device, local_rank) and the fallback helper read this"),
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl", "passed straight to init_process_group"),
    C("attention: xformers       # xformers | sdpa | default", "attention_kernel", "replace", True,
      "attention: sdpa           # sdpa | default  (no xformers on NPU)",
      "enable_xformers_memory_efficient_attention() raises when xformers is not installed; SDPA dispatches to NPU FA"),
])

# ----------------------------------------------------------------------------------------------- packaging
E("p205_26_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a combined GAN/T2I evaluation repo (cu118 wheels, xformers, pynvml)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu needs the CPU build of torch (x86) / plain PyPI torch (aarch64); there are no cu118 aarch64 wheels"),
    C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build; and torch_npu for the 2.1 line is 2.1.0.postN, which requires torch 2.1.0 exactly"),
    C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build; must match torch 2.1.0"),
    C("numpy<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the Ascend adapter itself (v2.1.0-7.2.0, CANN 8.3.RC1)"),
    C("xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
      "no NPU build; the wheel pins a CUDA torch 2.1.2 and source builds need nvcc"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "pure-Python NVML bindings install fine but are useless on NPU (npu-smi / torch.npu.mem_get_info instead)"),
])

E("p205_27_conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml (pytorch + nvidia channels, pytorch-cuda, cudatoolkit-dev for nvcc)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only needed for pytorch-cuda"),
    C("- pytorch=2.1.2", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "torch_npu 2.1.0.postN requires torch 2.1.0 exactly"),
    C("- torchvision=0.16.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0", "must match torch 2.1.0"),
    C("- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
      "pulls the CUDA build of pytorch; not solvable for linux-aarch64 Ascend hosts"),
    C("- cudatoolkit-dev=11.8", "custom_cuda_extension", "removal", True, None,
      "nvcc for the StyleGAN2 op JIT build; x86-only and pointless once op/fused_act.py is ported"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17", "the Ascend adapter"),
])

E("p205_28_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile on nvidia/cuda devel base with cu118 torch and nvcc op prebuild", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "needs a CANN toolkit base (Ascend/cann-container-image); image tag unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime variable; on Ascend the docker runtime injects ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA container runtime only"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0+PTX"', "env_var", "removal", False, None, "only read by nvcc extension builds"),
    C("RUN pip install --no-cache-dir torch==2.1.2+cu118 torchvision==0.16.2+cu118 \\", "torch_cuda_api", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
      "CUDA wheels; torch_npu 2.1.0.postN needs torch 2.1.0"),
    C("--index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C('RUN python -c "import op.fused_act"', "custom_cuda_extension", "removal", False, None,
      "nvcc prebuild step: fails on an unported op/fused_act.py, pointless after porting"),
])

E("p205_29_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of the evaluation package (uv sources pinned to the cu118 index, xformers extra)", [
    C('"torch>=2.1,<2.2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post17",',
      "the Ascend adapter (also forces torch to 2.1.0)"),
    C('dinov2 = ["xformers>=0.0.23"]', "attention_kernel", "replace", False, "dinov2 = []",
      "optional extra; only fails if someone installs gen-eval[dinov2] on the NPU host"),
    C('url = "https://download.pytorch.org/whl/cu118"', "torch_cuda_api", "replace", True,
      'url = "https://download.pytorch.org/whl/cpu"', "uv resolves torch/torchvision from this explicit CUDA index"),
])

# ----------------------------------------------------------------------------------------------- shell launchers
E("p205_30_eval_fid_sh", "scripts/eval_fid_all.sh", "explicit_replacement",
  "batch FID/KID/ISC shell sweep (pytorch-fid, clean-fid, torch-fidelity), one folder per GPU", [
    C("#   SAMPLES_ROOT=/data/samples/ffhq256 REF=/data/ffhq256_50k bash scripts/eval_fid_all.sh", "import_torch_npu",
      "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN env must be sourced for torch_npu (libhccl / ASCEND_OPP_PATH) unless the caller's shell already did; it "
      "goes before `set -u` because set_env.sh trips over unbound variables"),
    C('NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}', "torch_cuda_api", "replace", True,
      "NUM_GPUS=${NUM_GPUS:-$(npu-smi info -l | awk '/Total Count/ {print $4}')}",
      "nvidia-smi is absent: with set -euo pipefail the script exits here"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee -a \"$OUT/log.txt\"",
      "torch_cuda_api", "replace", True, 'npu-smi info | tee -a "$OUT/log.txt"', "nvidia-smi absent, pipefail exits"),
    C('CUDA_VISIBLE_DEVICES=0 python -m pytorch_fid --save-stats "$REF" "$REF_STATS" \\', "env_var", "replace", False,
      'ASCEND_RT_VISIBLE_DEVICES=0 python -m pytorch_fid --save-stats "$REF" "$REF_STATS" \\',
      "device 0 is the default anyway"),
    C('--device cuda:0 --batch-size "$BATCH" --num-workers "$WORKERS"', "device_type", "replace", True,
      '--device npu:0 --batch-size "$BATCH" --num-workers "$WORKERS"', "cuda device string to pytorch-fid"),
    C('CUDA_VISIBLE_DEVICES=$gpu python -m pytorch_fid "$dir" "$REF_STATS" \\', "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=$gpu python -m pytorch_fid "$dir" "$REF_STATS" \\',
      "ignored on NPU: all parallel jobs would pile onto npu:0"),
    C('--device cuda --batch-size "$BATCH" --num-workers "$WORKERS" | sed', "device_type", "replace", True,
      '--device npu --batch-size "$BATCH" --num-workers "$WORKERS" | sed "s/^/[pytorch-fid] /"', "cuda device string"),
    C('CUDA_VISIBLE_DEVICES=$gpu python -c "', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES=$gpu python -c "',
      "ignored on NPU: all parallel jobs would pile onto npu:0"),
    C("device=torch.device('cuda'), use_dataparallel=False))", "device_type", "replace", True,
      "print('[clean-fid]', fid.compute_fid('$dir', '$REF', mode='clean', num_workers=$WORKERS, batch_size=$BATCH, device=torch.device('npu'), use_dataparallel=False))",
      "cuda device in the inline clean-fid call"),
])

E("p205_31_launch_dist_sh", "scripts/launch_dist_metrics.sh", "explicit_replacement",
  "Slurm multi-node torchrun launcher for EDM2-style FID/FD_DINOv2 statistics", [
    C("module load cuda/11.8 nccl/2.18", "import_torch_npu", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "no cuda/nccl modules on the Ascend cluster (set -e exits); the CANN env has to be sourced instead"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* ignored; Ascend log level as rough equivalent (level mapping unconfirmed)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "HCCL uses the NPU's own RoCE NICs; no IB knob"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "Mellanox HCA selection has no HCCL meaning"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node: HCCL picks the host NIC for root-info bootstrap by its own order; a wrong NIC fails link setup"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL default is already 1"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA stream/hw-queue knob, no NPU meaning"),
    C("nvidia-smi -L", "torch_cuda_api", "replace", True, "npu-smi info -l", "nvidia-smi absent; set -e exits"),
])
