"""Labels for probe415: image quality assessment (pyiqa, MUSIQ, MANIQA, LIQE, CLIP-IQA, TOPIQ, Q-Align).

One label per upstream line a careful porter would edit for an explicit torch_npu port.
`required` follows the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point; the project's torch pin predates torch_npu 2.5.1 device-backend autoload, so torch.npu / "
               "the 'npu' device only exist after an explicit import torch_npu")
SEED_NOTE = ("torch.manual_seed(seed) on the line above already seeds the registered PrivateUse1 (NPU) generators in "
             "recent torch (unconfirmed in knowledge); the CUDA call is a lazy no-op on an NPU host, so porting it is "
             "hygiene, not a fix")

# ----------------------------------------------------------------------------------------------------------------
# pyiqa (chaofengc/IQA-PyTorch): library + BasicSR-derived training stack; hosts MUSIQ, TOPIQ, etc.
# ----------------------------------------------------------------------------------------------------------------
E("pyiqa_inference_model", "pyiqa/models/inference_model.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/models/inference_model.py (InferenceModel, used by pyiqa.create_metric)", [
    C("self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True,
      "self.device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "default device of every metric; unchanged it silently runs all metrics on CPU on an NPU host"),
])

E("pyiqa_base_model", "pyiqa/models/base_model.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/models/base_model.py (BasicSR BaseModel)", [
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "training model device; 'cuda' fails at net.to(self.device) on an NPU host"),
    C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)",
      "torch_cuda_api", "replace", True,
      "net, device_ids=[torch.npu.current_device()], find_unused_parameters=find_unused_parameters)",
      "DDP device_ids from the CUDA runtime raise without CUDA"),
    C("=net = DataParallel(net)", "distributed_framework", "replace", True,
      "raise NotImplementedError('nn.DataParallel is not supported on Ascend NPU; launch with torchrun --launcher pytorch')",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list; multi-card must go through DDP"),
])

E("pyiqa_general_model", "pyiqa/models/general_iqa_model.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/models/general_iqa_model.py (GeneralIQAModel) - device-agnostic, uses self.device", [])

E("pyiqa_dist_util", "pyiqa/utils/dist_util.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/utils/dist_util.py (BasicSR/mmcv init_dist)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "the pytorch launcher path calls init_dist(args.launcher) with no backend, so this default is what is used"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "per-rank device binding"),
    C("num_gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # npus per node", "slurm path, same failure as the pytorch path"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm path device binding"),
])

E("pyiqa_options", "pyiqa/utils/options.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/utils/options.py (parse_options)", [
    C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "opt['num_gpu'] = torch.npu.device_count()",
      "num_gpu: auto resolves to 0 on an NPU host -> BaseModel silently trains on CPU"),
])

E("pyiqa_misc", "pyiqa/utils/misc.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/utils/misc.py (set_random_seed etc.)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
])

E("pyiqa_prefetch", "pyiqa/data/prefetch_dataloader.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/data/prefetch_dataloader.py (CUDAPrefetcher from BasicSR)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "side stream for H2D copies; CUDA stream creation fails without CUDA"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "prefetch target device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "copy on the side stream"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)",
      "stream sync; leaving it on CUDA would also drop the ordering guarantee for the NPU copies"),
])

E("pyiqa_train", "pyiqa/train.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/train.py (BasicSR train_pipeline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", "resume path"),
    C("map_location=lambda storage, loc: storage.cuda(device_id)", "tensor_to_device", "replace", True,
      "resume_state = torch.load(resume_state_path, map_location=f'npu:{device_id}')",
      "storage.cuda() in map_location fails without CUDA; map straight to the NPU"),
])

E("pyiqa_topiq_arch", "pyiqa/archs/topiq_arch.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/archs/topiq_arch.py (TOPIQ / CFANet) - device-agnostic", [])

E("pyiqa_musiq_arch", "pyiqa/archs/musiq_arch.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch pyiqa/archs/musiq_arch.py (MUSIQ) - device-agnostic", [])

E("pyiqa_infer_script", "inference_iqa.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch inference_iqa.py (CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "CLI default device; unchanged it silently falls back to CPU"),
])

E("pyiqa_test_speed", "tests/test_metric_speed.py", "explicit_replacement",
  "chaofengc/IQA-PyTorch tests/ speed benchmark (cuda events, peak memory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "pytest entry; torch.npu is used directly below"),
    C("return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "return torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "benchmark device fixture"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "sync after warm-up"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "device timing events"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "device timing events"),
    C("torch.cuda.synchronize()  # wait for the timing events", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timing events", "sync before elapsed_time"),
    C("hw_name = torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'", "torch_cuda_api", "replace",
      True, "hw_name = torch.npu.get_device_name(0) if device.type == 'npu' else 'cpu'",
      "otherwise the report says 'cpu' for an NPU run"),
    C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
      "unchanged, NPU runs take the wall-clock path without synchronisation -> wrong (async) timings"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "reached on the NPU branch once the branch above is ported"),
    C("peak_mem = torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated() / 1024**2",
      "the CUDA allocator is never initialised on an NPU host, so this reports 0 MB - a wrong benchmark result"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between metrics; the CUDA call is a no-op on NPU hosts, performance/peak-memory only"),
])

E("pyiqa_train_yml", "options/train/TOPIQ/train_TOPIQ_res50_koniq.yml", "explicit_replacement",
  "chaofengc/IQA-PyTorch options/train/TOPIQ/*.yml", [
    C("backend: nccl", "dist_backend", "replace", True, "  backend: hccl",
      "dist_params are passed to init_dist on the slurm launcher path"),
])

E("pyiqa_dist_sh", "scripts/dist_train.sh", "explicit_replacement",
  "chaofengc/IQA-PyTorch scripts/dist_train.sh (torch.distributed.launch wrapper)", [
    C("PORT=${PORT:-4321}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the shell profile or container, so not required here"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "informational pre-flight print only; its failure does not stop the script"),
    C("CUDA_VISIBLE_DEVICES=$GPU_IDS \\", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS \\",
      "user-chosen card subset (e.g. 2,3) is silently ignored by the Ascend runtime; ranks would land on 0,1"),
])

E("pyiqa_requirements", "requirements.txt", "explicit_replacement",
  "chaofengc/IQA-PyTorch requirements.txt", [
    C("=torch>=1.12", "import_torch_npu", "npu_only_addition", True, "torch-npu",
      "torch_npu must be installed (matching the installed torch x.y.z per the compatibility matrix)"),
])

# ----------------------------------------------------------------------------------------------------------------
# MANIQA (IIGROUP/MANIQA)
# ----------------------------------------------------------------------------------------------------------------
E("maniqa_train", "train_maniqa.py", "explicit_replacement", "IIGROUP/MANIQA train_maniqa.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '2,3'", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '2,3'",
      "selects physical cards 2,3; ignored by the Ascend runtime, so the job silently lands on card 0"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("x_d = data['d_img_org'].cuda()", "tensor_to_device", "replace", True, "x_d = data['d_img_org'].npu()",
      "train batch"),
    C("labels = torch.squeeze(labels.type(torch.FloatTensor)).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.squeeze(labels.type(torch.FloatTensor)).npu()", "train labels"),
    C("d_img = data['d_img_org'].cuda()", "tensor_to_device", "replace", True, "d_img = data['d_img_org'].npu()",
      "eval batch"),
    C("labels = torch.squeeze(data['score'].type(torch.FloatTensor)).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.squeeze(data['score'].type(torch.FloatTensor)).npu()", "eval labels"),
    C("net = nn.DataParallel(net)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend (API list); run single-card (or rewrite to DDP)"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement"),
    C("torch.save(net.module.state_dict(), model_save_path)", "distributed_framework", "replace", True,
      "torch.save(net.state_dict(), model_save_path)",
      "follows from dropping DataParallel: net has no .module any more (AttributeError at the first checkpoint)"),
])

E("maniqa_predict", "predict_one_image.py", "explicit_replacement", "IIGROUP/MANIQA predict_one_image.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "selects card 0, which is what the NPU runtime uses by default anyway - inert"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("net.load_state_dict(torch.load(config.ckpt_path), strict=False)", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(config.ckpt_path, map_location='cpu'), strict=False)",
      "released checkpoint was saved from CUDA tensors; torch.load without map_location raises on a host without CUDA"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement"),
    C("patch = patch_sample['d_img_org'].cuda()", "tensor_to_device", "replace", True,
      "patch = patch_sample['d_img_org'].npu()", "input crop"),
])

E("maniqa_model", "models/maniqa.py", "explicit_replacement", "IIGROUP/MANIQA models/maniqa.py (MANIQA network)", [
    C("score = torch.tensor([]).cuda()", "tensor_to_device", "replace", True,
      "score = torch.tensor([], device=x.device)",
      "hard-coded CUDA accumulator inside forward(); device-following is the right port"),
])

# ----------------------------------------------------------------------------------------------------------------
# LIQE (zwx8981/LIQE) with its vendored OpenAI CLIP
# ----------------------------------------------------------------------------------------------------------------
E("liqe_train", "train_unique_clip_weight.py", "explicit_replacement",
  "zwx8981/LIQE train_unique_clip_weight.py (multi-task CLIP fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu:0" if torch.npu.is_available() else "cpu"',
      "module-level device global; unchanged it silently fine-tunes CLIP on CPU (and in fp32 via the cpu branch)"),
    C("torch.cuda.manual_seed(seed + session)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed + session)", SEED_NOTE),
])

E("liqe_demo", "demo.py", "explicit_replacement", "zwx8981/LIQE demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU fallback otherwise"),
    C("checkpoint = torch.load(ckpt)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(ckpt, map_location=device)",
      "released LIQE.pt holds CUDA tensors (saved from model.state_dict() during GPU training)"),
])

E("liqe_clip", "clip/clip.py", "explicit_replacement", "zwx8981/LIQE clip/clip.py (vendored openai/CLIP loader)", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"',
      "device_type", "replace", False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default only; every LIQE caller passes device= explicitly, so with the callers ported this is not reached"),
])

# ----------------------------------------------------------------------------------------------------------------
# CLIP-IQA (IceClear/CLIP-IQA), built on mmediting 0.x / mmcv-full 1.x
# ----------------------------------------------------------------------------------------------------------------
E("clipiqa_demo", "demo/clipiqa_single_image_demo.py", "explicit_replacement",
  "IceClear/CLIP-IQA demo/clipiqa_single_image_demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.config, args.checkpoint, device=torch.device('cuda', args.device))", "device_type", "replace", True,
      "args.config, args.checkpoint, device=torch.device('npu', args.device))", "model device for init_model"),
])

E("clipiqa_inference", "mmedit/apis/restoration_inference.py", "explicit_replacement",
  "IceClear/CLIP-IQA mmedit/apis/restoration_inference.py (mmediting 0.x API)", [
    C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
      "unchanged the collated DataContainers are never unpacked/moved for an NPU model -> forward fails"),
    C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", False,
      "data = {k: (v.to(device) if torch.is_tensor(v) else v) for k, v in scatter(data, [-1])[0].items()}",
      "unconfirmed: mmcv 1.x scatter to a GPU target copies with .cuda(); scatter to CPU (-1) then move explicitly"),
])

E("clipiqa_apis_train", "mmedit/apis/train.py", "explicit_replacement",
  "IceClear/CLIP-IQA mmedit/apis/train.py (mmediting 0.x train_model)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework",
      "npu_only_addition", True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "needed by the ported non-distributed wrapper below (mmcv>=1.7 NPU wrappers; from memory, not in knowledge)"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "tools/train.py calls init_random_seed(args.seed) with the default; multi-rank broadcast tensor is built on it"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("model, device_ids=[torch.cuda.current_device()], broadcast_buffers=False,", "torch_cuda_api", "replace",
      True, "model, device_ids=[torch.npu.current_device()], broadcast_buffers=False,", "DDP wrapper path"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "model = NPUDistributedDataParallel(",
      "unconfirmed: MMDistributedDataParallel's scatter is CUDA-oriented; mmcv ships an NPU subclass"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model placement before DDP"),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device_ids"),
    C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=range(cfg.gpus))",
      ".cuda() fails on an NPU host; DataParallel-style wrapper replaced by mmcv's NPU wrapper (single card)"),
])

E("clipiqa_tools_train", "tools/train.py", "explicit_replacement", "IceClear/CLIP-IQA tools/train.py (mmediting)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("clipiqa_config", "configs/clipiqa/clipiqa_coop_koniq.py", "explicit_replacement",
  "IceClear/CLIP-IQA configs/clipiqa/*.py (mmcv Config)", [
    C("evaluation = dict(interval=5000, save_image=False, gpu_collect=True)", "distributed_framework", "replace",
      False, "evaluation = dict(interval=5000, save_image=False, gpu_collect=False)",
      "unconfirmed: mmcv's collect_results_gpu builds its byte tensors on device='cuda'; tmpdir collection is device-free"),
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "passed verbatim to init_dist by tools/train.py"),
])

E("clipiqa_docker", "docker/Dockerfile", "explicit_replacement", "IceClear/CLIP-IQA / open-mmlab mmediting docker/Dockerfile", [
    C("FROM pytorch/pytorch:", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0-cann8.0-ubuntu22.04  # any CANN + torch + torch_npu base image",
      "CUDA base image has no CANN/torch_npu; image name is illustrative"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "custom_cuda_extension", "removal", False, None,
      "nvcc arch list, inert without CUDA extensions"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "custom_cuda_extension", "removal", False, None,
      "nvcc flags, inert"),
    C("RUN pip install mmcv-full==1.5.0 -f https://download.openmmlab.com/mmcv/dist/cu101/", "custom_cuda_extension",
      "replace", True, "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2 --no-binary mmcv-full",
      "cu101 wheel links libcudart and cannot be imported on the NPU image; mmcv build flags from memory"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None, "nothing in this image builds CUDA ops; inert"),
])

# ----------------------------------------------------------------------------------------------------------------
# Q-Align (Q-Future/Q-Align), mPLUG-Owl2 / LLaVA training stack
# ----------------------------------------------------------------------------------------------------------------
E("qalign_builder", "q_align/model/builder.py", "explicit_replacement",
  "Q-Future/Q-Align q_align/model/builder.py (load_pretrained_model, LLaVA-style)", [
    C('load_4bit=False, device_map="auto", device="cuda"):', "device_type", "replace", False,
      'def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map="auto", device="npu"):',
      "default only; all callers in the project pass device= explicitly"),
    C('if device != "cuda":', "device_type", "replace", False, 'if device != "npu":',
      "with device='npu' the model is still loaded, but pinned to one card instead of accelerate's device_map='auto' "
      "sharding; matters only for multi-card inference of large checkpoints"),
])

E("qalign_scorer", "q_align/evaluate/scorer.py", "explicit_replacement",
  "Q-Future/Q-Align q_align/evaluate/scorer.py (QAlignScorer / Aesthetic / Video)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module is both the documented public API and a __main__ entry"),
    C('one-align", device="cuda:0", tokenizer=None, model=None, image_processor=None):', "device_type", "replace",
      True,
      'def __init__(self, pretrained="q-future/one-align", device="npu:0", tokenizer=None, model=None, image_processor=None):',
      "public API default used by QAlignScorer() callers"),
    C('q-align-aesthetic", device="cuda:0"', "device_type", "replace", True,
      'def __init__(self, pretrained="q-future/q-align-aesthetic", device="npu:0", tokenizer=None, model=None, image_processor=None):',
      "public API default"),
    C('image_processor=None, video=True):', "device_type", "replace", True,
      'def __init__(self, pretrained="q-future/one-align", device="npu:0", tokenizer=None, model=None, image_processor=None, video=True):',
      "public API default"),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")', "CLI default"),
])

E("qalign_iqa_eval", "q_align/evaluate/iqa_eval.py", "explicit_replacement",
  "Q-Future/Q-Align q_align/evaluate/iqa_eval.py (benchmark evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")',
      "feeds load_pretrained_model and every .to(args.device)"),
])

E("qalign_fa_patch", "q_align/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "Q-Future/Q-Align q_align/train/llama_flash_attn_monkey_patch.py (FastChat/LLaVA flash-attn patch)", [
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel",
      "replace", True, "import torch_npu",
      "flash-attn cannot be installed on NPU hosts; npu_fusion_attention is the training FA"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal", False,
      None, "dead fallback once the try-branch imports torch_npu; removing it is tidiness"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from q_align.train.bert_padding import unpad_input, pad_input  # vendored pure-torch copy",
      "the helpers are pure PyTorch but live in the uninstallable flash-attn package"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, "TND", '
      'atten_mask=torch.triu(torch.ones(2048, 2048, device=qkv.device), 1).bool(), scale=self.head_dim ** -0.5, '
      'sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "varlen packed QKV -> TND layout with cumulative actual_seq lengths; causal via triu mask + sparse_mode=3"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output_unpad = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, "TND", '
      'atten_mask=torch.triu(torch.ones(2048, 2048, device=qkv.device), 1).bool(), scale=self.head_dim ** -0.5, '
      'sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "padded batch path after unpad_input"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "cuda_major, cuda_minor = torch.npu.get_device_capability() or (8, 0)",
      "CUDA capability query raises without CUDA; torch.npu.get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, hence the fallback"),
])

E("qalign_train_mem", "q_align/train/train_mem.py", "explicit_replacement",
  "Q-Future/Q-Align q_align/train/train_mem.py (entry that applies the FA patch)", [])

E("qalign_l1_sh", "scripts/l1_train.sh", "explicit_replacement", "Q-Future/Q-Align scripts/l1_train.sh (deepspeed launcher)", [
    C("--tf32 True \\", "device_capability_check", "replace", True, "    --tf32 False \\",
      "HF TrainingArguments raises '--tf32 requires Ampere or a newer GPU arch' when tf32 is unavailable "
      "(transformers behaviour from memory; knowledge lists is_torch_tf32_available among the APIs transfer_to_npu patches)"),
])

E("qalign_zero3", "scripts/zero3.json", "explicit_replacement", "Q-Future/Q-Align scripts/zero3.json (DeepSpeed ZeRO-3)", [])

E("qalign_pyproject", "pyproject.toml", "explicit_replacement", "Q-Future/Q-Align pyproject.toml", [
    C('"torch==2.0.1",', "import_torch_npu", "npu_only_addition", True, '    "torch-npu==2.0.1.post1",',
      "torch_npu wheel matching torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0; EOL - a real port would bump torch)"),
    C('"accelerate==0.21.0",', "distributed_framework", "replace", True, '    "accelerate>=0.22.0",',
      "native NPU support starts at accelerate 0.22.0; the HF Trainer's device/backend setup goes through it"),
    C('"peft==0.4.0",', "distributed_framework", "replace", False, '    "peft>=0.5.0",',
      "peft NPU support listed from 0.5.0, but only the optional LoRA path uses peft and its layers are device-agnostic"),
    C('"bitsandbytes==0.41.0",', "unsupported_op_workaround", "replace", False, '    # "bitsandbytes",  # 4/8-bit loading not available on NPU in this version',
      "only used for opt-in --load-4bit/--load-8bit; NPU support is partial and version-dependent (unconfirmed for 0.41)"),
    C('"deepspeed==0.9.5",', "distributed_framework", "replace", False, '    "deepspeed>=0.10.0",',
      "unconfirmed: needs a DeepSpeed release with accelerator/npu_accelerator.py (legacy deepspeed_npu only pairs with 0.9.2)"),
    C('"flash-attn>=2.3.0",', "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on NPU hosts; pip install -e .[train] fails"),
])
