"""Labels for probe424 (neural / arbitrary style transfer, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this one line
unchanged fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any torch.npu / 'npu' device use; "
               "this is the entry script, so nothing else has imported it yet")

# ---------------------------------------------------------------------------------------------
# naoto0804/pytorch-AdaIN
# ---------------------------------------------------------------------------------------------
E("adain_train", "train.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN train.py (module-level device, tensorboardX, infinite sampler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')",
      "unconditional CUDA device; every .to(device) below follows it"),
])

E("adain_test", "test.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN test.py (style interpolation, preserve_color via CORAL on CPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "cuda-or-cpu fallback: on an NPU host it silently runs the whole VGG/decoder on the CPU"),
])

E("adain_net", "net.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN net.py (VGG encoder / decoder definitions, device-agnostic)", [])

E("adain_function", "function.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN function.py (calc_mean_std, AdaIN, CORAL with torch.svd on CPU tensors)", [])

E("adain_sampler", "sampler.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN sampler.py (InfiniteSamplerWrapper)", [])

E("adain_video", "test_video.py", "explicit_replacement",
  "pytorch-AdaIN style video script (cv2 frames, --gpu index, optional per-frame latency)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:%d' % args.gpu if args.gpu >= 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:%d' % args.gpu if args.gpu >= 0 else 'cpu')",
      "--gpu N now means NPU N"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "runs whenever --benchmark is given with a device id; torch.cuda.synchronize raises on a host without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)",
      "second timing barrier; also needed for the latency numbers to mean anything (NPU launches are async)"),
])

E("adain_requirements", "requirements.txt", "explicit_replacement",
  "naoto0804/pytorch-AdaIN requirements (pip)", [
    C("torch>=1.4.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post8",
      "the port imports torch_npu; the wheel must match the installed torch x.y.z exactly "
      "(2.1.0.post8 pairs with torch 2.1.0 / CANN 8.0.RC3 per the version matrix)"),
])

# ---------------------------------------------------------------------------------------------
# GlebSBrykin/SANET (Style-Attentional Networks)
# ---------------------------------------------------------------------------------------------
E("sanet_train", "train.py", "explicit_replacement",
  "GlebSBrykin/SANET train.py (SANet/Transform/Net inline, resumable with optimizer state)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')", "unconditional CUDA device"),
    C("optimizer.load_state_dict(torch.load('optimizer_iter_'", "tensor_to_device", "replace", False,
      "optimizer.load_state_dict(torch.load('optimizer_iter_' + str(args.start_iter) + '.pth', map_location='cpu'))",
      "optimizer state is saved without moving it to CPU, so a checkpoint written on a GPU box holds cuda "
      "tensors and torch.load fails on an NPU host; checkpoints written by the NPU port itself load fine, "
      "and Optimizer.load_state_dict re-casts state to the param device"),
])

E("sanet_eval", "Eval.py", "explicit_replacement",
  "GlebSBrykin/SANET Eval.py (multi-step stylisation, per-stage encoders moved to device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silent CPU fallback on an NPU host"),
])

# ---------------------------------------------------------------------------------------------
# diyiiyiii/StyTR-2
# ---------------------------------------------------------------------------------------------
E("stytr2_train", "train.py", "explicit_replacement",
  "diyiiyiii/StyTR-2 train.py (nn.DataParallel over two GPUs, CUDA_VISIBLE_DEVICES set in code)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; after DataParallel is dropped the script "
      "uses npu:0 only, so the mask just keeps the device choice explicit"),
    C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "USE_NPU = torch.npu.is_available()",
      "drives the device below; unchanged it is False on an NPU host and training silently runs on CPU"),
    C('device = torch.device("cuda:0" if USE_CUDA else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if USE_NPU else "cpu")', "device string"),
    C("network = nn.DataParallel(network, device_ids=[0, 1])", "distributed_framework", "removal", True,
      None,
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (torch_api_npu_support_2.7.1.tsv); "
      "single-NPU port (DDP would be the multi-card route)"),
    C("{'params': network.module.transformer.parameters()},", "distributed_framework", "replace", True,
      "{'params': network.transformer.parameters()},", "no .module once the DataParallel wrapper is gone"),
    C("{'params': network.module.decode.parameters()},", "distributed_framework", "replace", True,
      "{'params': network.decode.parameters()},", "no .module once the DataParallel wrapper is gone"),
    C("{'params': network.module.embedding.parameters()},", "distributed_framework", "replace", True,
      "{'params': network.embedding.parameters()},", "no .module once the DataParallel wrapper is gone"),
    C("state_dict = network.module.transformer.state_dict()", "distributed_framework", "replace", True,
      "state_dict = network.transformer.state_dict()", "no .module once the DataParallel wrapper is gone"),
    C("state_dict = network.module.decode.state_dict()", "distributed_framework", "replace", True,
      "state_dict = network.decode.state_dict()", "no .module once the DataParallel wrapper is gone"),
    C("state_dict = network.module.embedding.state_dict()", "distributed_framework", "replace", True,
      "state_dict = network.embedding.state_dict()", "no .module once the DataParallel wrapper is gone"),
])

E("stytr2_test", "test.py", "explicit_replacement",
  "diyiiyiii/StyTR-2 test.py (loads transformer/decoder/embedding checkpoints, strips 'module.')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU fallback"),
])

E("stytr2_model", "models/StyTR.py", "explicit_replacement",
  "diyiiyiii/StyTR-2 models/StyTR.py (PatchEmbed, VGG, decoder, StyTrans losses; device-agnostic)", [])

E("stytr2_transformer", "models/transformer.py", "explicit_replacement",
  "diyiiyiii/StyTR-2 models/transformer.py (DETR-style encoder/decoder with content-aware PE)", [
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "module-level global that nothing in the module uses; ported for consistency only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "2, 3"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "2,3"',
      "import-time side effect, overridden by train.py before any device is touched; note the space: "
      "ASCEND_RT_VISIBLE_DEVICES parsing stops at the first invalid character (ascend-distributed.md), "
      "so a verbatim '2, 3' would expose only device 2"),
])

E("stytr2_misc", "util/misc.py", "explicit_replacement",
  "diyiiyiii/StyTR-2 util/misc.py (DETR misc: SmoothedValue, all_gather, MetricLogger, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "tensor for the HCCL all_reduce must live on the NPU; fp64 kept (HCCL fp64 support not confirmed here)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "pickled payload for all_gather"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "all_gather size exchange"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "all_gather size exchange"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
      True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "receive buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "padding is concatenated with an NPU tensor"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "only chooses the log format; left alone the 'max mem' column is simply missing (the ported print "
      "branch passes memory= to a format without that field, which str.format ignores)"),
    C("if torch.cuda.is_available():  # peak memory column", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # peak memory column",
      "left alone while the format branch above is ported, the else-branch formats a message containing "
      "{memory} without memory= -> KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / MB))", "CUDA memory query raises without CUDA"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "bind the process to its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL does not exist on Ascend; HCCL is the collective backend"),
])

# ---------------------------------------------------------------------------------------------
# zyxElsa/CAST_pytorch (CUT / CycleGAN code base)
# ---------------------------------------------------------------------------------------------
E("cast_base_options", "options/base_options.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch options/base_options.py (CUT-style --gpu_ids parsing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "imported by both train.py and test.py before any model code; one import here registers the NPU "
      "backend for the whole process"),
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])", "--gpu_ids now lists NPU ids"),
])

E("cast_base_model", "models/base_model.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch models/base_model.py (CUT BaseModel: device, parallelize, save/load)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "model-wide device used by set_input, losses and map_location"),
    C("setattr(self, 'net' + name, torch.nn.DataParallel(net, self.opt.gpu_ids))", "distributed_framework",
      "replace", True, "setattr(self, 'net' + name, net)",
      "nn.DataParallel is unsupported on Atlas A2/A3 (scatter/broadcast are CUDA-only); nets already sit on "
      "the NPU via init_net"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "unchanged, the else-branch saves via net.cpu() and never moves the net back -> next step mixes CPU "
      "weights with NPU inputs"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(net.cpu().state_dict(), save_path)", "no .module without DataParallel"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.npu(self.gpu_ids[0])", "move the net back after the CPU save"),
])

E("cast_networks", "models/networks.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch models/networks.py (init_net, AdaIN encoder/decoder, MSP style projector, PatchSampleF)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())", "assert fails on an NPU host"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.to(f'npu:{gpu_ids[0]}')",
      "a bare int device means a CUDA ordinal (transfer_to_npu rewrites ints only for .to, confirming it "
      "is not handled natively)"),
    C("mlp.cuda()", "tensor_to_device", "replace", True,
      "mlp.npu()", "lazily created MLP heads"),
])

E("cast_model", "models/cast_model.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch models/cast_model.py (CAST: cycle + GAN + multi-layer style contrastive loss)", [
    C("labels = torch.zeros(out.size(0), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.zeros(out.size(0), dtype=torch.long).npu()", "InfoNCE targets"),
])

E("cast_train", "train.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch train.py (CUT training loop with synchronize-based timing)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "runs every iteration whenever gpu_ids is non-empty"),
    C("torch.cuda.synchronize()  # GPU work is async", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # GPU work is async: wait before reading the clock", "second timing barrier"),
])

E("cast_test", "test.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch test.py (CUT test loop; device handled by options/base_model)", [])

E("cast_util", "util/util.py", "explicit_replacement",
  "zyxElsa/CAST_pytorch util/util.py (tensor2im, copyconf, resize helpers)", [])

E("cast_script", "scripts/train_cast.sh", "explicit_replacement",
  "CAST_pytorch-style launcher (train + test, GPU chosen via CUDA_VISIBLE_DEVICES)", [
    C("set -e", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced from the shell profile or the container image"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "the Python side always uses index 0 (--gpu_ids 0) and relies on this mask to pick the card; "
      "unchanged, every run lands on NPU 0 whatever GPU= says"),
    C("nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv", "device_capability_check", "replace",
      True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and set -e aborts the script"),
])

# ---------------------------------------------------------------------------------------------
# zyxElsa/InST (textual-inversion style transfer on latent diffusion / pytorch-lightning)
# ---------------------------------------------------------------------------------------------
E("inst_main", "main.py", "explicit_replacement",
  "zyxElsa/InST main.py (LDM/textual-inversion Lightning trainer with CUDACallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()", "model is moved before the Trainer exists"),
    C("torch.cuda.reset_peak_memory_stats(trainer.root_gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(trainer.root_gpu)",
      "CUDACallback is always in the default callbacks, so this runs at every epoch start"),
    C("=torch.cuda.synchronize(trainer.root_gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(trainer.root_gpu)", "epoch-start barrier in CUDACallback"),
    C("torch.cuda.synchronize(trainer.root_gpu)  # wait for the last step", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(trainer.root_gpu)  # wait for the last step before reading the counters",
      "epoch-end barrier in CUDACallback"),
    C("max_memory = torch.cuda.max_memory_allocated(trainer.root_gpu) / 2 ** 20", "torch_cuda_api", "replace",
      True, "max_memory = torch.npu.max_memory_allocated(trainer.root_gpu) / 2 ** 20", "peak memory report"),
    C('trainer_config["accelerator"] = "ddp"', "distributed_framework", "replace", True,
      'trainer_config["accelerator"] = "npu"',
      "pytorch-lightning 1.5's 'ddp' + gpus path requires CUDA devices; some NPU-capable Lightning "
      "accelerator/strategy (hccl) is needed. The exact replacement is unconfirmed in the knowledge base"),
])

E("inst_ddim", "ldm/models/diffusion/ddim.py", "explicit_replacement",
  "zyxElsa/InST ldm/models/diffusion/ddim.py (CompVis DDIM sampler, hard-coded cuda buffers)", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", False,
      'if attr.device != torch.device("npu"):',
      "with the .to() below ported but this test unchanged, an NPU tensor compares unequal and is re-moved "
      "to the NPU: a no-op"),
    C('attr = attr.to(torch.device("cuda"))', "device_type", "replace", True,
      'attr = attr.to(torch.device("npu"))', "every schedule buffer is forced to CUDA"),
])

E("inst_encoders", "ldm/modules/encoders/modules.py", "explicit_replacement",
  "zyxElsa/InST ldm/modules/encoders/modules.py (CLIP/BERT conditioners with device='cuda' defaults)", [
    C('max_seq_len=77, device="cuda"):', "device_type", "replace", True,
      'def __init__(self, n_embed, n_layer, vocab_size, max_seq_len=77, device="npu"):',
      "default device used for tokens; configs never pass device="),
    C('def __init__(self, device="cuda", vq_interface=True, max_length=77):', "device_type", "replace", True,
      'def __init__(self, device="npu", vq_interface=True, max_length=77):', "same idiom (BERT tokenizer)"),
    C('version="openai/clip-vit-large-patch14", device="cuda", max_length=77', "device_type", "replace", True,
      'def __init__(self, version="openai/clip-vit-large-patch14", device="npu", max_length=77):',
      "the conditioner InST's v1-finetune.yaml instantiates; tokens.to('cuda') fails on every step"),
    C("def __init__(self, version='ViT-L/14', device=\"cuda\"", "device_type", "replace", True,
      "def __init__(self, version='ViT-L/14', device=\"npu\", max_length=77, n_repeat=1, normalize=True):",
      "same idiom (OpenAI CLIP text encoder)"),
    C("device='cuda' if torch.cuda.is_available() else 'cpu',", "device_type", "replace", True,
      "device='npu' if torch.npu.is_available() else 'cpu',",
      "falls back to CPU on an NPU host while the UNet is on the NPU -> device mismatch"),
    C('def __init__(self, version="openai/clip-vit-large-patch14", device="cuda"):', "device_type", "replace", True,
      'def __init__(self, version="openai/clip-vit-large-patch14", device="npu"):',
      "image tower used for the style inversion branch"),
])

E("inst_infer", "scripts/inst_infer.py", "explicit_replacement",
  "zyxElsa/InST inference (notebook converted to a script: DDIM img2img with stochastic inversion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True,
      'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "silent CPU fallback for the whole SD pipeline"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement after loading"),
    C('with precision_scope("cuda"):', "amp", "replace", False,
      'with precision_scope("npu"):',
      "torch.autocast('cuda') on a host without CUDA warns and disables itself, so sampling runs in fp32: "
      "slower, not wrong"),
])

E("inst_config", "configs/stable-diffusion/v1-finetune.yaml", "explicit_replacement",
  "zyxElsa/InST configs/stable-diffusion/v1-finetune.yaml (no device settings)", [])

E("inst_env", "environment.yaml", "explicit_replacement",
  "zyxElsa/InST environment.yaml (conda, CompVis LDM pins)", [
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime from conda: useless on an Ascend host (CANN comes from the system install)"),
    C("- pytorch=1.10.2", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "no torch_npu wheel exists for torch 1.10 (matrix lists 1.8.1, 1.11.0, 2.x); 2.1.0 pairs with "
      "torch-npu 2.1.0.postN"),
    C("- torchvision=0.11.3", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0", "must move with torch (0.16 <-> torch 2.1)"),
    C("- albumentations==1.1.0", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post8", "the port imports torch_npu"),
])

# ---------------------------------------------------------------------------------------------
# ProGamerGov/neural-style-pt (Gatys optimisation, L-BFGS, multi-device model parallel)
# ---------------------------------------------------------------------------------------------
E("nspt_neural_style", "neural_style.py", "explicit_replacement",
  "ProGamerGov/neural-style-pt neural_style.py (-gpu 0 / c / 0,1,c, dtype=torch.cuda.FloatTensor, L-BFGS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(params.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(params.seed)",
      "torch.cuda.manual_seed_all is queued lazily and does not raise without CUDA; the torch.manual_seed "
      "call above should already seed the NPU generator too (unconfirmed in the knowledge base)"),
    C('backward_device = "cuda:" + devices[0]', "device_type", "replace", True,
      'backward_device = "npu:" + devices[0]', "loss accumulation device in multi-device mode"),
    C("=dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "dtype = torch.npu.FloatTensor",
      "images and the net are placed with .type(dtype); torch_npu.npu exports FloatTensor"),
    C('dtype, backward_device = torch.cuda.FloatTensor, "cuda:" + str(params.gpu)', "torch_cuda_api", "replace",
      True, 'dtype, backward_device = torch.npu.FloatTensor, "npu:" + str(params.gpu)',
      "single-device path: both the tensor type and the backward device"),
])

E("nspt_caffeloader", "CaffeLoader.py", "explicit_replacement",
  "ProGamerGov/neural-style-pt CaffeLoader.py (VGG/NIN builders, ModelParallel across devices)", [
    C('device_list.append("cuda:" + str(device))', "device_type", "replace", True,
      'device_list.append("npu:" + str(device))', "chunks are placed with .to(device_list[i])"),
    C("if input.type() == 'torch.FloatTensor' and 'cuda' in self.device_list[i]:", "device_type", "replace",
      False, "if input.type() == 'torch.FloatTensor' and 'npu' in self.device_list[i]:",
      "left alone the branch is never taken, and forward() moves the input with .to(device) right after "
      "c(), so nothing breaks"),
    C("input = input.type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "input = input.type('torch.npu.FloatTensor')",
      "with the condition above ported, this body would request a CUDA tensor type"),
    C("elif input.type() == 'torch.cuda.FloatTensor' and 'cpu' in self.device_list[i]:", "torch_cuda_api",
      "replace", False, "elif input.type() == 'torch.npu.FloatTensor' and 'cpu' in self.device_list[i]:",
      "never matches an NPU tensor, but the following .to('cpu') does the move anyway"),
    C("cnn = cnn.cuda()", "tensor_to_device", "replace", True,
      "cnn = cnn.npu()", "unless -gpu c, the VGG weights are moved to the accelerator here"),
])

E("nspt_setup", "setup.py", "explicit_replacement",
  "ProGamerGov/neural-style-pt setup.py (console entry points)", [])

# ---------------------------------------------------------------------------------------------
# pytorch/tutorials: Gatys neural transfer tutorial
# ---------------------------------------------------------------------------------------------
E("tutorial_neural_style", "advanced_source/neural_style_tutorial.py", "explicit_replacement",
  "pytorch/tutorials advanced_source/neural_style_tutorial.py (Gatys with VGG19 + L-BFGS, set_default_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silent CPU fallback; also feeds torch.set_default_device"),
    C("imsize = 512 if torch.cuda.is_available() else 128", "torch_cuda_api", "replace", True,
      "imsize = 512 if torch.npu.is_available() else 128",
      "unchanged, an NPU host silently produces a 128-px result instead of 512-px"),
])
