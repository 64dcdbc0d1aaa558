"""Labels for probe134: classic 2018-2022 research repos (PPO, MAPPO, SiamMask, BiSeNet, BERT-NER,
ESPnet v1, fairseq) in their CUDA form.  One C(...) per upstream line a careful porter would edit
for Ascend NPU (torch_npu).  See README.md for the policy."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SEED_NOTE = ("torch.cuda.manual_seed* is queued lazily and is a silent no-op on a host without CUDA; "
             "torch.manual_seed above already seeds the NPU generator (unconfirmed in knowledge), so perf/clarity only")
CUDNN_DET_NOTE = ("cudnn flags are accepted on NPU but do not make NPU kernels deterministic; "
                  "use torch.use_deterministic_algorithms (unconfirmed in knowledge)")
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is never released"
SET_ENV_NOTE = ("CANN environment must be sourced before torch_npu can load libascendcl/libhccl; often already done "
                "by the container image or login profile, so not strictly required in this script")

# --------------------------------------------------------------------------------------------
# PPO (nikhilbarhate99/PPO-PyTorch style, continuous + discrete)
# --------------------------------------------------------------------------------------------
E("ppo_pytorch_ppo", "PPO.py", "device_branch_or_abstraction",
  "nikhilbarhate99/PPO-PyTorch PPO.py (module-level device selection, ActorCritic, RolloutBuffer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "device is chosen at import time of this module (train.py only does `from PPO import PPO`), so torch_npu must be loaded here"),
    C("if(torch.cuda.is_available()):", "torch_cuda_api", "replace", True, "if(torch.npu.is_available()):",
      "False on an NPU host: the whole PPO silently trains on CPU"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "cuda device string"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('print("Device set to : " + str(torch.cuda.get_device_name(device)))', "torch_cuda_api", "replace", True,
      'print("Device set to : " + str(torch.npu.get_device_name(device)))',
      "torch.cuda.get_device_name with an npu device (or without CUDA) raises"),
])

# --------------------------------------------------------------------------------------------
# ikostrikov/pytorch-a2c-ppo-acktr-gail
# --------------------------------------------------------------------------------------------
E("a2c_ppo_main", "main.py", "device_branch_or_abstraction",
  "ikostrikov/pytorch-a2c-ppo-acktr-gail main.py (PPO/A2C/ACKTR trainer for gym)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("if args.cuda and torch.cuda.is_available() and args.cuda_deterministic:", "torch_cuda_api", "replace", False,
      "if args.cuda and torch.npu.is_available() and args.cuda_deterministic:",
      "guard is False on NPU, so --cuda-deterministic silently does nothing; only the determinism flags depend on it"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET_NOTE),
    C('device = torch.device("cuda:0" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if args.cuda else "cpu")', "cuda device string; would fail once args.cuda is True"),
])

E("a2c_ppo_arguments", "a2c_ppo_acktr/arguments.py", "device_branch_or_abstraction",
  "ikostrikov/pytorch-a2c-ppo-acktr-gail a2c_ppo_acktr/arguments.py (--no-cuda, --cuda-deterministic)", [
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "args.cuda is False on an NPU host, so main.py silently trains on CPU"),
])

# --------------------------------------------------------------------------------------------
# MAPPO (marlbenchmark/on-policy)
# --------------------------------------------------------------------------------------------
E("mappo_config", "onpolicy/config.py", "device_branch_or_abstraction",
  "marlbenchmark/on-policy onpolicy/config.py (get_config with --cuda / --cuda_deterministic flags)", [
    # deliberately no labels: only argparse flags and help strings mention CUDA/GPU
])

E("mappo_train_mpe", "onpolicy/scripts/train/train_mpe.py", "device_branch_or_abstraction",
  "marlbenchmark/on-policy onpolicy/scripts/train/train_mpe.py (MAPPO/RMAPPO on multi-agent particle envs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if all_args.cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if all_args.cuda and torch.npu.is_available():", "False on NPU: silently falls into the cpu branch"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "cuda device string"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET_NOTE),
    C("torch.cuda.manual_seed_all(all_args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(all_args.seed)", SEED_NOTE),
])

E("mappo_environment", "environment.yaml", "explicit_replacement",
  "marlbenchmark/on-policy environment.yaml (conda export with a CUDA 10.1 torch wheel)", [
    C("cudatoolkit=10.1.243=h6bb024c_0", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime is useless on an Ascend host (harmless on x86, unresolvable on aarch64 hosts)"),
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel on x86"),
    C("torch==1.5.1+cu101", "import_torch_npu", "replace", True, "- torch==2.1.0",
      "CUDA build of a torch that has no torch_npu release; must match the torch_npu version (2.1.0 <-> torch-npu 2.1.0.postN)"),
    C("tqdm==4.48.2", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post8",
      "torch-npu pin added to the pip section (goes right after the torch line's neighbour)"),
])

# --------------------------------------------------------------------------------------------
# SiamMask (foolwood/SiamMask)
# --------------------------------------------------------------------------------------------
E("siammask_train", "tools/train_siammask.py", "explicit_replacement",
  "foolwood/SiamMask tools/train_siammask.py (DataParallel training, Variable(...).cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("train_loader = DataLoader(train_set,", "pin_memory", "replace", False,
      "train_loader = DataLoader(train_set, batch_size=args.batch, num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=None)",
      "without pin_memory_device the loader may pin for CUDA only or silently skip pinning on older torch (unconfirmed); perf only"),
    C("val_loader = DataLoader(val_set,", "pin_memory", "replace", False,
      "val_loader = DataLoader(val_set, batch_size=args.batch, num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=None)",
      "same as train_loader; perf only, unconfirmed"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() has no CUDA device"),
    C("dist_model = torch.nn.DataParallel(model, list(range(torch.cuda.device_count()))).cuda()",
      "distributed_framework", "replace", True, "dist_model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[local_rank])",
      "torch.nn.DataParallel is unsupported on NPU (Ascend API list); switch to DDP (one process per NPU) or a single device"),
    C("dist_model = torch.nn.DataParallel(model, device_ids=list(range(torch.cuda.device_count()))).cuda()",
      "distributed_framework", "replace", True, "dist_model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[local_rank])",
      "same DataParallel wrapper on the --resume path"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "inside train(): .cuda() on the wrapped model"),
    C("'template': torch.autograd.Variable(input[0]).cuda(),", "tensor_to_device", "replace", True,
      "'template': input[0].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'search': torch.autograd.Variable(input[1]).cuda(),", "tensor_to_device", "replace", True,
      "'search': input[1].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'label_cls': torch.autograd.Variable(input[2]).cuda(),", "tensor_to_device", "replace", True,
      "'label_cls': input[2].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'label_loc': torch.autograd.Variable(input[3]).cuda(),", "tensor_to_device", "replace", True,
      "'label_loc': input[3].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'label_loc_weight': torch.autograd.Variable(input[4]).cuda(),", "tensor_to_device", "replace", True,
      "'label_loc_weight': input[4].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'label_mask': torch.autograd.Variable(input[6]).cuda(),", "tensor_to_device", "replace", True,
      "'label_mask': input[6].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
    C("'label_mask_weight': torch.autograd.Variable(input[7]).cuda(),", "tensor_to_device", "replace", True,
      "'label_mask_weight': input[7].npu(non_blocking=True),", "batch tensor moved with .cuda()"),
])

E("siammask_test", "tools/test.py", "device_branch_or_abstraction",
  "foolwood/SiamMask tools/test.py (VOT tracking loop, siamese_init / siamese_track with a device argument)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("device = torch.device('cuda' if (torch.cuda.is_available() and not args.cpu) else 'cpu')", "device_type",
      "replace", True, "device = torch.device('npu' if (torch.npu.is_available() and not args.cpu) else 'cpu')",
      "silently tracks on CPU on an NPU host; everything downstream uses .to(device)"),
])

E("siammask_load_helper", "utils/load_helper.py", "device_branch_or_abstraction",
  "foolwood/SiamMask utils/load_helper.py (load_pretrain / restore_from with map_location to the current GPU)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "on NPU this takes the CPU map_location branch, which still works (model is moved later); edited for an explicit port"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", False,
      "cur_device = torch.npu.current_device()", "only reached once the guard above is ported"),
    C("storage.cuda(cur_device))", "tensor_to_device", "replace", False,
      "pretrained_dict = torch.load(pretrained_path, map_location=lambda storage, loc: storage.npu(cur_device))",
      "only reached once the guard above is ported"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", "replace", True, "device = torch.npu.current_device()",
      "restore_from (--resume) calls it unguarded; raises without CUDA"),
    C("storage.cuda(device))", "tensor_to_device", "replace", True,
      "ckpt = torch.load(ckpt_path, map_location = lambda storage, loc: storage.npu(device))",
      "map_location maps every storage to a CUDA device"),
])

E("siammask_anchors", "utils/anchors.py", "explicit_replacement",
  "foolwood/SiamMask utils/anchors.py (numpy anchor generator)", [
    # deliberately no labels: pure numpy, the docstring only mentions the GPU
])

E("siammask_model", "models/siammask.py", "explicit_replacement",
  "foolwood/SiamMask models/siammask.py (SiamMask base module and losses)", [
    C("self.all_anchors = torch.from_numpy(all_anchors).float().cuda()", "tensor_to_device", "replace", True,
      "self.all_anchors = torch.from_numpy(all_anchors).float().npu()", "hard-coded .cuda()"),
    C("pos = Variable(label.data.eq(1).nonzero().squeeze()).cuda()", "tensor_to_device", "replace", True,
      "pos = label.data.eq(1).nonzero().squeeze().to(label.device)",
      "index tensor forced onto CUDA inside the loss (on NPU: .cuda() raises)"),
    C("neg = Variable(label.data.eq(0).nonzero().squeeze()).cuda()", "tensor_to_device", "replace", True,
      "neg = label.data.eq(0).nonzero().squeeze().to(label.device)", "same as pos"),
])

E("siammask_run_sh", "experiments/siammask_base/run.sh", "explicit_replacement",
  "foolwood/SiamMask experiments/siammask_base/run.sh (train then test every snapshot, one GPU per job)", [
    C("export PYTHONPATH=$ROOT:$PYTHONPATH", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/tools/train_siammask.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/tools/train_siammask.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the device subset is silently lost"),
    C("CUDA_VISIBLE_DEVICES=$((i % gpu)) python -u $ROOT/tools/test.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$((i % gpu)) python -u $ROOT/tools/test.py \\",
      "ignored on Ascend: all concurrent test jobs would land on npu:0"),
])

# --------------------------------------------------------------------------------------------
# BiSeNet (CoinCheung/BiSeNet)
# --------------------------------------------------------------------------------------------
E("bisenet_train_amp", "tools/train_amp.py", "explicit_replacement",
  "CoinCheung/BiSeNet tools/train_amp.py (DDP + torch.cuda.amp, OHEM loss)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script (torchrun)"),
    C("import torch.cuda.amp as amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "torch.cuda.amp.GradScaler disables itself without CUDA and autocast('cuda') does not cast NPU ops; "
      "the GradScaler/autocast call sites below need no edit once the alias points at the NPU amp"),
    C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model moved with .cuda()"),
    C("im = im.cuda()", "tensor_to_device", "replace", True, "im = im.npu()", "batch moved with .cuda()"),
    C("lb = lb.cuda()", "tensor_to_device", "replace", True, "lb = lb.npu()", "batch moved with .cuda()"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("mem = torch.cuda.max_memory_allocated() / 1024. / 1024.", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024. / 1024.", "returns 0 without CUDA: wrong log value only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA; every rank must bind its own NPU"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("bisenet_ohem_loss", "lib/ohem_ce_loss.py", "explicit_replacement",
  "CoinCheung/BiSeNet lib/ohem_ce_loss.py (pure-torch OHEM and the ohem_cpp CUDA-kernel variant)", [
    C("self.thresh = -torch.log(torch.tensor(thresh, requires_grad=False, dtype=torch.float)).cuda()",
      "tensor_to_device", "replace", True,
      "self.thresh = -torch.log(torch.tensor(thresh, requires_grad=False, dtype=torch.float)).npu()",
      "threshold constant created on CUDA in __init__"),
    C("labels = ohem_cpp.score_ohem_label(scores,", "custom_cuda_extension", "replace", True,
      "labels = ohem_label_torch(scores, labels, self.lb_ignore, self.score_thresh, n_min).detach()",
      "call site of the nvcc-built ohem_cpp kernel (selected by cfg.ohem_cpp); no NPU build, rewrite in torch ops or Ascend C"),
    C("net1.cuda()", "tensor_to_device", "replace", False, "net1.npu()", "__main__ smoke test only"),
    C("net2.cuda()", "tensor_to_device", "replace", False, "net2.npu()", "__main__ smoke test only"),
    C("inten = torch.randn(16, 3, 20, 20).cuda()", "tensor_to_device", "replace", False,
      "inten = torch.randn(16, 3, 20, 20).npu()", "__main__ smoke test only"),
    C("lbs = torch.randint(0, 19, [16, 20, 20]).cuda()", "tensor_to_device", "replace", False,
      "lbs = torch.randint(0, 19, [16, 20, 20]).npu()", "__main__ smoke test only"),
])

E("bisenet_ohem_setup", "lib/ohem_cpp/setup.py", "kernel_rewrite",
  "CoinCheung/BiSeNet ohem_cpp extension setup.py (CUDAExtension with a .cu kernel)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on an Ascend host; torch_npu's NpuExtension links torch_npu/ACL"),
    C("CUDAExtension('ohem_cpp', [", "custom_cuda_extension", "replace", True, "NpuExtension('ohem_cpp', [",
      "CUDAExtension cannot build without CUDA"),
    C("os.path.join(csrc, 'ohem_label_kernel.cu'),", "custom_cuda_extension", "replace", True,
      "os.path.join(csrc, 'ohem_label_kernel_ascendc.cpp'),", "the .cu kernel must be rewritten (Ascend C) or dropped"),
    C("'nvcc': ['-O2', '--use_fast_math',", "custom_cuda_extension", "removal", False, None,
      "nvcc flags / sm_70 gencode are meaningless for an NPU build (ignored once no .cu source remains)"),
])

E("bisenet_evaluate", "tools/evaluate.py", "explicit_replacement",
  "CoinCheung/BiSeNet tools/evaluate.py (multi-scale / crop evaluation with a confusion matrix)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script (also imported by train_amp)"),
    C("self.confusion = torch.zeros((n_classes, n_classes)).cuda().detach()", "tensor_to_device", "replace", True,
      "self.confusion = torch.zeros((n_classes, n_classes)).npu().detach()", "confusion matrix created on CUDA"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "batch moved with .cuda()"),
    C("label = label.squeeze(1).cuda()", "tensor_to_device", "replace", True, "label = label.squeeze(1).npu()",
      "batch moved with .cuda()"),
    C("dtype=torch.float32).cuda().detach()", "tensor_to_device", "replace", True,
      "dtype=torch.float32, device=imgs.device).detach()", "probability buffer created on CUDA"),
    C("outten = torch.zeros(N, C, padH, padW).cuda()", "tensor_to_device", "replace", True,
      "outten = torch.zeros(N, C, padH, padW, device=inten.device)", "padding buffer created on CUDA"),
    C("prob = torch.zeros(N, n_classes, H, W).cuda()", "tensor_to_device", "replace", True,
      "prob = torch.zeros(N, n_classes, H, W, device=im.device)", "crop accumulator created on CUDA"),
    C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "imgs = imgs.npu(non_blocking=True)",
      "batch moved with .cuda()"),
    C("label = label.squeeze(1).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = label.squeeze(1).npu(non_blocking=True)", "batch moved with .cuda()"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model moved with .cuda()"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL unavailable on Ascend"),
    C("world_size=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "world_size=torch.npu.device_count(),", "0 on an NPU host: init_process_group gets an invalid world size"),
])

E("bisenet_dist_train_sh", "dist_train.sh", "explicit_replacement",
  "CoinCheung/BiSeNet dist_train.sh (torchrun launcher with commented per-dataset blocks)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("=export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend; harmless here because it names all 8 devices and torchrun binds local ranks 0-7"),
])

# --------------------------------------------------------------------------------------------
# BERT-NER (lonePatient/BERT-NER-Pytorch)
# --------------------------------------------------------------------------------------------
E("bertner_run_ner_crf", "run_ner_crf.py", "device_branch_or_abstraction",
  "lonePatient/BERT-NER-Pytorch run_ner_crf.py (BERT+CRF fine-tuning, args.n_gpu, apex fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      "works with Ascend's patched apex (O1/O2); combine_grad is an NPU perf option, or switch to torch.npu.amp"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", False,
      "pass  # DataParallel is unsupported on NPU; use --local_rank (DDP)",
      "DataParallel is unsupported on NPU, but only reached when n_gpu > 1, which stays 0 unless n_gpu is ported too"),
    C("=if 'cuda' in str(args.device):", "device_type", "replace", False, "if 'npu' in str(args.device):",
      "string test on the device type; False on NPU so the cache is simply not emptied"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("if 'cuda' in str(args.device) and args.local_rank in [-1, 0]:", "device_type", "replace", False,
      "if 'npu' in str(args.device) and args.local_rank in [-1, 0]:", "same string test in evaluate()"),
    C("torch.cuda.empty_cache()  # release the cached eval", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the cached eval activations before training resumes", EMPTY_CACHE_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "single-process path silently runs on CPU"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.n_gpu = torch.npu.device_count()",
      "0 on NPU is harmless (batch size uses max(1, n_gpu)); porting it makes the DataParallel branch reachable"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "distributed path; raises without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "cuda device string"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL unavailable on Ascend"),
])

E("bertner_common", "tools/common.py", "device_branch_or_abstraction",
  "lonePatient/BERT-NER-Pytorch tools/common.py (seed_everything, prepare_device, model_device)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET_NOTE),
    C('device_type = f"cuda:{n_gpu_use[0]}"', "device_type", "replace", True, 'device_type = f"npu:{n_gpu_use[0]}"',
      "cuda device string"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "0 on an NPU host, so prepare_device silently falls back to CPU"),
    C("model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
      "model = model  # DataParallel unsupported on NPU: run one process per NPU (DDP) instead",
      "reached as soon as several device ids are given and counted on the NPU host"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(device_ids[0])", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(device_ids[0])",
      "set after the device is chosen, so it has no effect on CUDA either; ignored on Ascend"),
])

# --------------------------------------------------------------------------------------------
# ESPnet v1 (pytorch backend)
# --------------------------------------------------------------------------------------------
E("espnet_asr", "espnet/asr/pytorch_backend/asr.py", "device_branch_or_abstraction",
  "espnet/espnet v0.9 espnet/asr/pytorch_backend/asr.py (chainer-style trainer, CustomUpdater/Converter, apex)", [
    C("=data_parallel(self.model, x, range(self.ngpu))", "distributed_framework", "replace", True,
      "self.model(*x)",
      "torch.nn.parallel.data_parallel is unsupported on NPU; without CUDA it silently runs one device with the "
      "ngpu-times-larger batch"),
    C("data_parallel(self.model, x, range(self.ngpu)).mean() / self.accum_grad", "distributed_framework", "replace", True,
      "self.model(*x).mean() / self.accum_grad", "same in the updater (multi-device needs DDP on NPU)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only decides whether to log 'cuda is not available'"),
    C('device = torch.device("cuda" if args.ngpu > 0 else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if args.ngpu > 0 else "cpu")', "cuda device string"),
    C("model, optimizer.optimizer = amp.initialize(", "amp", "replace", False,
      "model, optimizer.optimizer = amp.initialize(  # Ascend apex: add combine_grad=True",
      "Ascend's apex patch keeps O0-O3; perf option only (or move to torch.npu.amp)"),
    C("=model, optimizer = amp.initialize(", "amp", "replace", False,
      "model, optimizer = amp.initialize(  # Ascend apex: add combine_grad=True", "same for non-noam optimizers"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "decoding with --ngpu 1"),
    C("=rnnlm.cuda()", "tensor_to_device", "replace", True, "rnnlm.npu()", "decoding with --ngpu 1 and an RNNLM"),
])

E("espnet_asr_train", "espnet/bin/asr_train.py", "device_branch_or_abstraction",
  "espnet/espnet v0.9 espnet/bin/asr_train.py (ngpu detection from CUDA_VISIBLE_DEVICES / nvidia-smi)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('default="warpctc",', "custom_cuda_extension", "replace", True, 'default="builtin",',
      "default CTC is the warp-ctc extension, which has no NPU build; torch.nn.CTCLoss runs on NPU"),
    C('cvd = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
      'cvd = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")', "device-count detection reads the CUDA variable"),
    C('["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.PIPE', "torch_cuda_api", "replace", True,
      "ngpu = torch.npu.device_count()  # replaces the nvidia-smi -L probe",
      "nvidia-smi is absent: FileNotFoundError -> ngpu=0 -> training silently on CPU"),
])

E("espnet_ctc", "espnet/nets/pytorch_backend/ctc.py", "explicit_replacement",
  "espnet/espnet v0.6-0.8 espnet/nets/pytorch_backend/ctc.py (builtin vs warpctc CTC)", [
    C("import warpctc_pytorch as warp_ctc", "custom_cuda_extension", "replace", True,
      'raise ValueError("warpctc has no NPU build; use --ctc_type builtin")',
      "reached with --ctc_type warpctc (the upstream default): the extension cannot be built/imported on NPU"),
])

E("espnet_tools_makefile", "tools/Makefile", "explicit_replacement",
  "espnet/espnet v0.6 tools/Makefile (conda venv, pytorch + cudatoolkit, warp-ctc build)", [
    C("PYTHON_VERSION := 3.7.3", "import_torch_npu", "replace", True, "PYTHON_VERSION := 3.9",
      "torch 2.1 + torch_npu need Python >= 3.8"),
    C("TH_VERSION := 1.4.0", "import_torch_npu", "replace", True, "TH_VERSION := 2.1.0",
      "no torch_npu exists for torch 1.4; version must match the torch-npu wheel"),
    C("CONDA_PYTORCH := pytorch-cpu=$(TH_VERSION)", "import_torch_npu", "replace", True,
      "CONDA_PYTORCH := pytorch=$(TH_VERSION) cpuonly",
      "branch taken on an NPU host (no nvidia-smi); the pytorch-cpu metapackage does not exist for 2.x"),
    C("python: venv warp-ctc.done warp-transducer.done chainer_ctc.done $(CUDA_DEPS)", "custom_cuda_extension",
      "replace", False, "python: venv chainer_ctc.done $(CUDA_DEPS)",
      "warp-ctc / warp-transducer bindings are only useful with their CUDA kernels and are unlikely to build "
      "against torch 2.x (unconfirmed); builtin CTC is used on NPU"),
    C(". venv/bin/activate; pip install torch==$(TH_VERSION)", "import_torch_npu", "replace", True,
      ". venv/bin/activate; pip install torch==$(TH_VERSION) torch-npu==2.1.0.post8 --extra-index-url https://download.pytorch.org/whl/cpu",
      "virtualenv branch installs no torch_npu"),
    C(". venv/bin/activate && conda install -y $(CONDA_PYTORCH) -c pytorch", "import_torch_npu", "npu_only_addition",
      True, ". venv/bin/activate && pip install torch-npu==2.1.0.post8", "conda branch installs no torch_npu"),
])

# --------------------------------------------------------------------------------------------
# fairseq
# --------------------------------------------------------------------------------------------
E("fairseq_cli_train", "fairseq_cli/train.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq_cli/train.py (main / train / validate / cli_main with --profile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script (fairseq-train)"),
    C("with torch.cuda.profiler.profile():", "torch_cuda_api", "replace", True,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]):",
      "--profile path: torch.cuda.profiler wraps cudaProfilerStart and fails without CUDA"),
    C("with torch.autograd.profiler.emit_nvtx():", "torch_cuda_api", "removal", True, None,
      "emit_nvtx is unsupported on NPU (Ascend API list); use torch_npu.npu.mstx ranges if needed"),
])

E("fairseq_trainer", "fairseq/trainer.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/trainer.py (Trainer: device choice, CudaEnvironment, OOM handling, gb_free)", [
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "torch_cuda_api", "replace",
      True, "self.cuda = torch.npu.is_available() and not cfg.common.cpu and not self.tpu",
      "False on NPU: the Trainer silently trains on CPU"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
      "cuda device string"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", "replace",
      True, "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "legacy CUDA tensor type, and fp64 is not supported on NPU"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "removal", True,
      None, "get_device_capability has no CUDA on the host, and on NPU returns None by default (None[0] raises)"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "removal", True,
      None, "same check on the fp32 path"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # free what the failed batch left behind", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free what the failed batch left behind", EMPTY_CACHE_NOTE + " (OOM recovery is weaker)"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0, device=self.device)", "hit on every fp16 overflow (OverflowError path)"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024", "returns 0 without CUDA: gb_free metric wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on an NPU host (runs every update)"),
    C("torch.cuda.empty_cache()  # fragmentation workaround", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # fragmentation workaround, see --empty-cache-freq", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # retry the validation batch", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # retry the validation batch with a clean cache", EMPTY_CACHE_NOTE),
    C("total_norm = total_norm.cuda().float() ** 2", "tensor_to_device", "replace", True,
      "total_norm = total_norm.to(self.device).float() ** 2", "--ddp-backend=fully_sharded path"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", "replace", False,
      'if torch.npu.is_available() and hasattr(torch.npu, "memory_summary"):', "OOM diagnostics only"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for device_idx in range(torch.npu.device_count()):", "OOM diagnostics only"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", "replace", False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", "OOM diagnostics only"),
])

E("fairseq_utils", "fairseq/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/utils.py (move_to_cuda, clip_grad_norm_, RNG state, CudaEnvironment)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = device or torch.npu.current_device()", "Trainer calls move_to_cuda(sample) without a device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "without amp_C, per-parameter norms are computed on the CPU device on NPU: correct but slow"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", "replace", False, "device = torch.npu.current_device()",
      "only reached once the guard above is ported"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("=cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "npu_rng_state = torch.npu.get_rng_state()", "torch.cuda.get_rng_state initialises CUDA and raises"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(npu_rng_state)", "lazy no-op on NPU: the device RNG would not be restored"),
    C("if torch.cuda.is_available():  # device RNG", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # device RNG, needed to replay dropout in checkpointed layers",
      "False on NPU: activation-checkpoint recompute replays different dropout masks (silently wrong grads)"),
    C('state["cuda_rng_state"] = torch.cuda.get_rng_state()', "torch_cuda_api", "replace", True,
      'state["npu_rng_state"] = torch.npu.get_rng_state()', "see guard above"),
    C('if torch.cuda.is_available() and "cuda_rng_state" in state:', "torch_cuda_api", "replace", True,
      'if torch.npu.is_available() and "npu_rng_state" in state:', "restore side of the same RNG bookkeeping"),
    C('torch.cuda.set_rng_state(state["cuda_rng_state"])', "torch_cuda_api", "replace", True,
      'torch.npu.set_rng_state(state["npu_rng_state"])', "restore side of the same RNG bookkeeping"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "CudaEnvironment is built by the Trainer once it runs on a device"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", "replace", True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', "cuda device string + CUDA API"),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      'self.major = getattr(prop, "major", None) or 0',
      "NPU device properties carry only name/total_memory/L2/core counts; pretty_print formats major with {:2d}"),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      'self.minor = getattr(prop, "minor", None) or 0', "same as major"),
])

E("fairseq_fp16_optimizer", "fairseq/optim/fp16_optimizer.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/optim/fp16_optimizer.py (DynamicLossScaler, flat fp32 master params, clipping)", [
    C("devices = [torch.cuda.current_device()]", "torch_cuda_api", "replace", True,
      "devices = [torch.npu.current_device()]", "--fp16 builds flat fp32 master params keyed by the current CUDA device"),
])

E("fairseq_amp_optimizer", "fairseq/optim/amp_optimizer.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/optim/amp_optimizer.py (AMPOptimizer around torch.cuda.amp.GradScaler)", [
    C("self._grad_scaler = torch.cuda.amp.GradScaler(**amp_kwargs)", "amp", "replace", True,
      "self._grad_scaler = torch.npu.amp.GradScaler(**amp_kwargs)",
      "disables itself (warning) without CUDA: --amp runs with no loss scaling once autocast targets the NPU"),
])

E("fairseq_distributed_utils", "fairseq/distributed/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/distributed/utils.py (init inference, spawn, all_gather_list, broadcast_object)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(), cfg.distributed_world_size", "distributed_num_procs becomes 0 on an NPU host"),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()", "SLURM path: rank/world size computed from 0 devices"),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.distributed_world_size <= torch.npu.device_count()", "single-node assertion fails on an NPU host"),
    C('), f"world size is {cfg.distributed_world_size} but have {torch.cuda.device_count()} available devices"',
      "torch_cuda_api", "replace", False,
      '), f"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "assertion message only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "warm-up all-reduce is skipped on NPU; communicator is then created lazily on the first collective"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", False,
      "dist.all_reduce(torch.zeros(1).npu())", "warm-up only"),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not cfg.common.cpu and not cfg.common.tpu:",
      "without set_device every spawned rank uses npu:0"),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.distributed_training.device_id)", "bind each rank to its NPU"),
    C("=torch.cuda.device_count(),", "torch_cuda_api", "replace", True, "torch.npu.device_count(),",
      "mp.spawn nprocs=min(0, world_size): nothing is launched"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.uint8, device=torch.npu.current_device())",
      "legacy CUDA tensor type; used for every stats sync in multi-device training"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device="npu")',
      "pin_memory() without a device may target CUDA on older torch (unconfirmed); staging buffer only"),
    C("cpu_data[k] = torch.tensor(t, dtype=torch.double)", "unsupported_op_workaround", "replace", False,
      "cpu_data[k] = torch.tensor(t, dtype=torch.float32)",
      "the buffer is reduced on the NPU and fp64 is cast down to fp32 there with a warning (knowledge: fp64 caveat)"),
    C("cpu_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", "replace", False,
      "cpu_data[k] = t.to(dtype=torch.float32)", "same fp64 caveat"),
    C("device_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", "replace", False,
      "device_data[k] = t.to(dtype=torch.float32)", "same fp64 caveat"),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", "replace", True,
      'if torch.distributed.get_backend(group) in ("nccl", "hccl"):',
      "backend string comparison (not rewritten even by transfer_to_npu): with hccl the object is broadcast from CPU tensors"),
    C('=dist_device = torch.device("cuda")', "device_type", "replace", True, 'dist_device = torch.device("npu")',
      "cuda device string"),
    C('if dist.get_backend(group) == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend(group) in ("nccl", "hccl"):', "same comparison in broadcast_tensors"),
    C('dist_device = torch.device("cuda")  # NCCL only moves device tensors', "device_type", "replace", True,
      'dist_device = torch.device("npu")  # HCCL only moves device tensors', "cuda device string"),
])

E("fairseq_configs", "fairseq/dataclass/configs.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/dataclass/configs.py (CommonConfig / DistributedTrainingConfig defaults)", [
    C("distributed_world_size: int = field(default=max(1, torch.cuda.device_count()), metadata={", "torch_cuda_api",
      "replace", True, "distributed_world_size: int = field(default=max(1, torch.npu.device_count()), metadata={",
      "defaults to 1 on an NPU host: multi-NPU training silently runs on one device"),
    C("=default=max(1, torch.cuda.device_count()),", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),", "distributed_num_procs default, same problem"),
    C('default="nccl", metadata={"help": "distributed backend"}', "dist_backend", "replace", True,
      'default="hccl", metadata={"help": "distributed backend"}', "NCCL unavailable on Ascend"),
    C("nprocs_per_node: int = field(default=max(1, torch.cuda.device_count()), metadata={", "torch_cuda_api",
      "replace", False, "nprocs_per_node: int = field(default=max(1, torch.npu.device_count()), metadata={",
      "only used by the SlowMo/gossip topology"),
])

E("fairseq_ngram_repeat_block", "fairseq/ngram_repeat_block.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/ngram_repeat_block.py (optional CUDA extension with a python fallback)", [
    # deliberately no labels: the CUDA probe is guarded by EXTENSION_BUILT and torch.cuda.is_available(),
    # so on an NPU host the pure-python _no_repeat_ngram path is taken unchanged
])

E("fairseq_train_sh", "examples/translation/train_wmt16_en_de_big.sh", "explicit_replacement",
  "fairseq examples/translation 'Scaling NMT' recipe (8-GPU transformer big, fp16, legacy_ddp)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "ignored on Ascend; harmless because it names all 8 devices"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL; matters only for multi-node root-info negotiation (single node here)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL log level has no HCCL effect; CANN logging is controlled separately"),
    C("--distributed-world-size $NUM_GPUS --distributed-backend nccl \\", "dist_backend", "replace", True,
      "--distributed-world-size $NUM_GPUS --distributed-backend hccl \\", "explicit nccl backend flag"),
    C("CUDA_VISIBLE_DEVICES=0 fairseq-generate $DATA_BIN \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 fairseq-generate $DATA_BIN \\",
      "ignored on Ascend; generation uses device 0 anyway"),
])
