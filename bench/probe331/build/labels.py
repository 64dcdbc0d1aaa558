# Labels for probe331 (spiking neural networks / neuromorphic training frameworks, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
CUPY_NOTE = "cupy has no Ascend build (knowledge §6: cupy issue #9379); the SpikingJelly 'cupy' backend cannot run on NPU"

# ---------------------------------------------------------------------------------------------------------------------
# SpikingJelly (activation_based) library + examples
# ---------------------------------------------------------------------------------------------------------------------

E("sj_cuda_utils", "spikingjelly/activation_based/cuda_utils.py", "kernel_rewrite",
  "SpikingJelly activation_based/cuda_utils.py (CuPy helpers, CUDA-event timer, DeviceEnvironment)",
  [
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device)",
        "CPU-build torch on an Ascend host has no torch._C._cuda_setDevice -> fails when cuda_timer is called"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)",
        "torch.cuda.Event is a dummy type without CUDA; torch.npu.Event supports timing"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "same as start event"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)", "torch.cuda.synchronize lazily initialises CUDA -> 'Torch not compiled with CUDA enabled'"),
      C("current_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "current_device = torch.npu.current_device()", "DeviceEnvironment is a public helper; current_device() raises without CUDA"),
      C("torch.cuda.set_device(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.device)", "fails without CUDA"),
      C("torch.cuda.set_device(self.previous_device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.previous_device)", "fails without CUDA"),
      C("torch_stream = torch.cuda.current_stream(device)", "torch_cuda_api", "removal", False, None,
        "get_cupy_stream only serves CuPy kernels; dead once the cupy kernels are rewritten in torch ops"),
      C("return cupy.cuda.ExternalStream(torch_stream.cuda_stream, device)", "custom_cuda_extension", "removal", False, None,
        "CuPy stream wrapper; no CuPy on Ascend, helper becomes dead code after the kernel rewrite"),
  ])

E("sj_neuron_kernel", "spikingjelly/activation_based/neuron_kernel.py", "kernel_rewrite",
  "SpikingJelly neuron_kernel.py (cupy.RawKernel IF-neuron FPTT/BPTT kernels generated as CUDA C strings)",
  [
      C("=import cupy", "custom_cuda_extension", "removal", True, None,
        CUPY_NOTE + "; unguarded import makes the module fail to import"),
      C("return cupy.RawKernel(code, kernel_name, options=cuda_compiler_options()", "custom_cuda_extension", "replace", True,
        "return None  # FPTT is computed with torch ops in multistep_if_fptt_torch()",
        "NVRTC-compiled CUDA C kernel; must be rewritten (torch ops / Ascend C)"),
      C("return cupy.RawKernel(code, kernel_name, options=configure.cuda_compiler_options", "custom_cuda_extension", "replace", True,
        "return None  # BPTT is computed with torch ops in multistep_if_bptt_torch()",
        "NVRTC-compiled CUDA C kernel; must be rewritten"),
      C("kernel((blocks,), (threads,), cuda_utils.wrap_args_to_raw_kernel(device, *kernel_args))", "custom_cuda_extension", "replace", True,
        "h_seq, spike_seq, v_v_seq = multistep_if_fptt_torch(x_seq, v_v_seq, v_threshold, v_reset)",
        "raw CUDA kernel launch with device pointers"),
      C("kernel((ctx.blocks,), (ctx.threads,), cuda_utils.wrap_args_to_raw_kernel(device, *kernel_args))", "custom_cuda_extension", "replace", True,
        "grad_x_seq, grad_v_init = multistep_if_bptt_torch(grad_spike_seq, grad_v_seq, h_seq, spike_seq, v_threshold, v_reset, ctx.detach_reset, ctx.surrogate_function)",
        "raw CUDA kernel launch in backward"),
      C("check_multi_step_neuron_output_and_grad('cuda:0', neuron.IFNode)", "device_type", "removal", False, None,
        "developer self-test comparing the torch backend against the cupy backend; meaningless on NPU"),
  ])

E("sj_neuron", "spikingjelly/activation_based/neuron.py", "device_branch_or_abstraction",
  "SpikingJelly activation_based/neuron.py (BaseNode/IFNode/LIFNode with 'torch' / 'cupy' backends, guarded cupy import)",
  [
      C("return ('torch', 'cupy')", "custom_cuda_extension", "replace", False,
        "return ('torch', 'cupy') if cupy is not None else ('torch',)",
        "default backend is 'torch' so nothing fails; advertising 'cupy' only when importable turns a late AttributeError on None into an early backend-check error"),
      C("return 'torch', 'cupy'", "custom_cuda_extension", "replace", False,
        "return ('torch', 'cupy') if cupy is not None else ('torch',)", "same as IFNode.supported_backends"),
  ])

E("sj_conv_fmnist", "spikingjelly/activation_based/examples/conv_fashion_mnist.py", "explicit_replacement",
  "SpikingJelly examples/conv_fashion_mnist.py (CSNN, -device/-amp/-cupy flags, torch.cuda.amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; torch_npu < 2.5.1 (the 2.1 line these old SNN stacks pin) has no backend autoload"),
      C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
        "torch.cuda.amp.GradScaler/autocast disable themselves without CUDA (warning only) -> -amp silently trains in fp32"),
      C("parser.add_argument('-device', default='cuda:0', help='device')", "device_type", "replace", True,
        "parser.add_argument('-device', default='npu:0', help='device')", "net.to('cuda:0') fails on a CPU-build torch"),
      C("functional.set_backend(self, backend='cupy')", "custom_cuda_extension", "replace", False,
        "functional.set_backend(self, backend='torch')",
        "only reached with the opt-in -cupy flag; " + CUPY_NOTE),
  ])

E("sj_train_classify", "spikingjelly/activation_based/model/train_classify.py", "explicit_replacement",
  "SpikingJelly model/train_classify.py (torchvision-reference Trainer with --amp, --cupy, set_deterministic)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "module is run as the entry point (python -m ...train_classify)"),
      C("torch.cuda.manual_seed_all(_seed_)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(_seed_)",
        "lazy no-op without CUDA; torch.manual_seed above also seeds the privateuse1 (npu) device (unconfirmed in knowledge)"),
      C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "replace", False,
        "os.environ['HCCL_DETERMINISTIC'] = 'true'",
        "cuBLAS-only knob, no effect on NPU; HCCL_DETERMINISTIC makes the NPU all-reduces deterministic"),
      C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=scaler is not None):", "cuda autocast is disabled without CUDA -> fp32 silently"),
      C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
        "cuda GradScaler disables itself without CUDA -> no loss scaling"),
      C("parser.add_argument(\"--device\", default=\"cuda\"", "device_type", "replace", True,
        "parser.add_argument(\"--device\", default=\"npu\", type=str, help=\"device (Use npu or cpu Default: npu)\")",
        "torch.device('cuda') then model.to(device) fails"),
      C("functional.set_backend(model, 'cupy', neuron.IFNode)", "custom_cuda_extension", "replace", False,
        "functional.set_backend(model, 'torch', neuron.IFNode)", "opt-in --cupy only; " + CUPY_NOTE),
  ])

E("sj_tv_utils", "spikingjelly/activation_based/model/tv_ref_classify/utils.py", "explicit_replacement",
  "torchvision references/classification/utils.py as vendored by SpikingJelly (MetricLogger, init_distributed_mode)",
  [
      C("if torch.cuda.is_available():  # add a peak-memory column", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():  # add a peak-memory column to the log line",
        "logging only: without it the max-mem column is silently dropped"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "logging only (second branch of the same memory column)"),
      C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB,",
        "would report 0 without CUDA (memory_stats returns {} when CUDA is uninitialised); logging only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 without CUDA -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "fails on CPU-build torch"),
      C("args.dist_backend = \"nccl\"", "dist_backend", "replace", True, "args.dist_backend = \"hccl\"",
        "NCCL backend is not available on Ascend; HCCL is"),
      C("t = torch.tensor(val, device=\"cuda\")", "tensor_to_device", "replace", True, "t = torch.tensor(val, device=\"npu\")",
        "HCCL all_reduce needs an NPU tensor; 'cuda' fails"),
  ])

E("sj_dvsg_sh", "scripts/train_dvsg.sh", "explicit_replacement",
  "SpikingJelly PLIF reproduction launcher (DVS128 Gesture / CIFAR10-DVS) with -device cuda:0 -amp -cupy",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or torch_npu cannot load its libraries"),
      C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime -> device restriction silently lost"),
      C("-T 16 -device cuda:0 -b 16 -epochs 64 \\", "device_type", "replace", True,
        "-T 16 -device npu:0 -b 16 -epochs 64 \\", "device string passed to .to()"),
      C("-data-dir ${DVSG_ROOT} -amp -cupy -opt adam", "custom_cuda_extension", "replace", True,
        "-data-dir ${DVSG_ROOT} -amp -opt adam -lr 0.001 -j 8 \\", "-cupy selects the cupy neuron backend; " + CUPY_NOTE),
      C("-T 10 -device cuda:0 -b 32 -epochs 200 \\", "device_type", "replace", True,
        "-T 10 -device npu:0 -b 32 -epochs 200 \\", "device string passed to .to()"),
      C("-data-dir ${C10DVS_ROOT} -amp -cupy -opt sgd", "custom_cuda_extension", "replace", True,
        "-data-dir ${C10DVS_ROOT} -amp -opt sgd -lr 0.1 -momentum 0.9 -j 16 \\", "drop -cupy; " + CUPY_NOTE),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version", "torch_cuda_api", "replace", False,
        "npu-smi info > ${OUT_ROOT}/npu_info.txt || true", "informational only and already '|| true'"),
  ])

E("sj_speed_bench", "benchmark/neuron_backend_speed.py", "explicit_replacement",
  "SpikingJelly-style benchmark comparing torch vs cupy multi-step neuron backends",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "module-level device used for tensors and nets"),
      C("BACKENDS = ('torch', 'cupy')", "custom_cuda_extension", "replace", True, "BACKENDS = ('torch',)",
        "building the cupy-backend neuron fails; " + CUPY_NOTE),
      C("print(f'PyTorch {torch.__version__}, device: {torch.cuda.get_device_name(device)}')", "torch_cuda_api", "replace", True,
        "print(f'PyTorch {torch.__version__}, device: {torch.npu.get_device_name(device)}')",
        "get_device_name initialises CUDA -> raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; frees the NPU caching allocator between configurations"),
  ])

E("sj_tests", "test/test_neuron_backends.py", "device_branch_or_abstraction",
  "SpikingJelly-style pytest consistency tests for neuron backends (CUDA-gated)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only for the added NPU test branches"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "if hasattr(torch, 'npu') and torch.npu.is_available(): DEVICES.append('npu:0')",
        "tests still pass on an NPU host, they just never exercise the NPU"),
      C("@pytest.mark.skipif(not torch.cuda.is_available(), reason='fp16 is only tested on GPUs')", "torch_cuda_api", "replace", False,
        "@pytest.mark.skipif(not torch.npu.is_available(), reason='fp16 is only tested on NPUs')",
        "test silently skipped on NPU"),
      C("net = net.cuda().half()", "tensor_to_device", "replace", False, "net = net.npu().half()",
        "only reached once the skipif is switched to NPU"),
      C("x_seq = torch.rand([4, 2, 32], device='cuda', dtype=torch.half)", "tensor_to_device", "replace", False,
        "x_seq = torch.rand([4, 2, 32], device='npu', dtype=torch.half)", "only reached once the skipif is switched to NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# Spikformer
# ---------------------------------------------------------------------------------------------------------------------

_SF_NOTE = "clock_driven MultiStepLIFNode asserts cupy is importable for backend='cupy'; " + CUPY_NOTE


def _sf(attr, v_th=""):
    return C(f"self.{attr} = MultiStepLIFNode", "custom_cuda_extension", "replace", True,
             f"self.{attr} = MultiStepLIFNode(tau=2.0{v_th}, detach_reset=True, backend='torch')", _SF_NOTE)


_sf_changes = [_sf("fc1_lif"), _sf("fc2_lif"), _sf("q_lif"), _sf("k_lif"), _sf("v_lif"),
               _sf("attn_lif", ", v_threshold=0.5"), _sf("proj_lif"), _sf("proj_lif0"), _sf("proj_lif1"),
               _sf("proj_lif2"), _sf("proj_lif3"), _sf("rpe_lif")]

E("spikformer_model", "imagenet/model.py", "explicit_replacement",
  "Spikformer imagenet/model.py (SPS + SSA blocks built from MultiStepLIFNode(backend='cupy'))",
  _sf_changes)

E("spikformer_train", "imagenet/train.py", "explicit_replacement",
  "Spikformer imagenet/train.py (timm train.py fork: apex/native AMP, torch.distributed.launch, nccl, .cuda())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("args.prefetcher = not args.no_prefetcher", "tensor_to_device", "replace", False,
        "args.prefetcher = False  # timm 0.5.x PrefetchLoader hard-codes .cuda()/torch.cuda.Stream",
        "unconfirmed (from timm source, not in knowledge): timm 0.5.4 PrefetchLoader and its RandomErasing use CUDA directly"),
      C("args.device = 'cuda:0'", "device_type", "replace", True, "args.device = 'npu:0'", "device string"),
      C("args.device = 'cuda:%d' % args.local_rank", "device_type", "replace", True,
        "args.device = 'npu:%d' % args.local_rank", "device string"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "fails on CPU-build torch"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable; HCCL on Ascend"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA"),
      C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True, "amp_autocast = torch.npu.amp.autocast",
        "cuda autocast silently disabled without CUDA"),
      C("loss_scaler = NativeScaler()", "amp", "replace", False,
        "loss_scaler = NativeScaler(); loss_scaler._scaler = torch.npu.amp.GradScaler()",
        "unconfirmed: timm's NativeScaler builds torch.cuda.amp.GradScaler internally, which disables itself on an NPU host (fp16 without loss scaling)"),
      C("train_loss_fn = SoftTargetCrossEntropy().cuda()", "tensor_to_device", "replace", False,
        "train_loss_fn = SoftTargetCrossEntropy().npu()",
        "loss module has no parameters/buffers, so Module.cuda() never touches CUDA (no-op); edited for consistency"),
      C("train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).cuda()", "tensor_to_device", "replace", False,
        "train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).npu()", "parameterless module: .cuda() is a no-op"),
      C("train_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "train_loss_fn = nn.CrossEntropyLoss().npu()", "weight=None buffer is skipped: .cuda() is a no-op"),
      C("validate_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "validate_loss_fn = nn.CrossEntropyLoss().npu()", "weight=None buffer is skipped: .cuda() is a no-op"),
      C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "input, target = input.npu(), target.npu()", "Tensor.cuda() fails; this --no-prefetcher path is the one that has to work once the CUDA-only timm prefetcher is off"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises 'Torch not compiled with CUDA enabled'"),
      C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "Tensor.cuda() fails"),
      C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "Tensor.cuda() fails"),
      C("torch.cuda.synchronize()  # make the timing", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make the timing below include the last forward pass", "raises without CUDA"),
  ])

E("dvs_yaml", "configs/cifar10dvs_sew_resnet.yaml", "explicit_replacement",
  "OmegaConf/Hydra-style experiment YAML of a SpikingJelly-based DVS benchmark repo (device, cupy backend, nccl)",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0", "consumed as torch.device(cfg.device)"),
      C("backend: cupy", "custom_cuda_extension", "replace", True,
        "backend: torch             # no cupy on Ascend", CUPY_NOTE),
      C("backend: nccl", "dist_backend", "replace", True, "  backend: hccl", "distributed.enabled is true; NCCL unavailable"),
  ])

E("spikformer_sh", "imagenet/train.sh", "explicit_replacement",
  "Spikformer ImageNet launcher (CUDA_VISIBLE_DEVICES + torch.distributed.launch)",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment must be sourced"),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=8 --master_port 29501 \\",
        "CUDA_VISIBLE_DEVICES is ignored on Ascend"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# SEW-ResNet
# ---------------------------------------------------------------------------------------------------------------------

E("sew_train", "imagenet/train.py", "explicit_replacement",
  "SEW-ResNet imagenet/train.py (torchvision-reference script with spikingjelly.clock_driven, torch.cuda.amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
        "--amp would silently run fp32 (cuda autocast/GradScaler disable themselves)"),
      C("torch.cuda.manual_seed_all(_seed_)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(_seed_)",
        "no-op without CUDA; torch.manual_seed on the line above also seeds the npu device (unconfirmed in knowledge)"),
      C("parser.add_argument('--device', default='cuda', help='device')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', help='device')", "model.to(torch.device('cuda')) fails"),
  ])

E("sew_model", "imagenet/sew_resnet.py", "kernel_rewrite",
  "SEW-ResNet imagenet/sew_resnet.py (multi-step IF neurons from the spikingjelly.cext C++/CUDA extension)",
  [
      C("from spikingjelly.cext import neuron as cext_neuron", "custom_cuda_extension", "replace", True,
        "from spikingjelly.clock_driven import neuron as cext_neuron",
        "spikingjelly.cext is an nvcc-built extension; the pure-torch clock_driven MultiStepIFNode has the same constructor"),
      C("=import time", "import_torch_npu", "npu_only_addition", True, "    import torch_npu",
        "the __main__ self-test moves tensors with .npu()"),
      C("net = sew_resnet50(T=4, connect_f='ADD').cuda()", "tensor_to_device", "replace", True,
        "net = sew_resnet50(T=4, connect_f='ADD').npu()", "self-test: .cuda() fails"),
      C("x = torch.rand([8, 3, 224, 224]).cuda()", "tensor_to_device", "replace", True,
        "x = torch.rand([8, 3, 224, 224]).npu()", "self-test: .cuda() fails"),
      C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish warm-up", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
  ])

E("sew_multinode_sh", "imagenet/run_sew50_2nodes.sh", "explicit_replacement",
  "SEW-ResNet-50 two-node launch script with NCCL/InfiniBand environment",
  [
      C("=set -x", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment must be sourced"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL ignores NCCL_*; without HCCL_SOCKET_IFNAME it picks the first non-docker NIC by name and root-info link setup can fail across nodes"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "no HCCL meaning: HCCL uses the NPU's integrated RoCE NICs, not host IB verbs"),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, "host HCA selection has no effect on HCCL"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug logging only; Ascend plog INFO level"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# snnTorch / Norse
# ---------------------------------------------------------------------------------------------------------------------

E("snntorch_tut5", "examples/tutorial_5_FCN.py", "device_branch_or_abstraction",
  "snnTorch tutorial 5 (FCN on MNIST) as a script, device chosen with torch.cuda.is_available()",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("device = torch.device(\"cuda\") if torch.cuda.is_available() else torch.device(\"cpu\")", "device_type", "add_branch", True,
        "device = torch.device(\"npu\") if torch.npu.is_available() else torch.device(\"cuda\") if torch.cuda.is_available() else torch.device(\"cpu\")",
        "silently trains on the CPU of an NPU host"),
  ])

E("snntorch_tut7", "examples/tutorial_7_neuromorphic_datasets.py", "device_branch_or_abstraction",
  "snnTorch tutorial 7 (tonic N-MNIST, conv SNN) with cuda/mps/cpu selection and fp16 autocast",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("device = torch.device(\"cuda\") if torch.cuda.is_available() else torch.device(\"mps\")", "device_type", "add_branch", True,
        "device = torch.device(\"npu\") if torch.npu.is_available() else torch.device(\"cuda\") if torch.cuda.is_available() else torch.device(\"mps\") if torch.backends.mps.is_available() else torch.device(\"cpu\")",
        "silently falls back to CPU on an NPU host"),
      C("use_amp = (device.type == \"cuda\") and not args.no_amp", "amp", "replace", True,
        "use_amp = (device.type in (\"cuda\", \"npu\")) and not args.no_amp",
        "with device npu AMP would be silently off"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "cuda GradScaler disables itself without CUDA -> fp16 autocast with no loss scaling"),
      C("with torch.autocast(device_type=\"cuda\", dtype=torch.float16, enabled=use_amp):", "amp", "replace", True,
        "with torch.autocast(device_type=\"npu\", dtype=torch.float16, enabled=use_amp):",
        "autocast('cuda') is disabled without CUDA; NPU ops would not be autocast"),
      C("=if device.type == \"cuda\":", "device_type", "replace", False, "if device.type in (\"cuda\", \"npu\"):",
        "peak-memory report only"),
      C("print(f\"peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB\")", "torch_cuda_api", "replace", False,
        "print(f\"peak NPU memory: {torch.npu.max_memory_allocated() / 2 ** 20:.0f} MiB\")", "report only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "end of script, cosmetic"),
  ])

E("norse_mnist", "norse/task/mnist.py", "explicit_replacement",
  "Norse norse/task/mnist.py (absl flags, --device enum cuda/cpu, ConvNet4 + ConstantCurrentLIFEncoder)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script (python -m norse.task.mnist)"),
      C("flags.DEFINE_enum(\"device\", \"cuda\", [\"cpu\", \"cuda\"], \"Device to use by pytorch.\")", "device_type", "replace", True,
        "flags.DEFINE_enum(\"device\", \"npu\", [\"cpu\", \"cuda\", \"npu\"], \"Device to use by pytorch.\")",
        "default cuda fails; the enum also rejects --device npu"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of the seeding below; torch.manual_seed already seeds the npu device (unconfirmed in knowledge)"),
      C("torch.cuda.manual_seed(FLAGS.random_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(FLAGS.random_seed)", "never reached on NPU; seeding covered by torch.manual_seed"),
      C("kwargs = {\"num_workers\": 1, \"pin_memory\": True} if FLAGS.device == \"cuda\" else {}", "device_type", "replace", False,
        "kwargs = {\"num_workers\": 1, \"pin_memory\": True} if FLAGS.device in (\"cuda\", \"npu\") else {}",
        "performance only: without it the NPU run loads data in the main process without pinning"),
  ])

E("norse_threshold", "norse/torch/functional/threshold.py", "explicit_replacement",
  "Norse functional/threshold.py (heaviside + SuperSpike/HeaviErfc/HeaviTanh/HeaviCirc surrogate autograd functions)",
  [
      C("return torch.heaviside(data, torch.zeros_like(data))", "unsupported_op_workaround", "replace", False,
        "return torch.gt(data, 0.0).to(data.dtype)",
        "torch.heaviside is ✘ in Ascend's 2.7.1 list and in mstt's unsupported list and has no NPU kernel; per §3.8 it falls back to CPU (host round-trip in every neuron step); whether it errors instead is unconfirmed"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# SLAYER / lava-dl
# ---------------------------------------------------------------------------------------------------------------------

E("slayer_setup", "slayerPytorch/setup.py", "kernel_rewrite",
  "slayerPytorch setup.py (CUDAExtension slayerCuda / slayerLoihiCuda built with nvcc)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "no nvcc on Ascend; NpuExtension adds torch_npu/ACL include and lib dirs"),
      C("nvcc_flags = ['-O2', '-use_fast_math', '--expt-relaxed-constexpr']", "custom_cuda_extension", "removal", False, None,
        "nvcc-only flags; harmless once no CUDAExtension uses them"),
      C("CUDAExtension('slayerCuda',", "custom_cuda_extension", "replace", True, "NpuExtension('slayerCuda',",
        "CUDAExtension needs nvcc and CUDA headers"),
      C("sources=['src/cuda/slayerKernels.cu'],", "custom_cuda_extension", "replace", True,
        "sources=['src/npu/slayerOps.cpp'],",
        "getSpikes/conv/corr/shift kernels must be rewritten (Ascend C op or torch ops) behind a C++ binding"),
      C("CUDAExtension('slayerLoihiCuda',", "custom_cuda_extension", "replace", True, "NpuExtension('slayerLoihiCuda',",
        "CUDAExtension needs nvcc"),
      C("sources=['src/cuda/slayerLoihiKernels.cu'],", "custom_cuda_extension", "replace", True,
        "sources=['src/npu/slayerLoihiOps.cpp'],", ".cu kernels must be rewritten"),
  ])

E("slayer_py", "slayerPytorch/src/slayer.py", "kernel_rewrite",
  "slayerPytorch src/slayer.py (spikeLayer; autograd functions calling the slayerCuda extension)",
  [
      C("=import slayerCuda", "custom_cuda_extension", "replace", True,
        "from . import slayerOps  # torch / Ascend C implementations of getSpikes, conv, corr, shift",
        "slayerCuda is an nvcc-built extension; import fails on an NPU host"),
      C("oldDevice = torch.cuda.current_device()", "torch_cuda_api", "removal", True, None,
        "unused value, and current_device() raises on CPU-build torch"),
      C("spikes = slayerCuda.getSpikes(", "custom_cuda_extension", "replace", True,
        "spikes = slayerOps.getSpikes(membranePotential.contiguous(), refractoryResponse, threshold, Ts)",
        "CUDA kernel call: spike generation with refractory response"),
      C("psp = slayerCuda.conv(spike.contiguous(), filter, Ts)", "custom_cuda_extension", "replace", True,
        "psp = slayerOps.conv(spike.contiguous(), filter, Ts)", "CUDA temporal convolution kernel"),
      C("gradInput = slayerCuda.corr(gradOutput.contiguous(), filter, Ts)", "custom_cuda_extension", "replace", True,
        "gradInput = slayerOps.corr(gradOutput.contiguous(), filter, Ts)", "CUDA temporal correlation kernel"),
      C("output = slayerCuda.shift(input.contiguous(), delay.data, Ts)", "custom_cuda_extension", "replace", True,
        "output = slayerOps.shift(input.contiguous(), delay.data, Ts)", "CUDA delay-shift kernel"),
      C("outputDiff = slayerCuda.conv(output, diffFilter, 1)", "custom_cuda_extension", "replace", True,
        "outputDiff = slayerOps.conv(output, diffFilter, 1)", "CUDA kernel call in backward"),
      C("return slayerCuda.shift(gradOutput.contiguous(), -delay, Ts), gradDelay, None", "custom_cuda_extension", "replace", True,
        "return slayerOps.shift(gradOutput.contiguous(), -delay, Ts), gradDelay, None", "CUDA kernel call in backward"),
      C("output = slayerCuda.shift(input.contiguous(), delay, Ts)", "custom_cuda_extension", "replace", True,
        "output = slayerOps.shift(input.contiguous(), delay, Ts)", "CUDA kernel call"),
      C("return slayerCuda.shift(gradOutput.contiguous(), -delay, Ts), None, None", "custom_cuda_extension", "replace", True,
        "return slayerOps.shift(gradOutput.contiguous(), -delay, Ts), None, None", "CUDA kernel call in backward"),
  ])

E("lava_dynamics", "src/lava/lib/dl/slayer/neuron/dynamics/leaky_integrator.py", "kernel_rewrite",
  "lava-dl slayer/neuron/dynamics/leaky_integrator.py (JIT torch.utils.cpp_extension.load of a .cu kernel, python fallback)",
  [
      C("Accelerated.module = load(", "custom_cuda_extension", "replace", False,
        "Accelerated.module = importlib.import_module('lava_dl_npu_ops').leaky_integrator  # AOT NpuExtension build",
        "never reached on NPU (tensors are not is_cuda, so the python reference loop runs); cpp_extension.load is ✘ on A2/A3 anyway. Porting the kernel is performance-only"),
      C("if input.is_cuda and not _LIDynamics.DEBUG:", "custom_cuda_extension", "replace", False,
        "if (input.is_cuda or input.is_npu) and not _LIDynamics.DEBUG:",
        "NPU tensors silently take the per-time-step python loop: correct but slow"),
      C("if grad_output.is_cuda and not _LIDynamics.DEBUG:", "custom_cuda_extension", "replace", False,
        "if (grad_output.is_cuda or grad_output.is_npu) and not _LIDynamics.DEBUG:", "same, backward"),
  ])

E("lava_nmnist", "tutorials/lava/lib/dl/slayer/nmnist/train.py", "explicit_replacement",
  "lava-dl slayer NMNIST tutorial (CUBA Dense blocks, slayer.utils.Assistant) as a script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "Network().to(cuda) fails"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# SpikeGPT
# ---------------------------------------------------------------------------------------------------------------------

E("spikegpt_model", "src/model.py", "kernel_rewrite",
  "SpikeGPT src/model.py (RWKV WKV CUDA kernel JIT-loaded with cpp_extension.load, LIF activations, FusedAdam)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the ported optimizer line names torch_npu.optim"),
      C("from torch.utils.cpp_extension import load", "custom_cuda_extension", "removal", False, None,
        "unused once the WKV kernel is no longer JIT-built"),
      C("wkv_cuda = load(name=\"wkv\"", "custom_cuda_extension", "replace", True,
        "wkv_cuda = None  # WKV recurrence implemented with torch ops (wkv_forward_torch / wkv_backward_torch)",
        "runs at import time and needs nvcc + .cu sources; cpp_extension.load is ✘ on A2/A3"),
      C("y = torch.empty((B, T, C), device='cuda', memory_format=torch.contiguous_format)", "tensor_to_device", "replace", True,
        "y = torch.empty((B, T, C), device=k.device, memory_format=torch.contiguous_format)", "hard-coded cuda device"),
      C("wkv_cuda.forward(B, T, C, w, u, k, v, y)", "custom_cuda_extension", "replace", True,
        "y = wkv_forward_torch(w, u, k, v)", "CUDA kernel call"),
      C("gw = torch.zeros((B, C), device='cuda').contiguous()", "tensor_to_device", "replace", True,
        "gw = torch.zeros((B, C), device=gy.device).contiguous()", "hard-coded cuda device"),
      C("gu = torch.zeros((B, C), device='cuda').contiguous()", "tensor_to_device", "replace", True,
        "gu = torch.zeros((B, C), device=gy.device).contiguous()", "hard-coded cuda device"),
      C("gk = torch.zeros((B, T, C), device='cuda').contiguous()", "tensor_to_device", "replace", True,
        "gk = torch.zeros((B, T, C), device=gy.device).contiguous()", "hard-coded cuda device"),
      C("gv = torch.zeros((B, T, C), device='cuda').contiguous()", "tensor_to_device", "replace", True,
        "gv = torch.zeros((B, T, C), device=gy.device).contiguous()", "hard-coded cuda device"),
      C("wkv_cuda.backward(B, T, C, w, u, k, v, gy.contiguous(), gw, gu, gk, gv)", "custom_cuda_extension", "replace", True,
        "wkv_backward_torch(w, u, k, v, gy.contiguous(), gw, gu, gk, gv)", "CUDA kernel call"),
      C("wkv_cuda.backward(B, T, C, w, u, k, v, gy.float().contiguous(), gw, gu, gk, gv)", "custom_cuda_extension", "replace", True,
        "wkv_backward_torch(w, u, k, v, gy.float().contiguous(), gw, gu, gk, gv)", "CUDA kernel call"),
      C("return WKV.apply(B, T, C, w.cuda(), u.cuda(), k.cuda(), v.cuda())", "tensor_to_device", "replace", True,
        "return WKV.apply(B, T, C, w, u, k, v)", "Tensor.cuda() fails; parameters already live on the NPU"),
      C("self.lif1 = MultiStepLIFNode(", "custom_cuda_extension", "replace", True,
        "self.lif1 = MultiStepLIFNode(tau=2., surrogate_function=surrogate.ATan(), detach_reset=True, backend='torch')", CUPY_NOTE),
      C("self.lif2 = MultiStepLIFNode(", "custom_cuda_extension", "replace", True,
        "self.lif2 = MultiStepLIFNode(tau=2., surrogate_function=surrogate.ATan(), detach_reset=True, backend='torch')", CUPY_NOTE),
      C("optimizer = FusedAdam(optim_groups", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(optim_groups, lr=train_config.learning_rate, betas=train_config.betas, eps=train_config.eps)",
        "DeepSpeed's CUDA FusedAdam op cannot be built on NPU (knowledge §6); guarded by an ImportError fallback to torch.optim.Adam, and whether DeepSpeed's NPU accelerator supplies its own FusedAdam is unconfirmed"),
  ])

E("spikegpt_trainer", "src/trainer.py", "transfer_to_npu",
  "SpikeGPT src/trainer.py (minGPT-style loop, DataParallel over all visible GPUs)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "transfer_to_npu port: patch torch.cuda.* / .cuda() / 'cuda' strings at import"),
      C("import torch.optim as optim", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu", "enables the automatic cuda->npu mapping for this module and the model"),
      C("self.model = torch.nn.DataParallel(self.model).to(self.device)", "distributed_framework", "replace", True,
        "self.model = self.model.to(self.device)",
        "torch.nn.DataParallel is ✘ on NPU and not handled by transfer_to_npu (§2.8); single device (or DDP) instead"),
      C("self.device = torch.cuda.current_device()", "device_type", "replace", False,
        "self.device = torch.device('npu', torch.cuda.current_device())",
        "an int index is passed positionally to .to(); how transfer_to_npu treats positional ints is unconfirmed, an explicit npu device is safer"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------------------------------

E("energy_tool", "tools/measure_energy.py", "explicit_replacement",
  "SNN energy/latency measurement script (NVML power sampling, CUDA events, SOP counting with SpikingJelly)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("=import pynvml", "torch_cuda_api", "replace", False, "import subprocess",
        "nvidia-ml-py imports fine without a driver; the NVML calls below are what fail"),
      C("pynvml.nvmlInit()", "torch_cuda_api", "replace", True, "self.npu_id = device_index",
        "NVML library not present on an Ascend host; power is read with `npu-smi info -t power -i <id>`"),
      C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)", "torch_cuda_api", "removal", True, None,
        "NVML handle; no NPU equivalent"),
      C("self.samples.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)", "torch_cuda_api", "replace", True,
        "self.samples.append(read_npu_power_w(self.npu_id))  # parses `npu-smi info -t power -i <id>`",
        "NVML power query"),
      C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None, "NVML"),
      C("parser.add_argument('--device', default='cuda:0')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu:0')", "default device string"),
      C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
        "major, minor = 0, 0  # no SM version on Ascend; TF32 switches below do not apply",
        "raises on CPU-build torch; on NPU the capability is only an env-configured stub (TORCH_NPU_DEVICE_CAPABILITY)"),
      C("gpu_name = torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
        "gpu_name = torch.npu.get_device_name(device)", "raises without CUDA"),
      C("functional.set_backend(model, 'cupy', instance=neuron.LIFNode)", "custom_cuda_extension", "replace", False,
        "functional.set_backend(model, 'torch', instance=neuron.LIFNode)", "opt-in --cupy only; " + CUPY_NOTE),
      C("with torch.no_grad(), torch.autocast(device_type='cuda'", "amp", "replace", False,
        "with torch.no_grad(), torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.fp16):",
        "only matters with the opt-in --fp16 (then it is silently ignored)"),
      C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "dummy type without CUDA"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "dummy type without CUDA"),
      C("torch.cuda.synchronize(device)  # wait for the timed", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)  # wait for the timed iterations before reading the events", "raises without CUDA"),
      C("peak_mem_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak_mem_mb = torch.npu.max_memory_allocated(device) / 2 ** 20",
        "the tool's output: would silently report 0 MB (CUDA never initialised)"),
  ])

E("prefetcher", "utils/data_prefetcher.py", "explicit_replacement",
  "apex-ImageNet-style data_prefetcher as copied into SNN ImageNet/DVS training repos (side CUDA stream, record_stream)",
  [
      C("=self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "dummy type without CUDA"),
      C("self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).cuda()", "tensor_to_device", "replace", True,
        "self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1, 3, 1, 1)", "Tensor.cuda() fails"),
      C("self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).cuda()", "tensor_to_device", "replace", True,
        "self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1, 3, 1, 1)", "Tensor.cuda() fails"),
      C("=with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
        "CUDA stream context"),
      C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True)", "Tensor.cuda() fails"),
      C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True)", "Tensor.cuda() fails"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
      C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "input.record_stream(torch.npu.current_stream())", "CUDA stream API"),
      C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target.record_stream(torch.npu.current_stream())", "CUDA stream API"),
      C("torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
        "self.device = device if device is not None else torch.device('npu', torch.npu.current_device())",
        "default device is cuda; current_device() raises without CUDA"),
      C("self.stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream(device=self.device)", "CUDA stream"),
      C("with torch.cuda.stream(self.stream):  # copy on the side stream", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):  # copy on the side stream", "CUDA stream context"),
      C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream API"),
      C("frames.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
        "frames.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
      C("label.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
        "label.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
  ])

# ---------------------------------------------------------------------------------------------------------------------
# Environment files
# ---------------------------------------------------------------------------------------------------------------------

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of an SNN research repo on nvidia/cuda devel image (cupy, cu117 wheels, SLAYER build)",
  [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "base image must carry CANN (toolkit + set_env exports) instead of the CUDA toolkit; image name is plausible, not verified"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a non-existent CUDA toolkit; unused once nothing builds with nvcc"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "CUDA SASS targets; no meaning on Ascend"),
      C("RUN pip install --no-cache-dir torch==1.13.1+cu117", "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels; torch_npu needs the matching CPU torch (2.1.0.post10 pairs with torch 2.1.0 / CANN 8.0.0) and has no 1.13 release"),
      C("RUN pip install --no-cache-dir cupy-cuda11x==11.6.0", "custom_cuda_extension", "removal", True, None,
        "no cupy-cuda wheel for aarch64 Ascend hosts, and unusable without CUDA; " + CUPY_NOTE),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read by nvidia-container-runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (normally given at docker run; baking it into the image is unconfirmed)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "nvidia-container-runtime only"),
  ])

E("spikformer_requirements", "requirements.txt", "explicit_replacement",
  "Spikformer requirements.txt (torch 1.10 +cu111 wheels, timm 0.5.4, spikingjelly 0.0.0.0.12, cupy-cuda111)",
  [
      C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "on x86 the CPU torch wheel comes from the cpu index (knowledge §1.1); aarch64 uses plain PyPI"),
      C("torch==1.10.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu111 local version is a CUDA build and torch_npu has no 1.10 release"),
      C("torchvision==0.11.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0"),
      C("timm==0.5.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the NPU adapter itself"),
      C("cupy-cuda111==9.6.0", "custom_cuda_extension", "removal", True, None, CUPY_NOTE),
  ])

E("env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for snnTorch/Norse/tonic tutorials (pytorch + pytorch-cuda from the nvidia channel)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only needed for pytorch-cuda"),
      C("=- pytorch=1.13.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0", "torch_npu has no 1.13 release"),
      C("=- torchvision=0.14.1", "import_torch_npu", "replace", True, "  - torchvision=0.16.0", "must match torch 2.1.0"),
      C("=- pytorch-cuda=11.7", "import_torch_npu", "replace", True, "  - cpuonly",
        "selects the CUDA build of pytorch; torch_npu runs on the CPU build"),
      C("=- tonic==1.2.5", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10", "the NPU adapter"),
      C("=- cupy-cuda11x", "custom_cuda_extension", "removal", True, None, CUPY_NOTE + "; no aarch64 wheel, env creation fails"),
      C("=- nvidia-ml-py==11.525.84", "torch_cuda_api", "removal", False, None, "pure-Python NVML binding installs fine but is useless on Ascend"),
  ])
