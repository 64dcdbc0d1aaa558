# Labels for probe262 (learning-with-noisy-labels research code, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry script: register the NPU backend before any device use; autoload only exists from "
               "torch_npu 2.5.1 and this code base's pins predate it")
CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
CANN_NOTE = "launcher must load the CANN environment (library paths) or torch_npu cannot load"
SEED_NOTE = ("torch.cuda.manual_seed* is a silent no-op without CUDA; torch.manual_seed on a nearby line already "
             "seeds the default generator, so only NPU-side reproducibility is at stake")
AMP_NOTE = ("torch.cuda.amp on a host without CUDA warns and disables itself: training silently falls back to fp32; "
            "performance only")
PIN_NOTE = ("pinning is skipped (or uses the CUDA path) when CUDA is absent; give the NPU as pin device - "
            "performance only, behaviour unconfirmed in knowledge")

# ---------------------------------------------------------------- DivideMix
E("dm_train_cifar", "Train_cifar.py", "explicit_replacement",
  "DivideMix Train_cifar.py (co-divide with GMM on per-sample losses, MixMatch)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.set_device(args.gpuid)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpuid)", "torch.cuda.set_device raises without CUDA"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
      C("inputs_x, inputs_x2, labels_x, w_x = inputs_x.cuda()", "tensor_to_device", "replace", True,
        "inputs_x, inputs_x2, labels_x, w_x = inputs_x.npu(), inputs_x2.npu(), labels_x.npu(), w_x.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs_u, inputs_u2 = inputs_u.cuda(), inputs_u2.cuda()", "tensor_to_device", "replace", True,
        "inputs_u, inputs_u2 = inputs_u.npu(), inputs_u2.npu()", ".cuda() fails on an NPU host"),
      C("prior = prior.cuda()", "tensor_to_device", "replace", True, "prior = prior.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs, labels = inputs.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
        "inputs, labels = inputs.npu(), labels.npu()", ".cuda() fails on an NPU host"),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()",
        ".cuda() fails on an NPU host"),
      C("=targets = targets.cuda()", "tensor_to_device", "replace", True, "targets = targets.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
        "inputs, targets = inputs.npu(), targets.npu()", ".cuda() fails on an NPU host"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() fails on an NPU host"),
      C("ckpt = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location='npu')",
        "the resumed checkpoints come from the GPU runs (see comment); deserialising CUDA tensors raises "
        "without CUDA"),
  ])

E("dm_dataloader_cifar", "dataloader_cifar.py", "explicit_replacement",
  "DivideMix dataloader_cifar.py (noise injection, labeled/unlabeled split)", [])

E("dm_train_clothing", "Train_clothing1M.py", "explicit_replacement",
  "DivideMix Train_clothing1M.py (ResNet-50, per-epoch eval_train + GMM)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.set_device(args.gpuid)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpuid)", "torch.cuda.set_device raises without CUDA"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
      C("inputs_x, inputs_x2, labels_x, w_x = inputs_x.cuda()", "tensor_to_device", "replace", True,
        "inputs_x, inputs_x2, labels_x, w_x = inputs_x.npu(), inputs_x2.npu(), labels_x.npu(), w_x.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs_u, inputs_u2 = inputs_u.cuda(), inputs_u2.cuda()", "tensor_to_device", "replace", True,
        "inputs_u, inputs_u2 = inputs_u.npu(), inputs_u2.npu()", ".cuda() fails on an NPU host"),
      C("prior = prior.cuda()", "tensor_to_device", "replace", True, "prior = prior.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs, labels = inputs.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
        "inputs, labels = inputs.npu(), labels.npu()", ".cuda() fails on an NPU host"),
      C("inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "inputs, targets = inputs.npu(non_blocking=True), targets.npu(non_blocking=True)",
        ".cuda() fails on an NPU host"),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()",
        ".cuda() fails on an NPU host"),
      C("=targets = targets.cuda()", "tensor_to_device", "replace", True, "targets = targets.npu()",
        ".cuda() fails on an NPU host"),
      C("inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
        "inputs, targets = inputs.npu(), targets.npu()", ".cuda() fails on an NPU host"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() fails on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; only releases cached NPU memory between epochs"),
  ])

E("dm_dataloader_clothing", "dataloader_clothing1M.py", "explicit_replacement",
  "DivideMix dataloader_clothing1M.py (class-balanced sampling of the noisy set)", [
      C("self.loader_kwargs = dict(num_workers=self.num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "self.loader_kwargs = dict(num_workers=self.num_workers, pin_memory=True, pin_memory_device='npu')",
        PIN_NOTE),
  ])

E("dm_webvision_parallel", "Train_webvision_parallel.py", "explicit_replacement",
  "DivideMix Train_webvision_parallel.py (two nets trained concurrently on two GPUs via torch.multiprocessing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '%s,%s' % (args.gpuid1, args.gpuid2)", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '%s,%s' % (args.gpuid1, args.gpuid2)",
        "ignored by the Ascend runtime: npu:0/npu:1 would be the first two NPUs, not --gpuid1/--gpuid2"),
      C("cuda1 = torch.device('cuda:0')", "device_type", "replace", True, "cuda1 = torch.device('npu:0')",
        "cuda device string; every .to(cuda1) fails"),
      C("cuda2 = torch.device('cuda:1')", "device_type", "replace", True, "cuda2 = torch.device('npu:1')",
        "cuda device string; every .to(cuda2) fails"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "silent no-op without CUDA (and this script never calls torch.manual_seed): NPU RNG unseeded, "
        "reproducibility only"),
  ])

E("dm_run_sh", "run_cifar.sh", "explicit_replacement",
  "DivideMix-style sweep launcher: one background run per GPU", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, CANN_ENV, CANN_NOTE),
      C("CUDA_VISIBLE_DEVICES=${gpu} nohup python Train_cifar.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python Train_cifar.py \\",
        "ignored on Ascend: every run would pile onto NPU 0 (--gpuid 0)"),
      C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", "replace", False,
        "npu-smi info",
        "nvidia-smi absent on an NPU host; with set -e only the final status line/exit code is affected"),
  ])

E("dm_env_yml", "environment.yml", "explicit_replacement",
  "conda environment of a DivideMix fork (pytorch + nvidia channels, cudatoolkit)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "NVIDIA conda channel is useless on an Ascend host"),
      C("- pytorch=1.11.0=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0=*cpu*",
        "CUDA build of torch; torch_npu needs the matching CPU build (and 1.11 is EOL for torch_npu)"),
      C("- torchvision=0.12.0=py38_cu113", "import_torch_npu", "replace", True, "- torchvision=0.16.0=*cpu*",
        "cu113 build pulls the CUDA torch stack; must follow the CPU torch pin"),
      C("- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
        "CUDA runtime is dead weight on an NPU host (whether it even resolves on aarch64 is unconfirmed)"),
      C("- tensorboard", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
        "the torch_npu wheel matching the torch pin must be installed"),
      C("- pynvml==11.4.1", "unsupported_op_workaround", "removal", False, None,
        "NVML has no NPU counterpart; only the nvidia-smi/NVML helpers use it"),
  ])

# ---------------------------------------------------------------- Co-teaching / Co-teaching+
E("ct_main", "main.py", "explicit_replacement",
  "Co-teaching main.py (two CNNs exchanging small-loss samples, Variable(...).cuda())", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)",
        "ignored on Ascend: --gpu would silently select nothing and the job runs on NPU 0"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        SEED_NOTE),
      C("images = Variable(images).cuda()", "tensor_to_device", "replace", True, "images = Variable(images).npu()",
        ".cuda() fails on an NPU host"),
      C("labels = Variable(labels).cuda()", "tensor_to_device", "replace", True, "labels = Variable(labels).npu()",
        ".cuda() fails on an NPU host"),
      C("images = Variable(images, volatile=True).cuda()", "tensor_to_device", "replace", True,
        "images = Variable(images, volatile=True).npu()", ".cuda() fails on an NPU host"),
      C("=images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()",
        ".cuda() fails on an NPU host"),
      C("=cnn1.cuda()", "tensor_to_device", "replace", True, "cnn1.npu()", "Module.cuda() fails on an NPU host"),
      C("=cnn2.cuda()", "tensor_to_device", "replace", True, "cnn2.npu()", "Module.cuda() fails on an NPU host"),
  ])

E("ct_loss", "loss.py", "explicit_replacement",
  "Co-teaching / Co-teaching+ loss.py (small-loss exchange, disagreement update step)", [
      C("return x.cuda() if ref.is_cuda else x", "tensor_to_device", "replace", False,
        "return x.npu() if ref.is_npu else x",
        "is_cuda is False for NPU tensors, so the CPU index is used as-is; indexing an NPU tensor with a CPU "
        "index most likely still works (extra copy) - unconfirmed"),
      C("ind_1_update = torch.from_numpy(ind_1_sorted[:num_remember]).long().cuda()", "tensor_to_device", "replace",
        True, "ind_1_update = torch.from_numpy(ind_1_sorted[:num_remember]).long().npu()",
        ".cuda() fails on an NPU host"),
      C("ind_2_update = torch.from_numpy(ind_2_sorted[:num_remember]).long().cuda()", "tensor_to_device", "replace",
        True, "ind_2_update = torch.from_numpy(ind_2_sorted[:num_remember]).long().npu()",
        ".cuda() fails on an NPU host"),
      C("update_step = Variable(torch.from_numpy(_update_step)).cuda()", "tensor_to_device", "replace", True,
        "update_step = Variable(torch.from_numpy(_update_step)).npu()", ".cuda() fails on an NPU host"),
  ])

E("ct_gpu_select", "utils/gpu_select.py", "explicit_replacement",
  "lab helper picking the emptiest GPU via nvidia-smi / NVML (shipped with Co-teaching forks)", [
      C("out = subprocess.check_output(['nvidia-smi'", "torch_cuda_api", "replace", True,
        "out = subprocess.check_output(['npu-smi', 'info', '-t', 'usages', '-i', '0'])",
        "nvidia-smi missing -> OSError caught -> [] -> select_device silently returns CPU; npu-smi output "
        "needs its own parsing"),
      C("os.system('nvidia-smi -q -d Memory |grep -A4 GPU|grep Free >tmp')", "torch_cuda_api", "replace", True,
        "os.system('npu-smi info -t usages -i 0 | grep \"HBM Usage\" >tmp')",
        "empty output -> np.argmax([]) raises ValueError"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gpu)",
        "ignored on Ascend: the chosen card is not the one used"),
      C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "False on an NPU host -> silently returns the CPU device"),
      C("return torch.device('cuda:0')", "device_type", "replace", True, "return torch.device('npu:0')",
        "cuda device string"),
      C("pynvml.nvmlInit()", "unsupported_op_workaround", "replace", True, "return torch.npu.utilization(index)",
        "NVML library absent on an NPU host -> NVMLError; torch.npu.utilization is the NPU counterpart "
        "(the two NVML lines after it become dead)"),
      C("if not torch.cuda.is_available() or not verbose:", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available() or not verbose:", "logging only: memory report silently skipped"),
      C("alloc = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 1024 ** 2", "logging only (reports 0 without CUDA)"),
      C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2", "logging only (reports 0 without CUDA)"),
  ])

# ---------------------------------------------------------------- JoCoR
E("jocor_main", "main.py", "device_branch_or_abstraction",
  "JoCoR main.py (device chosen from --gpu and passed to the algorithm object)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(args.gpu))", "cuda device string; model.to(device) fails"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        SEED_NOTE),
  ])

E("jocor_algo", "algorithm/jocor.py", "device_branch_or_abstraction",
  "JoCoR algorithm/jocor.py (joint training with co-regularisation; device passed in)", [])

# ---------------------------------------------------------------- ELR (pytorch-template based)
E("elr_train", "ELR/train.py", "device_branch_or_abstraction",
  "ELR train.py (pytorch-template entry point, config-driven)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(config['seed'])", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(config['seed'])", SEED_NOTE),
  ])

E("elr_parse_config", "ELR/parse_config.py", "device_branch_or_abstraction",
  "ELR parse_config.py (ConfigParser singleton; -d sets visible GPUs)", [
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.device", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = args.device",
        "ignored on Ascend: -d silently has no effect"),
  ])

E("elr_base_trainer", "ELR/base/base_trainer.py", "device_branch_or_abstraction",
  "ELR base/base_trainer.py (_prepare_device from n_gpu, DataParallel, checkpointing)", [
      C("self.model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
        "self.model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[self.device.index])",
        "nn.DataParallel is unsupported on Ascend (n_gpu > 1 path); use DDP (needs a launcher) or one NPU"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "returns 0 on an NPU host -> warning and silent CPU training"),
      C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')", "cuda device string"),
      C("checkpoint = torch.load(resume_path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(resume_path, map_location='cpu')",
        "only fails when resuming a checkpoint written on a GPU machine; NPU-written ones load fine"),
  ])

E("elr_trainer", "ELR/trainer/trainer.py", "device_branch_or_abstraction",
  "ELR trainer/trainer.py (epoch loops; everything follows self.device)", [])

E("elr_loss", "ELR/model/loss.py", "device_branch_or_abstraction",
  "ELR model/loss.py (elr_loss with USE_CUDA flag, plus GCE / SCE / NCE+RCE baselines)", [
      C("self.USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.USE_CUDA = torch.npu.is_available()",
        "False on an NPU host -> target buffer stays on CPU and the in-place update with NPU predictions "
        "raises a device mismatch"),
      C("self.target = torch.zeros(num_examp, self.num_classes).cuda() if self.USE_CUDA", "tensor_to_device",
        "replace", True,
        "self.target = torch.zeros(num_examp, self.num_classes).npu() if self.USE_CUDA else torch.zeros(num_examp, self.num_classes)",
        ".cuda() fails once the flag above is true"),
      C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "picks CPU on an NPU host -> one-hot labels on CPU vs NPU predictions: device mismatch"),
  ])

E("elr_test", "ELR/test.py", "device_branch_or_abstraction",
  "ELR test.py (evaluate released checkpoints)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("checkpoint = torch.load(config.resume)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(config.resume, map_location='cpu')",
        "released checkpoints were trained on a V100 (docstring); CUDA tensors cannot be deserialised "
        "without CUDA"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "state_dict = {k.replace('module.', '', 1): v for k, v in state_dict.items()}",
        "DataParallel is unsupported on Ascend; strip the 'module.' prefix instead of wrapping"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "silently evaluates on CPU on an NPU host"),
  ])

E("elrplus_trainer", "ELR_plus/trainer/trainer.py", "device_branch_or_abstraction",
  "ELR+ trainer/trainer.py (two nets + EMA copies, mixup, one GPU per network)", [
      C("self.device1 = torch.device('cuda:0')", "device_type", "replace", True,
        "self.device1 = torch.device('npu:0')", "cuda device string"),
      C("self.device2 = torch.device('cuda:1') if torch.cuda.device_count() > 1 else self.device1", "device_type",
        "replace", True,
        "self.device2 = torch.device('npu:1') if torch.npu.device_count() > 1 else self.device1",
        "cuda device string / CUDA device count (0 on NPU host)"),
      C("torch.cuda.synchronize(self.device1)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device1)", "torch.cuda.synchronize raises without CUDA"),
      C("torch.cuda.synchronize(self.device2)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device2)", "torch.cuda.synchronize raises without CUDA"),
  ])

E("sop_loss", "SOP/model/loss.py", "explicit_replacement",
  "SOP (sparse over-parameterisation) model/loss.py", [
      C("noisy_labels = torch.Tensor(noisy_labels).long().cuda()", "tensor_to_device", "replace", True,
        "noisy_labels = torch.Tensor(noisy_labels).long().npu()", ".cuda() fails on an NPU host"),
      C("pseudo_label = F.one_hot(prot_pred, temp_un_conf.shape[1]).float().cuda().detach()", "tensor_to_device",
        "replace", True, "pseudo_label = F.one_hot(prot_pred, temp_un_conf.shape[1]).float().npu().detach()",
        ".cuda() fails on an NPU host"),
      C("self.USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "self.USE_CUDA = torch.npu.is_available()",
        "flag is never read in this file; edited for consistency only"),
      C("return (torch.zeros(len(x), self.num_classes)).cuda().scatter_(", "tensor_to_device", "replace", True,
        "return (torch.zeros(len(x), self.num_classes)).npu().scatter_(1, (x.argmax(dim=1)).view(-1, 1), 1)",
        ".cuda() fails on an NPU host"),
  ])

# ---------------------------------------------------------------- GJS
E("gjs_train", "gjs/train.py", "device_branch_or_abstraction",
  "GJS-loss training script (DataParallel or DDP via torch.distributed.launch, torch.cuda.amp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=cfg['amp']):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=cfg['amp']):", AMP_NOTE),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize raises without CUDA (distributed path)"),
      C("device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', args.local_rank)", "cuda device type"),
      C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("model = nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on NPU: launch with torchrun (DDP) for more than one NPU",
        "nn.DataParallel is unsupported on Ascend (n_gpu > 1 without a launcher)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=cfg['amp'])", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=cfg['amp'])", AMP_NOTE),
      C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 2 ** 20))", "logging only (reports 0 without CUDA)"),
  ])

E("gjs_util", "gjs/utils/util.py", "device_branch_or_abstraction",
  "pytorch-template utils/util.py with prepare_device and a device banner for the log", [
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "returns 0 on an NPU host -> silent CPU training"),
      C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')", "cuda device string"),
      C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "log banner only: prints 'cpu only'"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for i in range(torch.npu.device_count()):", "log banner only"),
      C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(i)", "raises without CUDA once the banner loop runs"),
      C("cc = '%d.%d' % (props.major, props.minor)", "device_capability_check", "replace", True, "cc = 'n/a'",
        "NPU device properties carry no major/minor compute capability (other fields come back empty)"),
  ])

E("gjs_config", "gjs/configs/webvision/gjs.json", "device_branch_or_abstraction",
  "GJS JSON config for WebVision (n_gpu, amp, dist backend)", [
      C("\"backend\": \"nccl\",", "dist_backend", "replace", True, "\"backend\": \"hccl\",",
        "train.py passes this straight to init_process_group; NCCL does not exist on Ascend"),
  ])

E("gjs_sh", "gjs/scripts/webvision_dist.sh", "explicit_replacement",
  "GJS multi-GPU launcher (torch.distributed.launch, NCCL env)", [
      C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", True, CANN_ENV, CANN_NOTE),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* is ignored by HCCL; logging verbosity only"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "no HCCL equivalent needed; silently ignored"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "single node here, HCCL's default NIC choice normally works; ignored otherwise"),
      C("CUDA_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch \\",
        "GPUS=0,1 subsets would be ignored; ranks map onto NPUs 0..n-1 regardless"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval_imagenet.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python eval_imagenet.py \\",
        "device selection ignored on Ascend"),
  ])

# ---------------------------------------------------------------- cleanlab pipelines
E("cl_crossval", "cleanlab_cifar/cross_val_pred_probs.py", "device_branch_or_abstraction",
  "cleanlab confident-learning recipe: K-fold out-of-sample pred_probs on CIFAR-10 with AMP", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("p.add_argument('--device', default='cuda'", "device_type", "replace", True,
        "p.add_argument('--device', default='npu', help=\"'npu', 'npu:1' or 'cpu'\")",
        "default device string is cuda"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_NOTE),
      C("num_workers=args.workers, pin_memory=True, drop_last=True", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True, persistent_workers=True)",
        PIN_NOTE),
      C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
      C("device = torch.device(args.device if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace",
        True, "device = torch.device(args.device if torch.npu.is_available() else 'cpu')",
        "False on an NPU host -> silently trains on CPU"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "only guards cudnn.benchmark and a log line"),
      C("print('training on', torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
        "print('training on', torch.npu.get_device_name(device))",
        "raises without CUDA once the guard above selects the NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory hygiene between folds only"),
  ])

E("cl_skorch", "cleanlab_cifar/skorch_cleanlearning.py", "device_branch_or_abstraction",
  "cleanlab CleanLearning around a skorch NeuralNetClassifier", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("device='cuda' if use_gpu else 'cpu',", "device_type", "replace", True,
        "device='npu' if use_gpu else 'cpu',", "skorch moves module and batches to this device string"),
      C("use_gpu = args.gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = args.gpu and torch.npu.is_available()", "False on an NPU host -> silently CPU"),
  ])

E("cl_req", "cleanlab_cifar/requirements.txt", "explicit_replacement",
  "requirements.txt of the cleanlab experiments (CUDA wheel index, faiss-gpu, NVML)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on the CPU build of torch; cu118 wheels do not exist for aarch64 hosts"),
      C("torch==2.0.1+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
        "CUDA local version; pin a torch version that has a supported torch_npu release"),
      C("torchvision==0.15.2+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "follows the torch pin"),
      C("=tqdm", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "add the torch_npu wheel matching torch 2.1.0"),
      C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.4",
        "faiss-gpu needs CUDA and has no aarch64 wheel; the kNN code already falls back to the CPU index"),
      C("nvidia-ml-py3==7.352.0", "unsupported_op_workaround", "removal", False, None,
        "NVML has no NPU counterpart; unused on Ascend"),
  ])

E("cl_docker", "cleanlab_cifar/Dockerfile", "explicit_replacement",
  "Dockerfile on nvidia/cuda base for the cleanlab experiments", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "base image must carry CANN instead of the CUDA runtime (image tag not confirmed in knowledge)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all \\",
        "read by the NVIDIA container runtime only; on Ascend the devices come from the Ascend Docker Runtime"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime setting, meaningless on Ascend"),
      C("CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored on Ascend; single-process CMD uses device 0 anyway"),
  ])

E("cl_text", "cleanlab_text/find_issues_text.py", "device_branch_or_abstraction",
  "cleanlab Datalab on transformer text embeddings (+ zero-shot pipeline check)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("model_name, torch_dtype=torch.float16 if device.startswith('cuda') else torch.float32)", "device_type",
        "replace", False,
        "model_name, torch_dtype=torch.float16 if device.startswith('npu') else torch.float32)",
        "unchanged it loads fp32 on the NPU: slower, still correct"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently embeds on CPU on an NPU host"),
      C("if device == 'cuda':", "device_type", "replace", False, "if device == 'npu':",
        "guards empty_cache only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("device_index = 0 if torch.cuda.is_available() else -1", "torch_cuda_api", "replace", True,
        "device_index = 0 if torch.npu.is_available() else -1",
        "False on an NPU host -> zero-shot pipeline silently runs on CPU"),
  ])

# ---------------------------------------------------------------- C2D / Sel-CL / ProMix
E("c2d_pretrain", "C2D/self_supervised/pretrain_simclr.py", "explicit_replacement",
  "C2D SimCLR pre-training (apex amp + apex DDP, NT-Xent with all_gather)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("from apex import amp", "amp", "removal", False, None,
        "switch to native torch.npu.amp; Ascend's apex patch does provide amp O1/O2, so not strictly required"),
      C("from apex.parallel import DistributedDataParallel as ApexDDP", "distributed_framework", "replace", False,
        "from torch.nn.parallel import DistributedDataParallel as DDP",
        "apex.parallel DDP on NPU is not confirmed in knowledge; native DDP is the safe path"),
      C("from apex.parallel import convert_syncbn_model", "distributed_framework", "removal", False, None,
        "replaced by nn.SyncBatchNorm.convert_sync_batchnorm (supported on NPU)"),
      C("assert APEX_AVAILABLE, 'install NVIDIA apex", "amp", "removal", False, None,
        "native AMP no longer needs apex; otherwise --fp16 keeps demanding an apex install"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL backend does not exist on Ascend"),
      C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("model = SimCLR(encoder, n_features, args.projection_dim).cuda()", "tensor_to_device", "replace", True,
        "model = SimCLR(encoder, n_features, args.projection_dim).npu()", "Module.cuda() fails on an NPU host"),
      C("model = convert_syncbn_model(model)", "distributed_framework", "replace", False,
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", "follows the apex removal"),
      C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler()", "native AMP instead of apex amp (Ascend apex would also work)"),
      C("model = ApexDDP(model, delay_allreduce=True)", "distributed_framework", "replace", False,
        "model = DDP(model, device_ids=[args.local_rank])", "native DDP instead of apex DDP - unconfirmed need"),
      C("x_i = x_i.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "x_i = x_i.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
      C("x_j = x_j.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "x_j = x_j.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
      C("with amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", "replace", False,
        "scaler.scale(loss).backward()", "native AMP instead of apex amp"),
  ])

E("knn_clean", "selcl/utils/knn_clean.py", "explicit_replacement",
  "Sel-CL / FINE-style kNN label cleaning with faiss", [
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        ".cuda() fails on an NPU host"),
      C("nbrs_t = torch.from_numpy(nbrs).long().cuda()", "tensor_to_device", "replace", True,
        "nbrs_t = torch.from_numpy(nbrs).long().npu()", ".cuda() fails on an NPU host"),
      C("w = torch.from_numpy(sims).cuda().div_(temperature).exp_()", "tensor_to_device", "replace", True,
        "w = torch.from_numpy(sims).npu().div_(temperature).exp_()", ".cuda() fails on an NPU host"),
      C("labels_t = torch.from_numpy(noisy_labels).cuda()", "tensor_to_device", "replace", True,
        "labels_t = torch.from_numpy(noisy_labels).npu()", ".cuda() fails on an NPU host"),
      C("votes = torch.zeros(n, num_classes, device='cuda')", "device_type", "replace", True,
        "votes = torch.zeros(n, num_classes, device='npu')", "cuda device string"),
  ])

E("promix_train", "ProMix/Train_promix.py", "explicit_replacement",
  "ProMix-style CIFAR-N training (DivideMix lineage, autocast bf16/fp16, TF32 flags)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpuid", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpuid", "ignored on Ascend: --gpuid has no effect"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "bf16_ok = torch.npu.is_bf16_supported()",
        "raises without CUDA; NPU has no compute-capability number (get_device_capability is None/env-configured)"),
      C("if major < 8:", "device_capability_check", "replace", True, "if not bf16_ok:",
        "follows the capability query above"),
      C("return torch.autocast(device_type='cuda'", "amp", "replace", False,
        "return torch.autocast(device_type='npu', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None)",
        "autocast('cuda') without CUDA warns and disables itself -> silent fp32; performance only"),
      C("inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "inputs, targets = inputs.npu(non_blocking=True), targets.npu(non_blocking=True)",
        ".cuda() fails on an NPU host"),
      C("x1, x2, y_onehot = x1.cuda(), x2.cuda(), y_onehot.cuda()", "tensor_to_device", "replace", True,
        "x1, x2, y_onehot = x1.npu(), x2.npu(), y_onehot.npu()", ".cuda() fails on an NPU host"),
      C("u1, u2 = u1.cuda(), u2.cuda()", "tensor_to_device", "replace", True, "u1, u2 = u1.npu(), u2.npu()",
        ".cuda() fails on an NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize raises without CUDA"),
      C("inputs, labels = inputs.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
        "inputs, labels = inputs.npu(), labels.npu()", ".cuda() fails on an NPU host"),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()",
        ".cuda() fails on an NPU host"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() fails on an NPU host"),
      C("scaler1 = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "scaler1 = torch.npu.amp.GradScaler(enabled=(amp_dtype == torch.float16))", AMP_NOTE),
      C("scaler2 = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "scaler2 = torch.npu.amp.GradScaler(enabled=(amp_dtype == torch.float16))", AMP_NOTE),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats()",
        "feeds the peak-memory log line only; behaviour without CUDA unconfirmed"),
      C("torch.cuda.max_memory_allocated() / 2 ** 30))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 2 ** 30))", "logging only (reports 0 without CUDA)"),
  ])
