# Labels for probe322: person / vehicle re-identification (fast-reid, torchreid, TransReID, CLIP-ReID,
# reid-strong-baseline, an AICity-style vehicle re-id repo) moved from CUDA GPUs to Ascend NPUs.
#
# One C(...) per line a careful porter would edit. "=text" matches a line whose stripped text equals text.
# required=True : the unchanged line fails on an NPU host, computes something wrong, or silently does the
#                 wrong thing there.  required=False: performance-only, silent no-op, logging, or unconfirmed.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------------
# fast-reid
# --------------------------------------------------------------------------------------------------

E("fastreid_config_defaults", "fastreid/config/defaults.py", "explicit_replacement",
  "fast-reid fastreid/config/defaults.py (yacs defaults)", [
      C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True,
        '_C.MODEL.DEVICE = "npu"',
        "build_model() does model.to(torch.device(cfg.MODEL.DEVICE)); 'cuda' fails on an NPU host (CPU torch build under torch_npu)"),
  ])

E("fastreid_launch", "fastreid/engine/launch.py", "explicit_replacement",
  "fast-reid fastreid/engine/launch.py (detectron2-style mp.spawn launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "every tools/*.py entry goes through launch(); registers the npu device / torch.npu before any device call "
        "(mandatory before torch_npu 2.5.1, which the torch 2.1 pin implies)"),
      C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "has_gpu = torch.npu.is_available()",
        "False on an NPU host: workers silently fall back to GLOO and never bind their device"),
      C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()",
        "torch.cuda.device_count() is 0 on an NPU host; reached as soon as has_gpu is fixed"),
      C('backend="NCCL" if has_gpu else "GLOO",', "dist_backend", "replace", True,
        'backend="HCCL" if has_gpu else "GLOO",',
        "NCCL is not available in the torch build paired with torch_npu; NPU collectives need HCCL"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "raises on a torch build without CUDA; without it every rank would share npu:0"),
  ])

E("fastreid_comm", "fastreid/utils/comm.py", "explicit_replacement",
  "fast-reid fastreid/utils/comm.py (detectron2 comm primitives)", [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "backend-string comparisons are not rewritten by torch_npu (mstt README: edit by hand); with 'hccl' the "
        "pickled-object gathers lose their gloo group and hit the nccl-only assert below"),
      C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
        'assert backend in ["gloo", "nccl", "hccl"]',
        "after the gloo-group fix only reached when a caller passes an HCCL group explicitly; edit for completeness"),
      C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
        'device = torch.device("cpu" if backend == "gloo" else "npu")',
        "same path as the assert: only non-gloo groups serialise onto the device"),
  ])

E("fastreid_train_loop", "fastreid/engine/train_loop.py", "explicit_replacement",
  "fast-reid fastreid/engine/train_loop.py (SimpleTrainer / AMPTrainer)", [
      C('with torch.cuda.stream(torch.cuda.Stream() if device.type == "cuda" else None):', "torch_cuda_api", "replace", False,
        'with torch.npu.stream(torch.npu.Stream() if device.type == "npu" else None):',
        "device.type is 'npu', so this degrades to a no-op context: metrics are copied on the compute stream "
        "(works, loses the side stream)"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is unavailable: loss scaling silently off"),
      C('assert torch.cuda.is_available(), "[AMPTrainer] CUDA is required for AMP training!"', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "[AMPTrainer] NPU is required for AMP training!"',
        "assertion fails on every NPU host when SOLVER.AMP.ENABLED"),
      C("from torch.cuda.amp import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "cuda autocast is disabled without CUDA, so AMP silently runs in fp32"),
  ])

E("fastreid_data_utils", "fastreid/data/data_utils.py", "explicit_replacement",
  "fast-reid fastreid/data/data_utils.py (DataLoaderX CUDA-stream prefetcher)", [
      C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.local_rank)",
        "prefetch thread binds its device; raises on a torch build without CUDA"),
      C("self.stream = torch.cuda.Stream(", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream(",
        "CUDA stream construction fails on an NPU host"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", False,
        "with torch.npu.stream(self.stream):",
        "with an NPU stream the CUDA context manager either no-ops (copies land on the default stream, no overlap) or "
        "raises, depending on the torch version; unconfirmed which, so marked not required"),
      C("device=self.local_rank, non_blocking=True", "tensor_to_device", "replace", True,
        'device=f"npu:{self.local_rank}", non_blocking=True',
        "a bare int device is a CUDA ordinal to Tensor.to (transfer_to_npu has to rewrite exactly this case); "
        "batches would never reach the NPU"),
      C("torch.cuda.current_stream().wait_stream(", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(",
        "current_stream() initialises CUDA and raises on an NPU host"),
  ])

E("fastreid_compute_dist", "fastreid/utils/compute_dist.py", "explicit_replacement",
  "fast-reid fastreid/utils/compute_dist.py (jaccard re-ranking via faiss-gpu, from OpenUnReID)", [
      C('dist = compute_jaccard_distance(feat, k1=kwargs["k1"], k2=kwargs["k2"], search_option=0)',
        "unsupported_op_workaround", "replace", True,
        'dist = compute_jaccard_distance(feat, k1=kwargs["k1"], k2=kwargs["k2"], search_option=3)',
        "option 0 runs faiss StandardGpuResources on CUDA tensors; faiss has no Ascend backend, so TEST.RERANK must "
        "use the faiss-cpu IndexFlatL2 branch (3). The GPU branches then become dead code and are left alone"),
  ])

E("fastreid_collect_env", "fastreid/utils/collect_env.py", "device_branch_or_abstraction",
  "fast-reid fastreid/utils/collect_env.py (detectron2 environment report)", [
      C('data.append(("GPU available", has_gpu))', "torch_cuda_api", "add_branch", False,
        'data.append(("NPU available", hasattr(torch, "npu") and torch.npu.is_available()))',
        "environment report only (prints 'GPU available False' on NPU); add NPU rows beside the GPU rows and keep the "
        "CUDA branch for GPU hosts"),
  ])

E("fastreid_evaluator", "fastreid/evaluation/evaluator.py", "device_branch_or_abstraction",
  "fast-reid fastreid/evaluation/evaluator.py (inference_on_dataset)", [
      C("torch.cuda.synchronize()", "torch_cuda_api", "add_branch", False,
        'elif hasattr(torch, "npu") and torch.npu.is_available(): torch.npu.synchronize()',
        "guarded by torch.cuda.is_available(), so nothing fails on NPU; without an NPU branch the reported pure "
        "compute time measures asynchronous launches only (timing log)"),
  ])

E("fastreid_baseline", "fastreid/modeling/meta_arch/baseline.py", "explicit_replacement",
  "fast-reid fastreid/modeling/meta_arch/baseline.py (no change needed: device taken from the pixel_mean buffer)", [])

E("fastreid_dist_train_sh", "scripts/dist_train.sh", "explicit_replacement",
  "fast-reid style multi-GPU / multi-node shell launcher for tools/train_net.py", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "torch_npu cannot load the CANN runtime unless the toolkit environment is sourced in this non-interactive shell"),
      C('if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", "replace", True,
        'if [ -z "${ASCEND_RT_VISIBLE_DEVICES}" ]; then',
        "users restrict NPUs with ASCEND_RT_VISIBLE_DEVICES; testing the CUDA variable always takes the branch and "
        "overrides their selection"),
      C("NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "device_type", "replace", True,
        'NUM_VISIBLE=$(npu-smi info -l | grep -c "NPU ID")',
        "no nvidia-smi on an Ascend host: the count is 0 and the script exits"),
      C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))",
        "ignored on NPU, but it only selects cards 0..GPUS-1, which the spawned ranks use anyway"),
      C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
        "log verbosity only; HCCL ignores NCCL_DEBUG"),
      C("export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}", "env_var", "removal", False, None,
        "no HCCL counterpart (HCCL uses the NPU RoCE ports); ignored"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "multi-node: HCCL picks the root-info NIC from HCCL_SOCKET_IFNAME / HCCL_IF_IP; a wrongly chosen NIC breaks link setup"),
  ])

# --------------------------------------------------------------------------------------------------
# torchreid (deep-person-reid)
# --------------------------------------------------------------------------------------------------

E("torchreid_main", "scripts/main.py", "explicit_replacement",
  "deep-person-reid scripts/main.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("cfg.use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "cfg.use_gpu = torch.npu.is_available()",
        "False on an NPU host: model, losses and engine silently train on the CPU"),
      C("model = nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
        "model = model.npu()",
        "nn.DataParallel is unsupported on NPU (multi-card means DDP) and .cuda() fails; torchreid unwraps "
        ".module only when present"),
  ])

E("torchreid_legacy_xent_htri", "train_imgreid_xent_htri.py", "explicit_replacement",
  "deep-person-reid v0.x train_imgreid_xent_htri.py (--gpu-devices era script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_devices", "env_var", "replace", True,
        "if not args.use_avai_gpus: os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_devices",
        "--gpu-devices would be ignored and the run would land on NPU 0 whatever card was requested"),
      C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = torch.npu.is_available()",
        "False on NPU: silently trains on the CPU"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "queued lazily and never executed without CUDA (silent no-op); torch.manual_seed above should also seed the "
        "NPU generator (unconfirmed)"),
      C("checkpoint = torch.load(args.load_weights)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.load_weights, map_location='cpu')",
        "checkpoints this script wrote on GPU hold CUDA storages; deserialising them without map_location raises "
        "on a host without CUDA"),
      C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.resume, map_location='cpu')",
        "same: GPU-written resume checkpoint"),
      C("model = nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
        "model = model.npu()",
        "nn.DataParallel is unsupported on NPU and .cuda() fails"),
      C("imgs, pids = imgs.cuda(), pids.cuda()", "tensor_to_device", "replace", True,
        "imgs, pids = imgs.npu(), pids.npu()",
        "reached once use_gpu is true on NPU"),
      C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True,
        "imgs = imgs.npu()",
        "query feature extraction"),
      C("if use_gpu: imgs = imgs.cuda()", "tensor_to_device", "replace", True,
        "if use_gpu: imgs = imgs.npu()",
        "gallery feature extraction"),
      C("state_dict = model.module.state_dict()", "unsupported_op_workaround", "replace", True,
        "state_dict = model.state_dict()",
        "follows from dropping nn.DataParallel: the bare model has no .module and checkpointing would crash"),
  ])

E("torchreid_engine", "torchreid/engine/engine.py", "explicit_replacement",
  "deep-person-reid torchreid/engine/engine.py (base Engine)", [
      C("self.use_gpu = (torch.cuda.is_available() and use_gpu)", "torch_cuda_api", "replace", True,
        "self.use_gpu = (torch.npu.is_available() and use_gpu)",
        "False on NPU: train/eval batches stay on the CPU while the model sits on the NPU"),
      C("imgs = imgs.cuda()", "tensor_to_device", "replace", True,
        "imgs = imgs.npu()",
        "evaluation feature extraction, reached once use_gpu is true"),
  ])

E("torchreid_datamanager", "torchreid/data/datamanager.py", "explicit_replacement",
  "deep-person-reid torchreid/data/datamanager.py (Image/VideoDataManager)", [
      C("self.use_gpu = (torch.cuda.is_available() and use_gpu)", "torch_cuda_api", "replace", False,
        "self.use_gpu = (torch.npu.is_available() and use_gpu)",
        "in the data manager use_gpu only feeds pin_memory=: on NPU the loaders silently stop pinning host memory "
        "(throughput only)"),
  ])

E("torchreid_feature_extractor", "torchreid/utils/feature_extractor.py", "explicit_replacement",
  "deep-person-reid torchreid/utils/feature_extractor.py (FeatureExtractor API)", [
      C("=device='cuda',", "device_type", "replace", True,
        "device='npu',",
        "default device: torch.device('cuda') + model.to() fails on an NPU host"),
  ])

# --------------------------------------------------------------------------------------------------
# TransReID / CLIP-ReID
# --------------------------------------------------------------------------------------------------

E("transreid_train", "train.py", "explicit_replacement",
  "TransReID train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above should also seed the NPU (unconfirmed)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "same: silent no-op"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)",
        "raises without CUDA; DIST_TRAIN ranks must bind their own NPU"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
        "NCCL unavailable; HCCL is the NPU collective backend"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = cfg.MODEL.DEVICE_ID", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cfg.MODEL.DEVICE_ID",
        "single-card runs choose MODEL.DEVICE_ID through this variable; the NPU runtime ignores CUDA_VISIBLE_DEVICES "
        "and would use card 0"),
  ])

E("transreid_processor", "processor/processor.py", "explicit_replacement",
  "TransReID processor/processor.py (do_train / do_inference)", [
      C("from torch.cuda import amp", "amp", "replace", True,
        "from torch_npu.npu import amp",
        "amp.GradScaler() / amp.autocast() below go through this alias; the CUDA versions disable themselves without "
        "CUDA (fp32, no scaling). Editing the import covers every use"),
      C('=device = "cuda"', "device_type", "replace", True,
        'device = "npu"',
        "every batch is moved with .to(device)"),
      C("model.to(local_rank)", "tensor_to_device", "replace", True,
        'model.to(f"npu:{local_rank}")',
        "a bare int device is a CUDA ordinal"),
      C("if torch.cuda.device_count() > 1 and cfg.MODEL.DIST_TRAIN:", "torch_cuda_api", "replace", True,
        "if torch.npu.device_count() > 1 and cfg.MODEL.DIST_TRAIN:",
        "device_count() is 0 on NPU: distributed runs would skip the DDP wrap and train unsynchronised replicas"),
      C("print('Using {} GPUs for training'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "print('Using {} NPUs for training'.format(torch.npu.device_count()))",
        "log only (would print 0)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "raises on a torch build without CUDA, every iteration"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op when CUDA is not initialised; only the NPU cache headroom after eval is lost"),
  ])

E("transreid_center_loss", "loss/center_loss.py", "explicit_replacement",
  "TransReID / reid-strong-baseline loss/center_loss.py", [
      C("self.centers = nn.Parameter(torch.randn(self.num_classes, self.feat_dim).cuda())", "tensor_to_device", "replace", True,
        "self.centers = nn.Parameter(torch.randn(self.num_classes, self.feat_dim).npu())",
        "make_loss builds CenterLoss(use_gpu=True), so the centres are created with .cuda()"),
      C("if self.use_gpu: classes = classes.cuda()", "tensor_to_device", "replace", True,
        "if self.use_gpu: classes = classes.to(x.device)",
        "every forward with use_gpu=True"),
      C("features = torch.rand(16, 2048).cuda()", "tensor_to_device", "replace", False,
        "features = torch.rand(16, 2048).npu()",
        "__main__ self-test guarded by use_gpu = False; only runs if someone flips it"),
      C("5, 4]).cuda()", "tensor_to_device", "replace", False,
        "targets = torch.Tensor([0, 1, 2, 3, 2, 3, 1, 4, 5, 3, 2, 1, 0, 0, 5, 4]).npu()",
        "same self-test block"),
  ])

E("clipreid_stage1", "processor/processor_clipreid_stage1.py", "transfer_to_npu",
  "CLIP-ReID processor/processor_clipreid_stage1.py (prompt learning stage)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "automatic migration: torch.cuda.*, torch.cuda.amp, .cuda(), 'cuda' strings and int .to() are redirected at "
        "runtime, so the other CUDA lines of this file stay untouched (better placed in the entry script, which is "
        "not part of this probe)"),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
        "under transfer_to_npu torch.cuda.device_count() reports the NPUs, so a multi-card host now wraps the model in "
        "nn.DataParallel, which is unsupported on NPU; multi-card goes through MODEL.DIST_TRAIN/DDP"),
  ])

E("clipreid_clip", "model/clip/clip.py", "explicit_replacement",
  "CLIP-ReID model/clip/clip.py (vendored OpenAI CLIP loader)", [
      C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu", jit=False):',
        "device_type", "replace", True,
        'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit=False):',
        "the default resolves to 'cpu' on an NPU host: the model is built on the CPU and cast to fp32 without any error"),
  ])

E("clipreid_env_yml", "environment.yml", "explicit_replacement",
  "CLIP-ReID / TransReID style conda environment.yml", [
      C("=- nvidia", "device_type", "removal", False, None,
        "channel only serves CUDA packages; harmless once pytorch-cuda is gone"),
      C("=- pytorch=1.13.1", "device_type", "replace", True,
        "- pytorch=2.1.0",
        "no torch_npu release pairs with torch 1.13 (1.11, then 2.1+); torch and torch-npu must match exactly"),
      C("=- torchvision=0.14.1", "device_type", "replace", True,
        "- torchvision=0.16.0",
        "must follow the torch bump"),
      C("=- pytorch-cuda=11.7", "device_type", "replace", True,
        "- cpuonly",
        "selects the CUDA build of torch; torch_npu runs on the CPU build"),
      C("=- faiss-gpu=1.7.3", "unsupported_op_workaround", "replace", True,
        "- faiss-cpu=1.7.3",
        "faiss has no Ascend backend; faiss-gpu pulls a CUDA toolkit"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "      - torch-npu==2.1.0.post10",
        "the NPU adapter, pinned to the torch version"),
  ])

# --------------------------------------------------------------------------------------------------
# reid-strong-baseline
# --------------------------------------------------------------------------------------------------

E("rsb_trainer", "engine/trainer.py", "explicit_replacement",
  "reid-strong-baseline engine/trainer.py (pytorch-ignite trainers)", [
      C("img = img.to(device) if torch.cuda.device_count() >= 1 else img", "torch_cuda_api", "replace", True,
        "img = img.to(device)",
        "device_count() is 0 on NPU: batches stay on the CPU while the model was moved to cfg.MODEL.DEVICE"),
      C("target = target.to(device) if torch.cuda.device_count() >= 1 else target", "torch_cuda_api", "replace", True,
        "target = target.to(device)",
        "same"),
      C("imgs = imgs.to(device) if torch.cuda.device_count() >= 1 else imgs", "torch_cuda_api", "replace", True,
        "imgs = imgs.to(device)",
        "center-loss trainer, same"),
      C("pids = pids.to(device) if torch.cuda.device_count() >= 1 else pids", "torch_cuda_api", "replace", True,
        "pids = pids.to(device)",
        "center-loss trainer, same"),
      C("data = data.to(device) if torch.cuda.device_count() >= 1 else data", "torch_cuda_api", "replace", True,
        "data = data.to(device)",
        "evaluator, same"),
  ])

E("rsb_triplet_loss", "layers/triplet_loss.py", "explicit_replacement",
  "reid-strong-baseline layers/triplet_loss.py (TripletLoss, CrossEntropyLabelSmooth)", [
      C("if self.use_gpu: targets = targets.cuda()", "tensor_to_device", "replace", True,
        "if self.use_gpu: targets = targets.to(log_probs.device)",
        "make_loss builds CrossEntropyLabelSmooth with use_gpu=True; .cuda() raises on an NPU host"),
  ])

E("rsb_train_tool", "tools/train.py", "explicit_replacement",
  "reid-strong-baseline tools/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("model.load_state_dict(torch.load(cfg.MODEL.PRETRAIN_PATH))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(cfg.MODEL.PRETRAIN_PATH, map_location='cpu'))",
        "'self' resume loads GPU-written checkpoints; CUDA storages cannot be deserialised without map_location"),
      C("optimizer.load_state_dict(torch.load(path_to_optimizer))", "tensor_to_device", "replace", True,
        "optimizer.load_state_dict(torch.load(path_to_optimizer, map_location='cpu'))",
        "optimizer state (momentum buffers) was saved as CUDA tensors"),
      C('if cfg.MODEL.DEVICE == "cuda":', "device_type", "replace", True,
        'if cfg.MODEL.DEVICE == "npu":',
        "once MODEL.DEVICE is 'npu' (config/defaults.py, not in this probe) this guard skips device selection and "
        "DEVICE_ID is silently ignored"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = cfg.MODEL.DEVICE_ID", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cfg.MODEL.DEVICE_ID",
        "NPU runtime ignores CUDA_VISIBLE_DEVICES; the run would use card 0"),
  ])

# --------------------------------------------------------------------------------------------------
# AICity-style vehicle re-id repository
# --------------------------------------------------------------------------------------------------

E("vehicle_train_apex", "tools/train_vehicle.py", "explicit_replacement",
  "AICity / VeRi vehicle re-id training entry with NVIDIA apex amp + FusedSGD + torch DDP", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("from apex.optimizers import FusedSGD", "fused_optimizer", "replace", True,
        "from apex.optimizers import NpuFusedSGD",
        "Ascend apex ships NpuFused* optimizers, not the CUDA FusedSGD; the ImportError would flip APEX_AVAILABLE and "
        "silently disable AMP as well"),
      C("optimizer = FusedSGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM, nesterov=True)",
        "fused_optimizer", "replace", True,
        "optimizer = NpuFusedSGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM, nesterov=True)",
        "follows the import"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed above should cover the NPU (unconfirmed)"),
      C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.npu(non_blocking=True)",
        "every training batch"),
      C("pids = pids.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "pids = pids.npu(non_blocking=True)",
        "every training batch"),
      C("mem = torch.cuda.max_memory_allocated() / (1024.0 ** 2)", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / (1024.0 ** 2)",
        "returns 0 silently while CUDA is uninitialised; log value only"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)",
        "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://')",
        "NCCL unavailable; HCCL on NPU"),
      C("model = convert_syncbn_model(model)", "distributed_framework", "replace", False,
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "apex.parallel SyncBatchNorm relies on its CUDA extension or python fallback; unconfirmed whether the Ascend "
        "apex patch keeps it working, while torch SyncBatchNorm is listed as supported"),
      C("=model.cuda()", "tensor_to_device", "replace", True,
        "model.npu()",
        "model placement"),
      C("model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.SOLVER.OPT_LEVEL, loss_scale='dynamic')",
        "amp", "replace", False,
        "model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.SOLVER.OPT_LEVEL, loss_scale='dynamic', combine_grad=True)",
        "Ascend apex option fusing the gradient unscale; performance only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op"),
  ])

E("vehicle_gnn_rerank", "reid/rerank/gnn_reranking/gnn_reranking.py", "kernel_rewrite",
  "GNN re-ranking (Zhang et al., gnn-re-ranking) as vendored by AICity vehicle re-id solutions", [
      C("=import build_adjacency_matrix", "custom_cuda_extension", "removal", True, None,
        "nvcc-built extension cannot be built or imported on NPU; replaced by torch ops below"),
      C("=import gnn_propagate", "custom_cuda_extension", "removal", True, None,
        "same"),
      C("A = build_adjacency_matrix.forward(initial_rank.float())", "custom_cuda_extension", "replace", True,
        "A = torch.zeros(initial_rank.size(0), initial_rank.size(0), device=initial_rank.device).scatter_(1, initial_rank, 1.0)",
        "the kernel sets A[i, initial_rank[i, j]] = 1: a single scatter_"),
      C("A = gnn_propagate.forward(A, initial_rank[:, :k2].contiguous().float(), S[:, :k2].contiguous().float())",
        "custom_cuda_extension", "replace", True,
        "A = (A[initial_rank[:, :k2]] * S[:, :k2].unsqueeze(-1)).sum(dim=1)",
        "the kernel sums the k2 neighbour rows weighted by S; gather + weighted sum (N*k2*N memory, chunk large galleries)"),
  ])

E("vehicle_setup", "setup.py", "kernel_rewrite",
  "vehicle re-id setup.py building the GNN re-ranking CUDAExtensions and a Cython rank evaluator", [
      C('"faiss-gpu",', "unsupported_op_workaround", "replace", True,
        '"faiss-cpu",',
        "no Ascend faiss; faiss-gpu wheels are CUDA builds (none for aarch64)"),
      C('extensions.append(CUDAExtension("build_adjacency_matrix", [', "custom_cuda_extension", "removal", True, None,
        "CUDAExtension needs CUDA_HOME/nvcc and raises while setup.py runs on an NPU host; op rewritten in torch "
        "(label on the first line of the 4-line call)"),
      C('extensions.append(CUDAExtension("gnn_propagate", [', "custom_cuda_extension", "removal", True, None,
        "same"),
  ])

E("vehicle_test_aicity", "tools/test_aicity.py", "explicit_replacement",
  "AICity vehicle re-id test / submission script (feature extraction + GNN re-ranking)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("imgs = imgs.to('cuda', non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.to('npu', non_blocking=True)",
        "every eval batch"),
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available(),",
        "False on NPU: loaders just stop pinning (throughput only)"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        "--gpu would be ignored; runs on card 0"),
      C("checkpoint = torch.load(args.weights, map_location='cuda:0')", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.weights, map_location='cpu')",
        "map_location='cuda:0' raises without CUDA"),
      C("model = model.cuda().eval()", "tensor_to_device", "replace", True,
        "model = model.npu().eval()",
        "model placement"),
      C("X_q = qf.cuda()", "tensor_to_device", "replace", True,
        "X_q = qf.npu()",
        "re-ranking input"),
      C("X_g = gf.cuda()", "tensor_to_device", "replace", True,
        "X_g = gf.npu()",
        "re-ranking input"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("vehicle_vit", "reid/modeling/backbones/vit_pytorch.py", "explicit_replacement",
  "TransReID-style ViT backbone (SIE, overlapping patches) with an optional flash-attn path", [
      C("from flash_attn import flash_attn_qkvpacked_func", "attention_kernel", "replace", False,
        "import torch_npu",
        "flash-attn cannot be installed on NPU; the ImportError fallback (plain softmax attention) is correct, so "
        "moving to the torch_npu fused kernel is a performance change"),
      C("HAS_FLASH_ATTN = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
        "device_capability_check", "replace", False,
        "HAS_FLASH_ATTN = torch.npu.is_available()",
        "the sm80 gate has no NPU meaning (get_device_capability returns None on NPU); gate on NPU availability"),
      C("if self.use_flash and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):", "attention_kernel", "replace", False,
        'if self.use_flash and x.device.type == "npu" and x.dtype in (torch.float16, torch.bfloat16):',
        "route NPU half-precision activations to the fused kernel"),
      C("x = flash_attn_qkvpacked_func(qkv, dropout_p=self.attn_drop_p if self.training else 0.0, softmax_scale=self.scale)",
        "attention_kernel", "replace", False,
        'x = torch_npu.npu_fusion_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], self.num_heads, "BSND", '
        'scale=self.scale, keep_prob=1.0 - (self.attn_drop_p if self.training else 0.0))[0]',
        "packed (B, N, 3, H, D) slices are BSND; training-capable FA on Atlas A2"),
  ])

E("vehicle_requirements", "requirements.txt", "explicit_replacement",
  "vehicle re-id requirements.txt pinned to CUDA 11.7 wheels", [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts take the CPU torch wheel under torch_npu; cu117 resolves CUDA builds"),
      C("torch==1.13.1+cu117", "device_type", "replace", True,
        "torch==2.1.0",
        "CUDA build, and torch 1.13 has no torch_npu release"),
      C("torchvision==0.14.1+cu117", "device_type", "replace", True,
        "torchvision==0.16.0",
        "follows torch"),
      C("numpy>=1.21,<1.24", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post10",
        "the NPU adapter, pinned to torch 2.1.0 (added after the framework block)"),
      C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
        "faiss-cpu==1.7.4",
        "no Ascend faiss backend"),
  ])

E("vehicle_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "vehicle re-id docker/Dockerfile (detectron2/fast-reid style, nvidia/cuda devel base)", [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image has no CANN toolkit; image name/tag plausible, not verified"),
      C("RUN pip install --user torch==1.13.1+cu117 torchvision==0.14.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117",
        "device_type", "replace", True,
        "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels; torch_npu needs the matching CPU torch build"),
      C("RUN pip install --user faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
        "RUN pip install --user faiss-cpu==1.7.4",
        "no Ascend faiss backend"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
        "only read by CUDA extension builds, which are gone"),
      C('ARG TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "CUDA arch list, meaningless on NPU"),
      C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"', "env_var", "removal", False, None,
        "same"),
      C("RUN git clone https://github.com/NVIDIA/apex /home/appuser/apex", "amp", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex /home/appuser/apex",
        "train_vehicle.py keeps apex amp; on NPU that is Ascend's apex patch"),
      C('--global-option="--cuda_ext" ./', "amp", "replace", True,
        "RUN cd /home/appuser/apex && bash scripts/build.sh --python=3.10 && pip install --user apex/dist/apex-*.whl",
        "--cuda_ext needs nvcc; Ascend apex is built with its scripts/build.sh (wheel path plausible, not verified)"),
      C("RUN cd reid/rerank/gnn_reranking/extension && sh make.sh", "custom_cuda_extension", "removal", True, None,
        "nvcc build of the GNN re-ranking kernels fails the image build; the ops are rewritten in torch"),
      C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "removal", False, None,
        "NVIDIA container runtime knob; Ascend devices are mapped with --device /dev/davinciN or ASCEND_VISIBLE_DEVICES"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
        "same"),
  ])

E("vehicle_config_yml", "configs/aicity21/r50_ibn_gnn.yml", "explicit_replacement",
  "AICity 2021 track-2 yacs YAML config (ResNet50-IBN + GNN re-ranking)", [
      C('DEVICE: "cuda"', "device_type", "replace", True,
        'DEVICE: "npu"',
        "overrides MODEL.DEVICE, which the reid package uses to place the model for evaluation/inference"),
  ])
