"""Labels for probe220: dataset distillation / coreset & data-pruning code (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `sub` must match exactly one line
("=text" = the stripped line equals text). See README.md for the labelling policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# recurring notes
IMPORT_ENTRY = "entry script: add `import torch_npu` after the first torch import (torch 2.1-era pins have no device autoload; torch.npu.* is used below)"
DEV_AVAIL = "torch.cuda.is_available() is False on an NPU host, so every tensor/model silently ends up on the CPU"
PIN = ("pin_memory=True without pin_memory_device is dropped when CUDA is unavailable (torch 2.1 DataLoader) -> unpinned "
       "host->NPU copies; performance only, behaviour on newer torch unconfirmed")
EMPTY_CACHE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is simply not released (memory only)"
AMP_OFF = ("CUDA autocast/GradScaler disable themselves with a warning on a CUDA-less host -> the run silently falls back to "
           "fp32; numerically fine, performance/memory only")
DP = "nn.DataParallel is not supported on Ascend (torch_npu API list / msFmkTransplt); keep one NPU per process"
SET_ENV = "CANN environment must be sourced before python imports torch_npu (otherwise libhccl.so / ASCEND_OPP_PATH errors)"
VISIBLE = "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every process sees all NPUs and lands on npu:0"


# --------------------------------------------------------------------------- DatasetCondensation (DC / DSA / DM)
E("dc_utils", "utils.py", "device_branch_or_abstraction",
  "DatasetCondensation utils.py (get_dataset, get_network with DataParallel, match_loss, epoch, DiffAugment/DSA)", [
    C("gpu_num = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpu_num = torch.npu.device_count()",
      "returns 0 on an NPU host -> every network is silently built on the CPU"),
    C("=device = 'cuda'", "device_type", "replace", True,
      "device = 'npu'",
      "device string used for net.to(device) once gpu_num counts NPUs"),
    C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend: train on a single NPU",
      DP + "; reachable on multi-NPU hosts once gpu_num is ported"),
])

E("dc_main", "main.py", "explicit_replacement",
  "DatasetCondensation main.py (DC / DSA gradient matching)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = 'npu' if torch.npu.is_available() else 'cpu'", DEV_AVAIL),
])

E("dc_main_dm", "main_DM.py", "explicit_replacement",
  "DatasetCondensation main_DM.py (distribution matching)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = 'npu' if torch.npu.is_available() else 'cpu'", DEV_AVAIL),
    C("embed = net.module.embed if torch.cuda.device_count() > 1 else net.embed", "torch_cuda_api", "replace", False,
      "embed = net.embed  # get_network no longer wraps in DataParallel on NPU",
      "unchanged it evaluates 0 > 1 and picks net.embed, which is right once DataParallel is gone; edited for coherence only"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "--log_time path: torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
])

E("dc_networks", "networks.py", "explicit_replacement",
  "DatasetCondensation networks.py (ConvNet/MLP/LeNet/AlexNet/VGG/ResNet)", [])

# --------------------------------------------------------------------------- MTT (Matching Training Trajectories)
E("mtt_buffer", "buffer.py", "explicit_replacement",
  "mtt-distillation buffer.py (trains and saves expert trajectories)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = 'npu' if torch.npu.is_available() else 'cpu'", DEV_AVAIL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("mtt_distill", "distill.py", "explicit_replacement",
  "mtt-distillation distill.py (ReparamModule student, syn_lr, wandb logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = 'npu' if torch.npu.is_available() else 'cpu'", DEV_AVAIL),
    C("args.distributed = torch.cuda.device_count() > 1", "torch_cuda_api", "replace", False,
      "args.distributed = False  # nn.DataParallel is unsupported on NPU: single-device distillation",
      "unchanged it is False on NPU (count 0), which is the behaviour we want since DataParallel is unsupported; made explicit"),
    C("image_save = image_syn.cuda()", "tensor_to_device", "replace", True,
      "image_save = image_syn.npu()",
      ".cuda() raises 'Torch not compiled with CUDA enabled' at the first save/eval iteration"),
    C("student_net = torch.nn.DataParallel(student_net)", "distributed_framework", "replace", False,
      "pass  # nn.DataParallel is unsupported on Ascend",
      DP + "; unreachable while args.distributed stays False"),
    C("forward_params = student_params[-1].unsqueeze(0).expand(torch.cuda.device_count(), -1)", "torch_cuda_api", "replace", False,
      "forward_params = student_params[-1].unsqueeze(0).expand(torch.npu.device_count(), -1)",
      "DataParallel-only branch, dead on NPU; kept consistent"),
])

E("mtt_scripts", "scripts/run_cifar10.sh", "explicit_replacement",
  "mtt-distillation run scripts (buffer + distill commands with CUDA_VISIBLE_DEVICES)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}", VISIBLE),
    C("CUDA_VISIBLE_DEVICES=0,1 python distill.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python distill.py --dataset=CIFAR10 --ipc=50 --syn_steps=30 --expert_epochs=2 --max_start_epoch=40 \\",
      VISIBLE + "; the two-GPU DataParallel variant becomes a single-NPU run"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python buffer.py --dataset=Tiny", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python buffer.py --dataset=Tiny --model=ConvNetD4 --train_epochs=50 --num_experts=100 \\",
      VISIBLE),
    C("CUDA_VISIBLE_DEVICES=${GPU} python distill.py --dataset=Tiny", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python distill.py --dataset=Tiny --ipc=10 --syn_steps=20 --expert_epochs=2 --max_start_epoch=40 \\",
      VISIBLE),
])

E("mtt_env", "requirements.yaml", "explicit_replacement",
  "mtt-distillation conda environment file (pytorch + pytorch-cuda from the nvidia channel)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "channel only serves pytorch-cuda / CUDA runtime packages"),
    C("- pytorch-cuda=11.8", "torch_cuda_api", "replace", False,
      "- cpuonly",
      "selects the CUDA build of pytorch; torch_npu is documented against the CPU build of the same version (2.1.0); "
      "hard failure unconfirmed (install breaks only where no pytorch-cuda build exists for the platform)"),
    C("- cudatoolkit=11.8", "torch_cuda_api", "removal", False, None,
      "CUDA runtime is dead weight on an NPU host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post10",
      "torch_npu pin must match pytorch=2.1.0 (wheel = torch version + .postN)"),
])

# --------------------------------------------------------------------------- DeepCore (coreset selection library)
E("deepcore_main", "main.py", "explicit_replacement",
  "DeepCore main.py (--gpu ids, MyDataParallel, coreset selection then training)", [
    C("=import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_ENTRY + " (torch itself also arrives through `from utils import *`)"),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = 'npu' if torch.npu.is_available() else 'cpu'", DEV_AVAIL),
    C("train_loader = DataLoaderX(dst_subset", "pin_memory", "replace", False,
      "train_loader = DataLoaderX(dst_subset, batch_size=args.train_batch, shuffle=True, num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("test_loader = DataLoaderX(dst_test", "pin_memory", "replace", False,
      "test_loader = DataLoaderX(dst_test, batch_size=args.train_batch, shuffle=False, num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("=num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("test_loader = torch.utils.data.DataLoader(dst_test", "pin_memory", "replace", False,
      "test_loader = torch.utils.data.DataLoader(dst_test, batch_size=args.train_batch, shuffle=False, num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("torch.cuda.set_device(args.gpu[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu[0])", "torch.cuda.set_device raises on an NPU host when --gpu is given"),
    C("network = nets.nets_utils.MyDataParallel(network, device_ids=args.gpu)", "distributed_framework", "replace", True,
      "network = network.to('npu:{}'.format(args.gpu[0]))  # MyDataParallel (nn.DataParallel) unsupported on NPU",
      DP + "; the wrapper also placed the module on gpu[0], so the move has to be explicit"),
    C("elif torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "multi-GPU DataParallel branch; unchanged it is never taken on NPU (count 0)"),
    C("network = nets.nets_utils.MyDataParallel(network).cuda()", "distributed_framework", "removal", False, None,
      DP + "; body of the branch above, unreachable"),
])

E("deepcore_earlytrain", "deepcore/methods/earlytrain.py", "explicit_replacement",
  "DeepCore deepcore/methods/earlytrain.py (pre-training base class of the selection methods)", [
    C("=num_workers=self.args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=self.args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("torch.cuda.set_device(self.args.gpu[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.args.gpu[0])", "raises on an NPU host when --gpu is given"),
    C("self.model = nets.nets_utils.MyDataParallel(self.model, device_ids=self.args.gpu)", "distributed_framework", "replace", True,
      "self.model = self.model.to('npu:{}'.format(self.args.gpu[0]))  # nn.DataParallel unsupported on NPU", DP),
    C("elif torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "multi-GPU DataParallel branch; never taken on NPU"),
    C("self.model = nets.nets_utils.MyDataParallel(self.model).cuda()", "distributed_framework", "removal", False, None,
      DP + "; unreachable"),
    C("shuffle=False, num_workers=self.args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "batch_size=self.args.selection_batch, shuffle=False, num_workers=self.args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
])

E("deepcore_grand", "deepcore/methods/grand.py", "explicit_replacement",
  "DeepCore deepcore/methods/grand.py (GraNd scores over repeated short trainings)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("deepcore_kcenter", "deepcore/methods/kcentergreedy.py", "explicit_replacement",
  "DeepCore deepcore/methods/kcentergreedy.py (k-center greedy over embeddings)", [
    C('if str(device).startswith("cuda"):', "device_type", "replace", True,
      'if str(device).startswith("npu"):',
      "memory guard never fires on NPU, so the full (budget x n) distance matrix stays on the device and OOMs on ImageNet-scale runs"),
    C("free_bytes = torch.cuda.get_device_properties(device).total_memory - torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", True,
      "free_bytes = torch.npu.get_device_properties(device).total_memory - torch.npu.memory_allocated(device)",
      "torch.cuda.* rejects an npu device once the guard is ported; NPU device properties do expose total_memory"),
])

E("deepcore_utils", "utils.py", "explicit_replacement",
  "DeepCore utils.py (train/test loops, WeightedSubset, DataLoaderX)", [])

# --------------------------------------------------------------------------- SRe2L (squeeze / recover / relabel)
E("sre2l_recover", "recover/recover_imagenet.py", "explicit_replacement",
  "SRe2L recover/recover_imagenet.py (BN-statistics matching from a pretrained teacher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("targets = targets_all[kk:min(kk + batch_size, 1000)].to('cuda')", "tensor_to_device", "replace", True,
      "targets = targets_all[kk:min(kk + batch_size, 1000)].to('npu')", "'cuda' device string fails on an NPU host"),
    C("inputs = torch.randn((targets.shape[0], 3, 224, 224), requires_grad=True, device='cuda',", "device_type", "replace", True,
      "inputs = torch.randn((targets.shape[0], 3, 224, 224), requires_grad=True, device='npu',",
      "factory call with device='cuda' fails on an NPU host"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", False,
      "criterion = criterion.npu()",
      "CrossEntropyLoss has no parameters or buffers, so Module.cuda() has nothing to move and never touches CUDA; edited for consistency only"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "with --fp16 the inputs are created as float16; CUDA autocast disables itself on an NPU host, so the fp32 teacher receives half inputs -> dtype mismatch error"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("model_teacher = nn.DataParallel(model_teacher).cuda()", "tensor_to_device", "replace", True,
      "model_teacher = model_teacher.npu()  # nn.DataParallel unsupported on NPU",
      ".cuda() fails on an NPU host; " + DP),
    C("model_verifier = model_verifier.cuda()", "tensor_to_device", "replace", True,
      "model_verifier = model_verifier.npu()", ".cuda() fails on an NPU host"),
])

E("sre2l_recover_utils", "recover/utils.py", "explicit_replacement",
  "SRe2L recover/utils.py (BNFeatureHook, lr_cosine_policy, clip/denormalize, teacher loading)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "silent no-op (lazily queued) without CUDA; torch.manual_seed above should also seed the NPU generator (unconfirmed), so clarity only"),
    C('def load_teacher(arch_name, ckpt_path=None, device="cuda"):', "device_type", "replace", True,
      'def load_teacher(arch_name, ckpt_path=None, device="npu"):',
      "callers use the default; model.to('cuda') fails on an NPU host"),
    C('map_location="cuda:{}".format(gpu))', "device_type", "replace", True,
      'stats = torch.load(os.path.join(save_path, "{}.pt".format(name)), map_location="npu:{}".format(gpu))',
      "map_location='cuda:N' fails to deserialize on an NPU host"),
])

E("sre2l_relabel", "relabel/generate_soft_label.py", "explicit_replacement",
  "SRe2L relabel/generate_soft_label.py (FKD soft labels; PyTorch ImageNet-example launcher with mp.spawn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,", "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 on NPU: mp.spawn(nprocs=0) and world_size 0"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "otherwise the whole device setup is skipped and the teacher silently runs on the CPU"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "raises on an NPU host"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", ".cuda() fails on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails on an NPU host"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU run", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single-NPU run", "raises on an NPU host"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)", ".cuda() fails on an NPU host"),
    C("model.features = torch.nn.DataParallel(model.features)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel unsupported on NPU", DP),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails on an NPU host"),
    C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()  # nn.DataParallel unsupported on NPU", ".cuda() fails on an NPU host; " + DP),
    C("num_workers=args.workers, pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu',", PIN),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", ".cuda() fails on an NPU host"),
])

E("sre2l_train_utils", "train/utils.py", "explicit_replacement",
  "SRe2L train/utils.py (FKD dataset with coords, mixup/cutmix replay, apex-style CUDA-stream data_prefetcher)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "torch.cuda.Stream cannot be created on an NPU host"),
    C("self.mean = torch.tensor([0.485 * 255", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1, 3, 1, 1)", ".cuda() fails on an NPU host"),
    C("self.std = torch.tensor([0.229 * 255", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1, 3, 1, 1)", ".cuda() fails on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "CUDA stream context fails on an NPU host"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_input = self.next_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_target = self.next_target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "torch.cuda.current_stream() initialises CUDA and raises"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "input.record_stream(torch.npu.current_stream())", "torch.cuda.current_stream() raises on an NPU host"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "target.record_stream(torch.npu.current_stream())", "torch.cuda.current_stream() raises on an NPU host"),
    C("rand_index = torch.randperm(images.size()[0]).cuda()", "tensor_to_device", "replace", True,
      "rand_index = torch.randperm(images.size()[0]).npu()", ".cuda() fails on an NPU host"),
    C("rand_index = rand_index.cuda()", "tensor_to_device", "replace", True,
      "rand_index = rand_index.npu()", ".cuda() fails on an NPU host"),
])

E("sre2l_train_kd", "train/train_KD.py", "explicit_replacement",
  "SRe2L train/train_KD.py (student training on recovered data with replayed FKD soft labels, wandb)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", False,
      "from torch.npu.amp import GradScaler, autocast", AMP_OFF + "; call sites need no edit once the import is switched"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      VISIBLE + " (must be set before the first NPU call, as here)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "raises 'need gpu to train!' on every NPU host"),
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("num_workers=args.workers // 2, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers // 2, pin_memory=True, pin_memory_device='npu')", PIN),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "model = model.to(memory_format=torch.contiguous_format)",
      "msFmkTransplt README: channels_last is not supported on NPU, use contiguous; actual failure mode unconfirmed (opt-in flag)"),
    C("model = nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()  # nn.DataParallel unsupported on NPU", ".cuda() fails on an NPU host; " + DP),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", ".cuda() fails on an NPU host"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", ".cuda() fails on an NPU host"),
    C("soft_label = soft_label.cuda().float()", "tensor_to_device", "replace", True,
      "soft_label = soft_label.npu().float()  # convert to float32", ".cuda() fails on an NPU host"),
    C("images = images.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "images = images.contiguous()", "channels_last unsupported on NPU per msFmkTransplt README; failure mode unconfirmed"),
    C('"train/mem_GB": torch.cuda.max_memory_allocated() / 1024 ** 3, }', "torch_cuda_api", "replace", False,
      '"train/mem_GB": torch.npu.max_memory_allocated() / 1024 ** 3, }',
      "returns 0 without an initialised CUDA context: wrong number in the wandb log, nothing breaks"),
    C("data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data, target = data.npu(non_blocking=True), target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
])

E("sre2l_scripts", "scripts/run_imagenet_ipc50.sh", "explicit_replacement",
  "SRe2L shell pipeline (recover per GPU, relabel with mp.spawn/NCCL, train)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      SET_ENV + "; set_env.sh is known to fail under `set -u`, hence the +u/-u bracket"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only knob (and already the default); ignored by HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_capability_check", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; under `set -e` the pipeline aborts here"),
    C("CUDA_VISIBLE_DEVICES=$i python recover_imagenet.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$i python recover_imagenet.py \\",
      VISIBLE + " -> the 4 background recover jobs all pile onto npu:0"),
    C("--dist-url 'tcp://127.0.0.1:10001' --dist-backend 'nccl' \\", "dist_backend", "replace", True,
      "--dist-url 'tcp://127.0.0.1:10001' --dist-backend 'hccl' \\", "explicit NCCL backend overrides the script default; NCCL is unavailable on Ascend"),
])

E("sre2l_reqs", "requirements.txt", "explicit_replacement",
  "SRe2L requirements.txt (CUDA wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu is documented against the CPU build on x86 (aarch64 uses plain PyPI); hard failure unconfirmed"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10", "torch_npu pin matching torch 2.1.0"),
])

# --------------------------------------------------------------------------- RDED
E("rded_argument", "argument.py", "device_branch_or_abstraction",
  "RDED argument.py (module-level argparse, GPU selection through CUDA_VISIBLE_DEVICES, args.device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "argument.py is the first module main.py imports and it calls torch.npu.* at import time"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_device)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_device)', VISIBLE),
    C('args.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = "npu" if torch.npu.is_available() else "cpu"', DEV_AVAIL),
    C("args.world_size = max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", False,
      "args.world_size = max(torch.npu.device_count(), 1)", "silently 1 on NPU; informational only in this code base"),
    C("if args.amp and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if args.amp and not torch.npu.is_bf16_supported():",
      "with --amp, torch.cuda.is_bf16_supported() queries the current CUDA device and raises (newer torch: returns False and silently disables amp)"),
])

E("rded_synthesize", "synthesize/main.py", "explicit_replacement",
  "RDED synthesize/main.py (observer-scored patch selection and stitching)", [
    C("_MEAN = torch.tensor(mean).cuda().reshape(1, 3, 1, 1)", "tensor_to_device", "replace", True,
      "_MEAN = torch.tensor(mean).npu().reshape(1, 3, 1, 1)", ".cuda() fails on an NPU host"),
    C("_STD = torch.tensor(std).cuda().reshape(1, 3, 1, 1)", "tensor_to_device", "replace", True,
      "_STD = torch.tensor(std).npu().reshape(1, 3, 1, 1)", ".cuda() fails on an NPU host"),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", ".cuda() fails on an NPU host"),
    C("labels = labels.repeat(m).cuda()", "tensor_to_device", "replace", True, "labels = labels.repeat(m).npu()", ".cuda() fails on an NPU host"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.bfloat16, enabled=amp):', AMP_OFF),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
    C("save_images(args, denormalize(images.cuda()), c)", "tensor_to_device", "replace", True,
      "save_images(args, denormalize(images.npu()), c)", ".cuda() fails on an NPU host"),
    C("model_teacher = nn.DataParallel(model_teacher).cuda()", "tensor_to_device", "replace", True,
      "model_teacher = model_teacher.npu()  # nn.DataParallel unsupported on NPU", ".cuda() fails on an NPU host; " + DP),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("rded_validation", "validation/main.py", "explicit_replacement",
  "RDED validation/main.py (student training with on-the-fly teacher soft labels)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed above should also seed the NPU (unconfirmed)"),
    C('print("=> running on {} x {}".format(torch.cuda.device_count(), torch.cuda.get_device_name(0)))', "torch_cuda_api", "replace", True,
      'print("=> running on {} x {}".format(torch.npu.device_count(), torch.npu.get_device_name(0)))',
      "torch.cuda.get_device_name initialises CUDA and raises on an NPU host"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
    C("num_workers=args.workers, pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu',", PIN),
    C("teacher_model = torch.nn.DataParallel(teacher_model).cuda()", "tensor_to_device", "replace", True,
      "teacher_model = teacher_model.npu()  # nn.DataParallel unsupported on NPU", ".cuda() fails on an NPU host; " + DP),
    C("student_model = torch.nn.DataParallel(student_model).cuda()", "tensor_to_device", "replace", True,
      "student_model = student_model.npu()  # nn.DataParallel unsupported on NPU", ".cuda() fails on an NPU host; " + DP),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises on an NPU host"),
    C("epoch, top1, best_acc1, torch.cuda.max_memory_allocated() / 2 ** 30))", "torch_cuda_api", "replace", False,
      "epoch, top1, best_acc1, torch.npu.max_memory_allocated() / 2 ** 30))",
      "returns 0 without an initialised CUDA context: wrong log value only"),
    C("images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images, labels = images.npu(non_blocking=True), labels.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=args.amp):', AMP_OFF),
    C('data, target = data.to("cuda"), target.to("cuda")', "tensor_to_device", "replace", True,
      'data, target = data.to("npu"), target.to("npu")', "'cuda' device string fails on an NPU host"),
])

# --------------------------------------------------------------------------- GLaD (vendored StyleGAN ops)
E("glad_bias_act", "torch_utils/ops/bias_act.py", "device_branch_or_abstraction",
  "GLaD / StyleGAN-XL vendored torch_utils/ops/bias_act.py (JIT-compiled CUDA plugin with reference fallback)", [])

# --------------------------------------------------------------------------- KRR distillation (RFAD / FRePo-style PyTorch port)
E("krr_distill", "krr/krr_distill.py", "explicit_replacement",
  "RFAD/FRePo-style kernel-ridge-regression distillation in PyTorch (torch.func model-pool ensembling, fp64 solve)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', DEV_AVAIL),
    C('torch.backends.cuda.preferred_linalg_library("cusolver")', "torch_cuda_api", "removal", False, None,
      "CUDA-only solver switch (msFmkTransplt lists it unsupported); meaningless on NPU, failure on a CUDA-less build unconfirmed"),
    C("alpha = torch.linalg.solve(k_ss.double() + lam.double()", "unsupported_op_workaround", "replace", False,
      "alpha = torch.linalg.solve((k_ss + lam * eye).double().cpu(), y_s.double().expand(k_ss.shape[0], -1, -1).cpu()).to(k_ss.device)",
      "no native NPU kernel for linalg_solve (falls back to CPU per op) and fp64 is weak on NPU; solving on the host explicitly is a perf choice"),
    C("alpha = torch.linalg.solve(k_ss + lam * eye, y_s.expand", "unsupported_op_workaround", "replace", False,
      "alpha = torch.linalg.solve((k_ss + lam * eye).cpu(), y_s.expand(k_ss.shape[0], -1, -1).cpu()).to(k_ss.device)",
      "linalg_solve has no NPU kernel in the op lists -> implicit CPU fallback; perf only"),
    C("f_s = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_syn)", "unsupported_op_workaround", "replace", False,
      "f_s = torch.stack([functional_call(base, ({k: v[i] for k, v in params.items()}, {k: v[i] for k, v in buffers.items()}), (x_syn,)) for i in range(len(members))])",
      "torch.func.vmap is marked unsupported in Ascend's 2.7.1 list and by msFmkTransplt, yet torch.vmap (same function) is marked supported: unconfirmed"),
    C("f_t = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_t)", "unsupported_op_workaround", "replace", False,
      "f_t = torch.stack([functional_call(base, ({k: v[i] for k, v in params.items()}, {k: v[i] for k, v in buffers.items()}), (x_t,)) for i in range(len(members))])",
      "same as above (torch.func.vmap support on NPU unconfirmed)"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created on an NPU host"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created on an NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
])

# --------------------------------------------------------------------------- data-pruning toolkit (EL2N / forgetting / SemDeDup)
E("prune_dist_utils", "utils/dist_utils.py", "device_branch_or_abstraction",
  "DeiT/MAE-style util/misc.py distributed helpers as vendored by data-pruning repos", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: modulo by 0 -> ZeroDivisionError on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "raises on an NPU host"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", ".cuda() fails on an NPU host"),
    C('if dist.get_backend() == "nccl" and not t.is_cuda:', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl" and not t.is_npu:',
      "backend-string comparison is never true under HCCL, so CPU tensors reach the HCCL all_gather and fail (transfer_to_npu does not rewrite such comparisons)"),
    C("t = t.cuda()", "tensor_to_device", "replace", True, "t = t.npu()", ".cuda() fails on an NPU host"),
    C("sizes = [torch.zeros(1, dtype=torch.long, device=t.device)", "unsupported_op_workaround", "replace", True,
      "sizes = [torch.zeros(1, dtype=torch.int32, device=t.device) for _ in range(get_world_size())]",
      "HCCL all_gather supports bf16/fp16/fp32/int8/int32/bool only (Ascend 2.7.1 API list): int64 size buffers must become int32"),
    C("dist.all_gather(sizes, torch.tensor([t.shape[0]], dtype=torch.long, device=t.device))", "unsupported_op_workaround", "replace", True,
      "dist.all_gather(sizes, torch.tensor([t.shape[0]], dtype=torch.int32, device=t.device))",
      "int64 all_gather unsupported on HCCL (see above)"),
])

E("prune_scores", "compute_scores.py", "explicit_replacement",
  "EL2N / forgetting-score computation for data pruning (torchrun, YAML config, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg.amp.enabled):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=cfg.amp.enabled):', AMP_OFF),
    C("pin_memory=cfg.dataloader.pin_memory, drop_last=True", "pin_memory", "replace", False,
      "num_workers=cfg.dataloader.num_workers, pin_memory=cfg.dataloader.pin_memory, pin_memory_device='npu', drop_last=True,", PIN),
    C("=num_workers=cfg.dataloader.num_workers, pin_memory=cfg.dataloader.pin_memory)", "pin_memory", "replace", False,
      "num_workers=cfg.dataloader.num_workers, pin_memory=cfg.dataloader.pin_memory, pin_memory_device='npu')", PIN),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp.enabled)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.amp.enabled)", AMP_OFF),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "torch.cuda.* rejects an npu device / needs CUDA -> raises"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)", "raises on an NPU host"),
    C("epoch, time.time() - t0, torch.cuda.max_memory_allocated(device) / 2 ** 30))", "torch_cuda_api", "replace", False,
      "epoch, time.time() - t0, torch.npu.max_memory_allocated(device) / 2 ** 30))",
      "returns 0 when CUDA was never initialised: wrong log value only"),
    C("idx_all = all_gather_cat(idx)", "unsupported_op_workaround", "replace", True,
      "idx_all = all_gather_cat(idx.int()).long()",
      "dataset indices are int64; HCCL all_gather supports int32 but not int64 (Ascend 2.7.1 API list)"),
])

E("prune_semdedup", "semdedup_clustering.py", "explicit_replacement",
  "SemDeDup-style semantic de-duplication with faiss k-means (torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("x = torch.from_numpy(cluster_embs).cuda(device)", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(cluster_embs).to(device)", ".cuda() fails on an NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "raises on an NPU host"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "every tensor below is placed on this device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("prune_config", "configs/el2n_cifar10.yaml", "explicit_replacement",
  "YAML experiment config of the pruning toolkit (device, dist backend, faiss GPU switch)", [
    C("device: cuda", "device_type", "replace", True,
      "device: npu             # torch.device type; the local rank is appended by the script",
      "compute_scores.py builds torch.device(cfg.device, rank) from this value"),
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "semdedup_clustering.py passes it to init_process_group; NCCL is unavailable on Ascend"),
    C("use_gpu: true", "unsupported_op_workaround", "replace", True, "use_gpu: false",
      "faiss GPU k-means / GpuIndexFlatIP need CUDA (faiss-gpu); no Ascend backend -> CPU faiss"),
])

E("prune_scripts", "scripts/run_el2n.sh", "explicit_replacement",
  "torchrun launcher of the pruning toolkit with NCCL_* environment", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}", VISIBLE),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL log level is ignored by HCCL; CANN logging is controlled separately (debug only)"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads HCCL_SOCKET_IFNAME; single-node --standalone run works with the default NIC choice"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog uses HCCL_ASYNC_ERROR_HANDLING (default 1 per MindCluster docs)"),
    C('echo "GPUs visible: ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", False,
      'echo "NPUs visible: ${ASCEND_RT_VISIBLE_DEVICES} (nproc_per_node=${NGPUS})"', "log line only"),
    C("nvidia-smi -L || true", "device_capability_check", "replace", False, "npu-smi info || true",
      "guarded by `|| true`, so only the device listing is lost"),
    C("CUDA_VISIBLE_DEVICES=0 python train_pruned.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python train_pruned.py \\", VISIBLE),
])

E("prune_docker", "Dockerfile", "explicit_replacement",
  "Dockerfile of the combined distillation/pruning environment (nvidia/cuda base, cu118 wheels, faiss-gpu)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit / driver user space, so torch_npu cannot load"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
      "read by nvidia-container-runtime only; NPUs are mounted by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES at docker run)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None, "nvidia-container-runtime only"),
    C('TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only affects nvcc extension builds; none are built for NPU"),
    C("RUN pip install --no-cache-dir torch==2.1.0+cu118", "torch_cuda_api", "replace", False,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA build of torch; torch_npu is documented against the CPU build; hard failure unconfirmed"),
    C("RUN pip install --no-cache-dir faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", False,
      "RUN pip install --no-cache-dir faiss-cpu==1.7.4",
      "CUDA-only faiss build, unused once semdedup.use_gpu is false; install failure on aarch64 hosts unconfirmed"),
    C("RUN pip install --no-cache-dir -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post10", "torch_npu wheel matching torch 2.1.0"),
])
