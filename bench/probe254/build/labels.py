"""Labels for probe254 (lane detection / road-marking perception, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. See ../README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- LaneATT-style
E("laneatt_main", "main.py", "device_branch_or_abstraction",
  "LaneATT main.py (argparse entry, torch.device('cuda') selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device before any device is built"),
    C('logger.info("CUDA available: %s", torch.cuda.is_available())', "torch_cuda_api", "replace", False,
      'logger.info("NPU available: %s", torch.npu.is_available())',
      "log-only; would print False on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guards environment logging only; without change the device block is silently skipped"),
    C('torch.cuda.get_device_name(0), torch.cuda.device_count()', "torch_cuda_api", "replace", False,
      'logger.info("NPU: %s (%d visible)", torch.npu.get_device_name(0), torch.npu.device_count())',
      "log-only, reached once the guard above is switched to npu"),
    C("device = torch.device('cpu') if not torch.cuda.is_available()", "device_type", "replace", True,
      "device = torch.device('cpu') if not torch.npu.is_available() or args.cpu else torch.device('npu')",
      "torch.cuda.is_available() is False on an NPU host: the run silently falls to CPU (and the CUDA-only NMS then fails)"),
])

E("laneatt_runner", "lib/runner.py", "device_branch_or_abstraction",
  "LaneATT lib/runner.py (train/eval loop driven by a device passed in from main.py)", [
    C("torch.cuda.max_memory_allocated() / 1024.0 / 1024.0)", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024.0 / 1024.0)",
      "log-only: with CUDA never initialised this reports 0 MB instead of failing"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); NPU cache is not released"),
    C("torch.cuda.synchronize()  # the host->device copy", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # the host->device copy is not part of the model time",
      "timing helper: torch.cuda.synchronize raises on an NPU host"),
    C("torch.cuda.synchronize()  # wait for the kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the kernels before reading the clock",
      "timing helper: raises on an NPU host (and NPU ops are asynchronous too, so the sync must stay)"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(),",
      "evaluates False on an NPU host, so host->device copies lose pinning; performance only"),
])

E("laneatt_model", "lib/models/laneatt.py", "explicit_replacement",
  "LaneATT lib/models/laneatt.py (anchor attention model calling the nvcc-built lane NMS)", [
    C("keep, num_to_keep, _ = nms(proposals, scores, overlap=nms_thres, top_k=nms_topk)",
      "custom_cuda_extension", "replace", True,
      "keep, num_to_keep, _ = nms(proposals.cpu(), scores.cpu(), overlap=nms_thres, top_k=nms_topk)",
      "call site of the lane-NMS op: the port rebuilds lib/nms as a CPU CppExtension (same `nms` package, so the import stays) and feeds it host copies"),
    C("anchors_mask = torch.load(anchors_freq_path).cpu()", "device_type", "replace", False,
      "anchors_mask = torch.load(anchors_freq_path, map_location='cpu')",
      "fails only if the anchor-frequency .pt was saved from a CUDA tensor (the trailing .cpu() hints it was); unconfirmed"),
])

E("laneatt_nms_setup", "lib/nms/setup.py", "kernel_rewrite",
  "LaneATT lib/nms/setup.py (CUDAExtension build of the lane NMS op)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension",
      "no nvcc on an Ascend host; the port rebuilds the op as a host C++ extension"),
    C("CUDAExtension('nms.details', [", "custom_cuda_extension", "replace", True,
      "CppExtension('nms.details', [",
      "CUDAExtension needs the CUDA toolkit to compile nms_kernel.cu"),
    C("os.path.join(here, 'src', 'nms_kernel.cu'),", "custom_cuda_extension", "replace", True,
      "os.path.join(here, 'src', 'nms_cpu.cpp'),",
      "the CUDA kernel source is replaced by a CPU implementation of the same line-IoU NMS"),
    C("'nvcc': ['-O2', '--expt-relaxed-constexpr'],", "custom_cuda_extension", "removal", False, None,
      "nvcc flags are ignored once no .cu source is left; dead config"),
])

E("laneatt_nms_cpp", "lib/nms/src/nms.cpp", "kernel_rewrite",
  "LaneATT lib/nms/src/nms.cpp (pybind11 binding that dispatches to the CUDA kernel)", [
    C("#include <ATen/cuda/CUDAContext.h>", "custom_cuda_extension", "removal", True, None,
      "pulls in cuda_runtime_api.h; does not compile without the CUDA toolkit"),
    C("#include <c10/cuda/CUDAGuard.h>", "custom_cuda_extension", "removal", True, None,
      "CUDA device guard header; not available for an NPU/CPU build"),
    C("std::vector<at::Tensor> nms_cuda_forward(", "custom_cuda_extension", "replace", True,
      "std::vector<at::Tensor> nms_cpu_forward(",
      "forward declaration of the CUDA kernel launcher; the port links a CPU implementation"),
    C("#define CHECK_CUDA(x)", "custom_cuda_extension", "replace", True,
      '#define CHECK_CPU(x) AT_ASSERTM(x.device().is_cpu(), #x " must be a CPU tensor")',
      "the assert would reject the host tensors the ported call site passes"),
    C("#define CHECK_INPUT(x)", "custom_cuda_extension", "replace", True,
      "#define CHECK_INPUT(x) CHECK_CPU(x); CHECK_CONTIGUOUS(x)",
      "uses the CUDA check macro"),
    C("const at::cuda::OptionalCUDAGuard device_guard(device_of(boxes));", "custom_cuda_extension", "removal", True, None,
      "CUDA device guard; meaningless for host code and does not compile without CUDA"),
    C("return nms_cuda_forward(boxes, idx, thresh, top_k);", "custom_cuda_extension", "replace", True,
      "return nms_cpu_forward(boxes, idx, thresh, top_k);",
      "dispatch to the CPU implementation"),
])

E("laneatt_experiment", "lib/experiment.py", "device_branch_or_abstraction",
  "LaneATT lib/experiment.py (checkpoint book-keeping; torch.load without map_location)", [
    C("return torch.load(self.get_checkpoint_path(epoch))['model']", "device_type", "replace", True,
      "return torch.load(self.get_checkpoint_path(epoch), map_location='cpu')['model']",
      "the released checkpoints hold CUDA storages: without map_location torch.load tries to restore them on CUDA and raises on an NPU host"),
    C("train_state = torch.load(train_state_path)", "device_type", "replace", False,
      "train_state = torch.load(train_state_path, map_location='cpu')",
      "resume path: checkpoints written by the NPU run itself load fine; only fails when resuming a GPU run"),
])

E("laneatt_speed", "utils/speed.py", "explicit_replacement",
  "LaneATT utils/speed.py (FPS/MACs benchmark with cuda synchronize and CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone entry script"),
    C("torch.cuda.synchronize()  # drain the warmup work", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain the warmup work before starting the clock",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()  # wait for the timed iterations", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timed iterations",
      "same; without a device sync the timing would also be meaningless"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)",
      "CUDA event cannot be created on an NPU host"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)",
      "CUDA event cannot be created on an NPU host"),
    C("torch.cuda.synchronize()  # elapsed_time needs", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # elapsed_time needs both events completed",
      "torch.cuda.synchronize raises on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device raises on an NPU host"),
    C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpu))",
      "model/input would be moved to a CUDA device"),
    C("major, _ = torch.cuda.get_device_capability(args.gpu)", "device_capability_check", "replace", True,
      "major = 7  # no CUDA compute capability on Ascend; fp16 runs on the Cube unit",
      "--half path: raises on an NPU host, and torch.npu.get_device_capability returns None (cannot be unpacked)"),
    C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
      "print('Device: {}'.format(torch.npu.get_device_name(args.gpu)))",
      "initialises CUDA and raises on an NPU host"),
])

E("laneatt_env", "environment.yml", "explicit_replacement",
  "LaneATT conda environment (pytorch 1.6 + cudatoolkit from the pytorch/nvidia channels)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "CUDA package channel; unused once cudatoolkit is gone"),
    C("=- pytorch=1.6.0", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.6; torch_npu needs exactly the matching torch (e.g. 2.1.0)"),
    C("=- torchvision=0.7.0", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
      "torchvision must follow the torch bump (0.16.0 pairs with torch 2.1)"),
    C("=- cudatoolkit=10.2", "torch_cuda_api", "replace", False, "- cpuonly",
      "selects the CUDA build of pytorch and pulls CUDA runtime libs an Ascend host never uses; torch_npu is built against the CPU torch (whether the CUDA build also works with it is unconfirmed)"),
    C("=- pycocotools", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "the torch_npu wheel (pip only) must be installed, pinned to the torch version above"),
])

# ---------------------------------------------------------------- CLRNet-style
E("clrnet_main", "main.py", "explicit_replacement",
  "CLRNet main.py (--gpus list written into CUDA_VISIBLE_DEVICES, cudnn.benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(gpu) for gpu in args.gpus)',
      "ignored by the Ascend runtime: --gpus would silently select NPUs 0..n-1 instead of the requested ids"),
])

E("clrnet_runner", "clrnet/engine/runner.py", "explicit_replacement",
  "CLRNet clrnet/engine/runner.py (DataParallel over cfg.gpus, to_cuda batch helper)", [
    C("self.net = torch.nn.DataParallel(self.net, device_ids=range(self.cfg.gpus)).cuda()",
      "distributed_framework", "replace", True,
      "self.net = self.net.npu()  # nn.DataParallel is unsupported on NPU; multi-card goes through DDP",
      "torch.nn.DataParallel is listed unsupported on Ascend, and .cuda() fails on an NPU host"),
    C("batch[k] = batch[k].cuda()", "tensor_to_device", "replace", True, "batch[k] = batch[k].npu()",
      "every input tensor of the batch is moved with .cuda()"),
    C("output = self.net.module.heads.get_lanes(output)", "distributed_framework", "replace", True,
      "output = self.net.heads.get_lanes(output)",
      "follows from dropping the DataParallel wrapper: there is no .module any more"),
    C("lanes = self.net.module.heads.get_lanes(output)", "distributed_framework", "replace", True,
      "lanes = self.net.heads.get_lanes(output)",
      "follows from dropping the DataParallel wrapper"),
])

E("clrnet_head", "clrnet/models/heads/clr_head.py", "device_branch_or_abstraction",
  "CLRNet clrnet/models/heads/clr_head.py (prior refinement head; buffers, grid_sample, calls clrnet.ops.nms)", [
    # No line needs editing: all fixed tensors are registered buffers, new tensors are created with
    # device=... / new_zeros, and the NMS call goes through clrnet/ops/nms.py, which is where the
    # host round-trip is added. Kept as a file of near-misses.
])

E("clrnet_ops_nms", "clrnet/ops/nms.py", "kernel_rewrite",
  "CLRNet clrnet/ops/nms.py (thin wrapper over the compiled nms_impl CUDA op)", [
    C("return nms_impl.nms_forward(boxes, scores, overlap, top_k)", "custom_cuda_extension", "replace", True,
      "return [t.to(boxes.device) if hasattr(t, 'to') else t for t in nms_impl.nms_forward(boxes.cpu().contiguous(), scores.cpu(), overlap, top_k)]",
      "call site of the nvcc-built op; the port rebuilds nms_impl as a CPU extension and round-trips the NPU tensors through the host"),
])

E("clrnet_setup", "setup.py", "kernel_rewrite",
  "CLRNet setup.py (builds clrnet.ops.nms_impl; CUDA gate with FORCE_CUDA)", [
    C("raise EnvironmentError('clrnet.ops.nms_impl needs CUDA", "custom_cuda_extension", "replace", True,
      "extension = CppExtension  # host build (csrc/nms_cpu.cpp) on Ascend hosts",
      "an NPU host has no CUDA, so the build aborts here; the port builds the host implementation instead"),
])

E("clrnet_requirements", "requirements.txt", "explicit_replacement",
  "CLRNet requirements.txt (cu111 wheel index and +cu111 torch pins)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu111", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend hosts take the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("=torch==1.8.0+cu111", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu111 local version has no aarch64 wheel, and torch_npu needs exactly its paired torch"),
    C("=torchvision==0.9.0+cu111", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build pin; must follow the torch bump"),
    C("=ptflops", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch_npu wheel, pinned to the torch version above (appended at the end)"),
])

# ---------------------------------------------------------------- Ultra-Fast-Lane-Detection-style
E("ufld_train", "train.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection train.py (env:// + nccl, net.cuda(), .cuda() on labels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("img, cls_label, seg_label = img.cuda(), cls_label.long().cuda(), seg_label.long().cuda()",
      "tensor_to_device", "replace", True,
      "img, cls_label, seg_label = img.npu(), cls_label.long().npu(), seg_label.long().npu()",
      "aux-segmentation branch moves image and both labels with .cuda()"),
    C("img, cls_label = img.cuda(), cls_label.long().cuda()", "tensor_to_device", "replace", True,
      "img, cls_label = img.npu(), cls_label.long().npu()",
      "plain branch: .cuda() fails on an NPU host"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device raises on an NPU host"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
      "NCCL backend is unavailable; HCCL is the Ascend collective backend"),
    C("use_aux=cfg.use_aux).cuda()", "tensor_to_device", "replace", True, "use_aux=cfg.use_aux).npu()",
      "model moved with .cuda()"),
    C("state_all = torch.load(cfg.finetune)['model']", "device_type", "replace", True,
      "state_all = torch.load(cfg.finetune, map_location='cpu')['model']",
      "finetuning starts from released GPU checkpoints: without map_location torch.load restores CUDA storages and raises"),
])

E("ufld_dist_utils", "utils/dist_utils.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection utils/dist_utils.py (dist_print/dist_tqdm, pickled all_gather staged on 'cuda')", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "staging buffer for the collective; HCCL needs NPU tensors and 'cuda' fails"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "same"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "same"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size, )).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size, )).to("npu"))', "same"),
    C('padding = torch.ByteTensor(size=(max_size - local_size, )).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size, )).to("npu")', "same"),
])

E("ufld_loss", "utils/loss.py", "device_branch_or_abstraction",
  "Ultra-Fast-Lane-Detection utils/loss.py (OHEM CE, focal, relation losses; a few hard-coded .cuda())", [
    C("self.thresh = -torch.log(torch.tensor(thresh, dtype=torch.float)).cuda()", "tensor_to_device", "replace", True,
      "self.thresh = -torch.log(torch.tensor(thresh, dtype=torch.float)).npu()",
      "runs when the loss dict is built: .cuda() fails on an NPU host"),
    C("grid = torch.arange(c).view(1, c, 1, 1).cuda()", "tensor_to_device", "replace", True,
      "grid = torch.arange(c, device=logits.device).view(1, c, 1, 1)",
      "hard-coded .cuda() in forward; the sibling losses already use device=logits.device"),
])

E("ufld_eval", "evaluation/eval_wrapper.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection evaluation/eval_wrapper.py (CULane/TuSimple test loops)", [
    C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()",
      "CULane test loop moves the batch with .cuda()"),
    C("=imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "imgs = imgs.npu(non_blocking=True)",
      "TuSimple test loop"),
    C("pred = net(imgs.cuda())", "tensor_to_device", "replace", True, "pred = net(imgs.npu())",
      "CurveLanes test loop"),
])

E("ufld_demo", "demo.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection demo.py (renders predictions to video; net.cuda(), imgs.cuda())", [
    C("=import torch, os, cv2", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("use_aux=False).cuda()", "tensor_to_device", "replace", True, "use_aux=False).npu()",
      "model moved with .cuda()"),
    C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()",
      "input batch moved with .cuda()"),
])

E("ufld_speed", "speed_simple.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection speed_simple.py (module-level FPS script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone script"),
    C("cls_dim = (100+1,56,4),use_aux=False).cuda()", "tensor_to_device", "replace", True,
      "net = parsingNet(pretrained = False, backbone='18',cls_dim = (100+1,56,4),use_aux=False).npu()",
      "model moved with .cuda() (the commented-out CULane variant below is left alone)"),
    C("x = torch.zeros((1,3,288,800)).cuda() + 1", "tensor_to_device", "replace", True,
      "x = torch.zeros((1,3,288,800)).npu() + 1",
      "dummy input moved with .cuda()"),
])

E("ufldv2_model", "model/model_culane.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-V2 model/model_culane.py (hybrid anchor net; get_model() returns .cuda())", [
    C("fc_norm=cfg.fc_norm).cuda()", "tensor_to_device", "replace", True, "fc_norm=cfg.fc_norm).npu()",
      "the model factory moves the network with .cuda(); every train/test entry goes through it"),
])

E("ufld_docker", "docker/Dockerfile", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-style training Dockerfile (nvidia/cuda base, cu113 wheels, TensorRT)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; an Ascend image needs CANN (toolkit env already set by the image's ENV lines)"),
    C("=ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "nothing in this project builds CUDA code; dead on Ascend"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
      "CUDA arch list for extension builds; dead on Ascend"),
    C("=ENV FORCE_CUDA=1", "env_var", "removal", False, None,
      "forces CUDA extension builds; nothing to build here, dead on Ascend"),
    C("RUN pip install torch==1.10.1+cu113 torchvision==0.11.2+cu113 \\", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 \\",
      "+cu113 builds (and torch 1.10 has no torch_npu pairing)"),
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index"),
    C("=RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post10",
      "torch_npu wheel, pinned to the torch version installed above"),
    C("RUN pip install nvidia-pyindex && pip install nvidia-tensorrt==8.0.3.4 pycuda", "torch_cuda_api", "removal", True,
      None, "TensorRT/pycuda cannot be installed without the CUDA toolkit; the image build fails"),
    C("=ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read only by the NVIDIA container runtime; Ascend devices are passed with --device /dev/davinciN"),
    C("=ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
    C("=ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; a single-process run defaults to npu:0 anyway, so only the intent is lost"),
])

E("ufld_train_sh", "scripts/train_culane_dist.sh", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-style distributed launcher (torch.distributed.launch, CUDA_VISIBLE_DEVICES, NCCL_*)", [
    C("=set -eo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; only needed when the calling shell/container has not sourced it already"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "the script lets the caller pick cards; the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so ranks would silently land on NPUs 0..N-1"),
    C("=export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL-only knob, no effect with HCCL (HCCL logging goes through ASCEND_GLOBAL_LOG_LEVEL)"),
    C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob, no effect with HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "$LOG_PATH/npus.txt"',
      "nvidia-smi does not exist on an Ascend host; with `set -eo pipefail` the script aborts here"),
    C("CUDA_VISIBLE_DEVICES=0 python test.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python test.py $CONFIG --test_model $LOG_PATH/$LAST_CKPT --test_work_dir ./tmp",
      "single-process eval defaults to device 0 anyway; the variable is just ignored"),
])

# ---------------------------------------------------------------- CondLaneNet-style (mmdet 2.x)
E("condlane_train", "tools/train.py", "device_branch_or_abstraction",
  "CondLaneNet tools/train.py (mmdet 2.x trainer entry: --gpus/--gpu-ids, mmcv init_dist)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
      "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(**cfg.dist_params)",
      "the old mmcv pinned by the project sets the device with torch.cuda.set_device(rank % torch.cuda.device_count()), which fails on an NPU host (newer mmcv has an NPU branch: unconfirmed here)"),
])

E("condlane_apis", "mmdet/apis/train.py", "explicit_replacement",
  "CondLaneNet mmdet/apis/train.py (mmdet 2.x train_detector with MMDataParallel / MMDistributedDataParallel)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "mmcv's CUDA wrappers scatter inputs with CUDA streams; the NPU wrappers (mmcv>=1.7, name unconfirmed here) replace them"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed on the line above is expected to seed the NPU generator too (unconfirmed)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "MMDistributedDataParallel's scatter is CUDA-bound"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
      "model moved with .cuda() before wrapping"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device raises on an NPU host"),
    C("model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)",
      "non-distributed path: .cuda(id) fails and MMDataParallel's scatter is CUDA-bound"),
])

E("condlane_config", "configs/condlanenet/culane/culane_medium_train.py", "explicit_replacement",
  "CondLaneNet mmdet-style config (location_configs device string, dist_params backend)", [
    C("location_configs=dict(size=(batch_size, 1, 80, 200), device='cuda:0')),", "device_type", "replace", True,
      "location_configs=dict(size=(batch_size, 1, 80, 200), device='npu:0')),",
      "the head pre-computes its coordinate maps on this device string at build time; 'cuda:0' fails on an NPU host"),
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "passed straight to init_process_group by the launcher"),
])

E("condlane_head", "mmdet/models/dense_heads/condlanenet_head.py", "device_branch_or_abstraction",
  "CondLaneNet mmdet/models/dense_heads/condlanenet_head.py (dynamic-conv mask head; locations from a config device string)", [
    C("row_ids = torch.arange(b * h, dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "row_ids = torch.arange(b * h, dtype=torch.long, device=feat.device)",
      "hard-coded .cuda() in the row-wise lane pooling used by post-processing"),
])

# ---------------------------------------------------------------- LSTR-style (CornerNet-Lite code base)
E("lstr_train", "train.py", "explicit_replacement",
  "LSTR train.py (CornerNet-style prefetch processes + pin_memory thread, NetworkFactory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C('data["xs"] = [x.pin_memory() for x in data["xs"]]', "pin_memory", "replace", False,
      'data["xs"] = [x.pin_memory(device="npu") for x in data["xs"]]',
      "unconfirmed: on the older torch releases paired with torch_npu the default pin target is CUDA; naming the NPU keeps the pinned copy usable"),
    C('data["ys"] = [y.pin_memory() for y in data["ys"]]', "pin_memory", "replace", False,
      'data["ys"] = [y.pin_memory(device="npu") for y in data["ys"]]',
      "same as the line above (unconfirmed)"),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      'print("max memory allocated: {:.0f}MB".format(torch.npu.max_memory_allocated() / 2**20))',
      "log-only; prints 0 on an NPU host"),
])

E("lstr_factory", "nnet/py_factory.py", "explicit_replacement",
  "LSTR nnet/py_factory.py (NetworkFactory: vendored chunked DataParallel, .cuda(non_blocking=True) on batches)", [
    C("self.network = DataParallel(self.network, chunk_sizes=system_configs.chunk_sizes)", "distributed_framework",
      "removal", False, None,
      "the vendored CornerNet DataParallel falls through to a plain call when torch.cuda.is_available() is False, so it runs on one card: multi-card speed is lost, nothing breaks"),
    C("input_test = torch.randn(1, 3, 360, 640).cuda()", "tensor_to_device", "replace", True,
      "input_test = torch.randn(1, 3, 360, 640).npu()", "MACs probe input moved with .cuda() at construction"),
    C("input_mask = torch.ones(1, 3, 360, 640).cuda()", "tensor_to_device", "replace", True,
      "input_mask = torch.ones(1, 3, 360, 640).npu()", "same"),
    C("self.model.cuda()  # thop runs the model once", "tensor_to_device", "replace", True,
      "self.model.npu()  # thop runs the model once, inputs and weights must share a device",
      "model moved with .cuda() at construction"),
    C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()",
      "body of NetworkFactory.cuda(), which train.py calls; the method name itself can stay"),
    C("=xs = [x.cuda(non_blocking=True) for x in xs]", "tensor_to_device", "replace", True,
      "xs = [x.npu(non_blocking=True) for x in xs]", "training inputs"),
    C("=ys = [[y.cuda(non_blocking=True) for y in yy] for yy in ys]", "tensor_to_device", "replace", True,
      "ys = [[y.npu(non_blocking=True) for y in yy] for yy in ys]", "training targets"),
    C("xs = [x.cuda(non_blocking=True) for x in xs]  # validation batch", "tensor_to_device", "replace", True,
      "xs = [x.npu(non_blocking=True) for x in xs]  # validation batch", "validation inputs"),
    C("ys = [[y.cuda(non_blocking=True) for y in yy] for yy in ys]  # validation targets", "tensor_to_device",
      "replace", True, "ys = [[y.npu(non_blocking=True) for y in yy] for yy in ys]  # validation targets",
      "validation targets"),
    C("params = torch.load(f)", "device_type", "replace", True, "params = torch.load(f, map_location='cpu')",
      "pretrained LSTR weights were saved from GPU runs; without map_location torch.load tries to restore CUDA storages and raises"),
    C("snapshot = torch.load(f)", "device_type", "replace", True, "snapshot = torch.load(f, map_location='cpu')",
      "test.py evaluates the released GPU snapshots (cache/nnet/LSTR/LSTR_<iter>.pkl) through load_params; CUDA storages cannot be restored on an NPU host"),
])

# ---------------------------------------------------------------- PytorchAutoDrive-style
E("pad_ddp_utils", "utils/ddp_utils.py", "explicit_replacement",
  "PytorchAutoDrive utils/ddp_utils.py (torchvision-reference init_distributed_mode, reduce_dict)", [
    C("args['gpu'] = args['rank'] % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args['gpu'] = args['rank'] % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args['gpu'])", "torch_cuda_api", "replace", True, "torch.npu.set_device(args['gpu'])",
      "torch.cuda.set_device raises on an NPU host"),
    C("args['dist_backend'] = 'nccl'", "dist_backend", "replace", True, "args['dist_backend'] = 'hccl'",
      "backend string fed to init_process_group a few lines below"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "collective buffer created on 'cuda'; also dropped to fp32 since fp64 support on NPU is limited (transfer_to_npu maps DoubleTensor to FloatTensor)"),
])

E("pad_base_runner", "utils/runners/base.py", "device_branch_or_abstraction",
  "PytorchAutoDrive utils/runners/base.py (BaseRunner/BaseTrainer/BaseTester; device from cfg['device'])", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself without CUDA; with autocast moved to the NPU, fp16 gradients would go unscaled"),
    C("device='cuda',", "device_type", "replace", True, "device='npu',",
      "default device string the runners build torch.device from"),
    C("if torch.cuda.is_available():", "device_type", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: training silently falls back to CPU"),
    C("if self.device.type != 'cuda':", "device_type", "replace", False, "if self.device.type != 'npu':",
      "memory logging is silently skipped on NPU; log-only"),
    C("peak = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.device) / 1024 ** 3",
      "log-only; reached once the guard above is switched to npu"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "log-only, same guard"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "latency helper: raises on an NPU host"),
    C("=torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.device)",
      "latency helper: raises on an NPU host"),
])

E("pad_lane_trainer", "utils/runners/lane_det_trainer.py", "device_branch_or_abstraction",
  "PytorchAutoDrive utils/runners/lane_det_trainer.py (autocast(mixed_precision) + GradScaler loop)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      "torch.cuda.amp.autocast disables itself without CUDA: mixed_precision=True would silently train in fp32 (every `with autocast(...)` below then works unchanged)"),
])
