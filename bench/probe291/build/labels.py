# Labels for probe291: ML for EDA (DREAMPlace-style placement, CircuitNet routability,
# circuit GNNs with DGL, logic-synthesis RL, timing GNN with torch_scatter).
# One label per upstream line a careful porter would edit for Ascend NPU (torch_npu).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script; the project's pins (torch 1.x / 2.1) predate torch_npu's device autoload (2.5.1+), "
               "so the NPU backend has to be imported explicitly")
AMP_NOTE = ("CUDA autocast/GradScaler disable themselves with a warning when CUDA is absent: AMP is silently lost "
            "(fp32 training), numerically still correct")

# ---------------------------------------------------------------------------
# DREAMPlace-style placer
# ---------------------------------------------------------------------------
E("dreamplace_placer", "dreamplace/Placer.py", "explicit_replacement",
  "DREAMPlace dreamplace/Placer.py (entry point, params.gpu)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('if configure.compile_configurations["CUDA_FOUND"] != "TRUE":', "custom_cuda_extension", "replace", True,
        'if configure.compile_configurations["CUDA_FOUND"] != "TRUE" and configure.compile_configurations.get("NPU_FOUND") != "TRUE":',
        "an Ascend build has no CUDA, so params.gpu=1 exits here; the build-capability check must know about the NPU kernels"),
      C("assert (not params.gpu) or configure.compile_configurations", "custom_cuda_extension", "replace", True,
        "assert (not params.gpu) or configure.compile_configurations[\"CUDA_FOUND\"] == 'TRUE' or configure.compile_configurations.get(\"NPU_FOUND\") == 'TRUE', \\",
        "same CUDA-only build assertion in place(); fires for every GPU run on an NPU build"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():",
        "False on an NPU host: params.gpu is silently reset to 0 and the whole placement runs on CPU"),
      C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device_id)", "initialises CUDA and raises without it"),
      C("torch.cuda.get_device_name(device_id)", "torch_cuda_api", "replace", True,
        'logging.info("using NPU %d: %s" % (device_id, torch.npu.get_device_name(device_id)))',
        "raises without CUDA; torch.npu.get_device_name is the supported counterpart"),
  ])

E("dreamplace_nonlinear", "dreamplace/NonLinearPlace.py", "explicit_replacement",
  "DREAMPlace dreamplace/NonLinearPlace.py (global placement loop, timing with synchronize)", [
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "_sync() helper used around stage timing whenever params.gpu is set; torch.cuda.synchronize raises without CUDA"),
      C("make sure the previous stage has finished before timing", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the previous stage has finished before timing",
        "second, inline synchronize before each global-placement stage"),
  ])

E("dreamplace_basicplace", "dreamplace/BasicPlace.py", "explicit_replacement",
  "DREAMPlace dreamplace/BasicPlace.py (PlaceDataCollection, op construction)", [
      C('self.device = torch.device("cuda" if params.gpu else "cpu")', "device_type", "replace", True,
        'self.device = torch.device("npu" if params.gpu else "cpu")',
        "single device choice that every data tensor and op follows; 'cuda' fails on an NPU host"),
  ])

E("dreamplace_electric_potential", "dreamplace/ops/electric_potential/electric_potential.py", "kernel_rewrite",
  "DREAMPlace dreamplace/ops/electric_potential/electric_potential.py (ePlace density op, _cpp/_cuda)", [
      C("=if pos.is_cuda:", "custom_cuda_extension", "add_branch", True,
        'elif pos.device.type == "npu":  # electric_potential_npu.density_map(...) (Ascend C port)',
        "NPU tensors are not is_cuda, so they fall into the *_cpp kernel, which reads data_ptr() on the host: "
        "crash or garbage. Needs an Ascend C kernel (or an explicit host round trip)"),
      C("=if grad_pos.is_cuda:", "custom_cuda_extension", "add_branch", True,
        'elif grad_pos.device.type == "npu":  # electric_potential_npu.electric_force(...)',
        "backward electric force kernel, same dispatch problem"),
      C("func = electric_potential_cuda.fixed_density_map if pos.is_cuda else", "custom_cuda_extension", "add_branch", True,
        "func = electric_potential_cuda.fixed_density_map if pos.is_cuda else (electric_potential_npu.fixed_density_map if pos.device.type == \"npu\" else electric_potential_cpp.fixed_density_map)",
        "fixed-cell density map kernel selection, same dispatch problem"),
  ])

E("dreamplace_density_potential", "dreamplace/ops/density_potential/density_potential.py", "kernel_rewrite",
  "DREAMPlace dreamplace/ops/density_potential/density_potential.py (NTUPlace3 bell-shaped density, _cpp/_cuda)", [
      C("=if pos.is_cuda:", "custom_cuda_extension", "add_branch", True,
        'elif pos.device.type == "npu":  # density_potential_npu.forward(...)',
        "NPU tensors would reach density_potential_cpp.forward, a host kernel"),
      C("=if grad_pos.is_cuda:", "custom_cuda_extension", "add_branch", True,
        'elif grad_pos.device.type == "npu":  # density_potential_npu.backward(...)',
        "backward dispatch, same problem"),
      C("impl = density_potential_cuda if pos.is_cuda else density_potential_cpp", "custom_cuda_extension", "add_branch", True,
        'impl = density_potential_cuda if pos.is_cuda else (density_potential_npu if pos.device.type == "npu" else density_potential_cpp)',
        "fixed density map dispatch"),
  ])

E("dreamplace_wirelength", "dreamplace/ops/weighted_average_wirelength/weighted_average_wirelength.py", "kernel_rewrite",
  "DREAMPlace weighted_average_wirelength.py (net-by-net / atomic / merged CUDA variants)", [
      C("merged_func = weighted_average_wirelength_cuda_merged.forward if pos.is_cuda else", "custom_cuda_extension", "add_branch", True,
        'merged_func = weighted_average_wirelength_cuda_merged.forward if pos.is_cuda else (weighted_average_wirelength_npu_merged.forward if pos.device.type == "npu" else weighted_average_wirelength_cpp_merged.forward)',
        "on NPU the module's forward takes the non-CUDA branch, i.e. the merged function, which then hands NPU tensors to the host kernel"),
      C("merged_bwd = weighted_average_wirelength_cuda_merged.backward if grad_pos.is_cuda else", "custom_cuda_extension", "add_branch", True,
        'merged_bwd = weighted_average_wirelength_cuda_merged.backward if grad_pos.is_cuda else (weighted_average_wirelength_npu_merged.backward if grad_pos.device.type == "npu" else weighted_average_wirelength_cpp_merged.backward)',
        "backward of the merged kernel, same problem"),
  ])

E("dreamplace_dct", "dreamplace/ops/dct/discrete_spectral_transform.py", "explicit_replacement",
  "DREAMPlace dreamplace/ops/dct/discrete_spectral_transform.py (FFT-based DCT, device-agnostic)", [])

E("dreamplace_op_cmake", "dreamplace/ops/electric_potential/CMakeLists.txt", "kernel_rewrite",
  "DREAMPlace per-op CMakeLists.txt (add_pytorch_extension _cpp / _cuda)", [
      C("=if(TORCH_ENABLE_CUDA)", "custom_cuda_extension", "add_branch", False,
        "if(TORCH_ENABLE_NPU)  # add_pytorch_extension(${TARGET_NAME}_npu src/electric_density_map_npu.cpp src/electric_force_npu.cpp ...)",
        "only needed for an Ascend C rewrite of the kernels; on an NPU host the CUDA block is skipped and the CPU-only build succeeds"),
  ])

E("dreamplace_dockerfile", "Dockerfile", "explicit_replacement",
  "DREAMPlace Dockerfile (pytorch CUDA devel image, cmake with CMAKE_CUDA_FLAGS)", [
      C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-devel", "import_torch_npu", "replace", True,
        "FROM ascendai/pytorch:2.1.0-cann8.0.0-ubuntu22.04",
        "CUDA PyTorch image has no CANN toolkit or torch_npu (and torch 1.13 has no torch_npu release); image tag illustrative, not verified"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "nothing reads it once the CUDA toolchain is gone; harmless leftover"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "nvcc architecture list; meaningless on NPU"),
      C('-DCMAKE_CUDA_FLAGS="-gencode', "custom_cuda_extension", "removal", False, None,
        "ignored when CMake finds no CUDA (CPU-only build); Ascend C kernels would need their own toolchain flags"),
  ])

E("dreamplace_unitest", "unitest/ops/electric_potential_unitest.py", "explicit_replacement",
  "DREAMPlace unitest/ops/electric_potential_unitest.py (CPU vs CUDA op comparison)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.device_count():", "torch_cuda_api", "replace", True, "if torch.npu.device_count():",
        "0 on an NPU host: the device half of the test is silently skipped and the test still passes"),
      C('device=torch.device("cuda"))', "device_type", "replace", True, 'device=torch.device("npu"))',
        "builds the op's tensors on a CUDA device"),
      C("pos = Variable(torch.from_numpy(np.concatenate([xx, yy])).cuda(),", "tensor_to_device", "replace", True,
        "pos = Variable(torch.from_numpy(np.concatenate([xx, yy])).npu(),", "Tensor.cuda() raises without CUDA"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "skipTest on an NPU host: the NPU kernels would never be checked against the CPU reference"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "device of the GPU-vs-CPU comparison"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C('device="cuda")', "device_type", "replace", True, 'device="npu")',
        "runtime benchmark op built on 'cuda'"),
      C("pos_var_cuda = pos_var.cuda()", "tensor_to_device", "replace", True, "pos_var_cuda = pos_var.npu()",
        "variable name may stay; the call must change"),
      C("finish the host-to-device copy", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish the host-to-device copy", "raises without CUDA"),
      C("wait for the last backward kernel", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last backward kernel", "raises without CUDA"),
  ])

E("dreamplace_profile_ops", "benchmarks/profile_ops.py", "explicit_replacement",
  "DREAMPlace-style operator micro-benchmark (CUDA events, NVTX, memory stats, torch.profiler)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on a CUDA-less build"),
      C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.end = torch.npu.Event(enable_timing=True)", "same"),
      C("torch.cuda.nvtx.range_push(self.name)", "torch_cuda_api", "replace", True,
        "self.range_id = torch_npu.npu.mstx.range_start(self.name)",
        "only with --nvtx, then raises (NVTX stub); torch.cuda.nvtx is not redirected, mstx is the NPU counterpart "
        "(exact range_start/range_end signature not checked)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(self.range_id)", "pairs with range_push"),
      C("alloc = torch.cuda.memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 2**20",
        "returns 0 when CUDA was never initialised: wrong number in the report, nothing fails"),
      C("peak = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 2**20", "same, report only"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "warm-up barrier in bench(); raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises"),
      C('results["device"] = torch.cuda.get_device_name(0)', "torch_cuda_api", "replace", True,
        'results["device"] = torch.npu.get_device_name(0)', "raises without CUDA"),
      C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
        "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
        "only with --torch-profiler; the CUDA activity records no NPU kernels (whether it errors on a CUDA-less build is unconfirmed)"),
      C("flush kernels before the profiler stops", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # flush kernels before the profiler stops", "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised; NPU cache simply is not released at exit"),
  ])

# ---------------------------------------------------------------------------
# CircuitNet routability / IR drop
# ---------------------------------------------------------------------------
E("circuitnet_train", "routability_ir_drop_prediction/train.py", "explicit_replacement",
  "CircuitNet routability_ir_drop_prediction/train.py (model.cuda(), --cpu flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed just above should also seed the NPU generator on torch 2.x (unconfirmed)"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() raises without CUDA"),
      C("model = torch.nn.DataParallel(model, device_ids=arg_dict['gpu_ids'])", "unsupported_op_workaround", "replace", True,
        "pass  # nn.DataParallel is not supported on Ascend; multi-card runs need torchrun + DistributedDataParallel",
        "torch.nn.DataParallel is ✘ on every Ascend product (Ascend API list, msFmkTransplt README); reached when more than one id is given"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", AMP_NOTE),
      C("input, target = feature.cuda(non_blocking=True), label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input, target = feature.npu(non_blocking=True), label.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):", AMP_NOTE),
  ])

E("circuitnet_test", "routability_ir_drop_prediction/test.py", "explicit_replacement",
  "CircuitNet routability_ir_drop_prediction/test.py (pretrained weights, .cuda())", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("checkpoint = torch.load(path)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(path, map_location='cpu')",
        "no 'cuda' on the line, but the checkpoints hold CUDA tensors (train.py saves after model.cuda()); "
        "deserialising them without map_location raises when CUDA is unavailable"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "raises without CUDA"),
      C("input, target = feature.cuda(), label.cuda()", "tensor_to_device", "replace", True,
        "input, target = feature.npu(), label.npu()", "raises without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "inference timing barrier; raises without CUDA"),
  ])

E("circuitnet_configs", "routability_ir_drop_prediction/utils/configs.py", "explicit_replacement",
  "CircuitNet utils/configs.py (argparse Parser, --gpu_ids, --cpu)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(i) for i in arg.gpu_ids)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(str(i) for i in arg.gpu_ids)",
        "ignored by the Ascend runtime; because the ids are then remapped to 0..n-1, the job silently runs on the "
        "first NPUs instead of the requested ones"),
  ])

E("circuitnet_models", "routability_ir_drop_prediction/models/gpdl.py", "explicit_replacement",
  "CircuitNet models/gpdl.py + RouteNet (encoder/decoder FCN, device-agnostic)", [])

E("circuitnet_losses", "routability_ir_drop_prediction/utils/losses.py", "device_branch_or_abstraction",
  "CircuitNet utils/losses.py with the pytorch-ssim SSIM loss (is_cuda window move)", [
      C("=if img1.is_cuda:", "device_type", "replace", False, 'if img1.device.type != "cpu":',
        "NPU tensors are not is_cuda, so the Gaussian window is not moved here; window.type_as(img1) on the next "
        "line may already move it via the legacy torch.npu.FloatTensor type string (unconfirmed), so the explicit "
        "device move is the safe port rather than a proven failure"),
      C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
        "window = window.to(img1.device)", "part of the same fix; would raise once the guard admits NPU tensors"),
  ])

# ---------------------------------------------------------------------------
# Congestion prediction (RouteNet/CircuitNet style, DataParallel, AMP)
# ---------------------------------------------------------------------------
E("congestion_train", "congestion/train_congestion.py", "device_branch_or_abstraction",
  "routing-congestion U-Net trainer in the CircuitNet/RouteNet style (setup_device helper, nn.DataParallel, torch.cuda.amp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if len(ids) == 0 or ids[0] < 0 or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if len(ids) == 0 or ids[0] < 0 or not torch.npu.is_available():",
        "False on an NPU host: training silently falls back to CPU"),
      C("torch.cuda.set_device(ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(ids[0])",
        "raises without CUDA"),
      C('return torch.device("cuda:{}".format(ids[0])), ids', "device_type", "replace", True,
        'return torch.device("npu:{}".format(ids[0])), ids', "device string"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "lazy no-op without CUDA; torch.manual_seed above should already cover the NPU generator (unconfirmed)"),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):', "amp", "replace", False,
        'with torch.autocast("npu", dtype=torch.float16, enabled=use_amp):', AMP_NOTE),
      C("num_workers=args.workers, pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
        'num_workers=args.workers, pin_memory=True, pin_memory_device="npu", drop_last=True,',
        "without CUDA the loader silently skips pinning (performance only); pin_memory_device with torch_npu unconfirmed"),
      C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
        'num_workers=args.workers, pin_memory=True, pin_memory_device="npu")', "same, validation loader"),
      C("model = nn.DataParallel(model, device_ids=gpu_ids, output_device=gpu_ids[0])", "unsupported_op_workaround", "replace", True,
        "pass  # nn.DataParallel is not supported on Ascend NPU; use torchrun + DistributedDataParallel",
        "torch.nn.DataParallel is ✘ on Ascend; reached with the 4-id default launch (run_congestion.sh)"),
      C('use_amp = args.amp and device.type == "cuda"', "device_type", "replace", False,
        'use_amp = args.amp and device.type == "npu"',
        "once the device is npu this silently turns AMP off (performance only)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", AMP_NOTE),
      C('x = x.cuda(non_blocking=True) if device.type == "cuda" else x', "tensor_to_device", "replace", True,
        "x = x.to(device, non_blocking=True)",
        "after the device port the guard is False, the batch stays on the CPU while the model is on the NPU"),
      C('y = y.cuda(non_blocking=True) if device.type == "cuda" else y', "tensor_to_device", "replace", True,
        "y = y.to(device, non_blocking=True)", "same for the labels"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):", AMP_NOTE),
      C('mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0', "torch_cuda_api", "replace", False,
        'mem = torch.npu.max_memory_allocated(device) / 2**30 if device.type == "npu" else 0.0',
        "log only: reports 0 GB on NPU"),
  ])

E("congestion_run_sh", "congestion/scripts/run_congestion.sh", "explicit_replacement",
  "shell launcher for the congestion trainer (CUDA_VISIBLE_DEVICES, nvidia-smi)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN libraries must be on the library path before torch_npu can be imported"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "the script passes ids relative to the visible set; with the variable ignored the job uses NPUs 0..n-1 "
        "regardless of the requested ones"),
      C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check", "replace", True,
        "npu-smi info", "nvidia-smi does not exist on an Ascend host; under set -e the script aborts here"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval_congestion.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python eval_congestion.py \\",
        "evaluation is meant to run on the first requested device only"),
  ])

E("congestion_requirements", "congestion/requirements.txt", "explicit_replacement",
  "requirements.txt of the congestion project (cu113 wheel index, NVML)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU build of torch; the cu113 index carries no torch 2.1 wheels, so leaving it is harmless"),
      C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "no torch_npu release for torch 1.12 and no +cu113 wheel for aarch64; torch must equal the torch_npu version"),
      C("=torchvision>=0.13", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend backend itself (2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1 in the compatibility table)"),
      C("nvidia-ml-py3==7.352.0", "unsupported_op_workaround", "removal", False, None,
        "NVML has no Ascend counterpart (npu-smi instead); only the optional tools/watch_gpus.py imports it"),
  ])

# ---------------------------------------------------------------------------
# Circuit GNN (DGL) for QoR prediction
# ---------------------------------------------------------------------------
E("gnn_aig_dataset", "circuit_gnn/data/aig_dataset.py", "device_branch_or_abstraction",
  "DGL AIG dataset for QoR prediction (OpenABC-D style, UVA pinning)", [
      C("g.pin_memory_()", "pin_memory", "replace", False,
        "pass  # graph pinning for UVA is CUDA-only in DGL; keep the graphs in ordinary host memory on NPU",
        "only runs with data.use_uva (switched on in configs/aig_sage.yaml, labelled there); DGL's pin_memory_/UVA "
        "path is CUDA-specific, not covered by the knowledge base (unconfirmed)"),
  ])

E("gnn_train", "circuit_gnn/train.py", "explicit_replacement",
  "DGL GraphSAGE + recipe transformer trainer for logic-synthesis QoR prediction", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('with torch.autocast(device_type="cuda", enabled=amp):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", enabled=amp):', AMP_NOTE),
      C("g = dataset.graphs[gi].to('cuda')", "tensor_to_device", "replace", True,
        "g = dataset.graphs[gi].to('npu')",
        "fails without CUDA; whether DGL can place a graph on an NPU at all is not covered by the knowledge base "
        "(unconfirmed) - if not, the GNN layers must move to plain torch/PyG message passing"),
      C("recipe = torch.ones(1, 20, dtype=torch.long, device='cuda')", "device_type", "replace", True,
        "recipe = torch.ones(1, 20, dtype=torch.long, device='npu')", "device string"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("wait for the timed forwards", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the timed forwards", "raises without CUDA"),
      C('device = torch.device(cfg.get("device", "cuda:0"))', "device_type", "replace", False,
        'device = torch.device(cfg.get("device", "npu:0"))',
        "only the fallback default; the shipped config sets device explicitly (labelled in the YAML)"),
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available())",
        "evaluates False on an NPU host, pinning silently off (performance only; pinning of batched DGL graphs for NPU unconfirmed)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=amp)", AMP_NOTE),
      C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=amp):", AMP_NOTE),
      C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        "time.time() - t0, torch.npu.max_memory_allocated() / 2**20)", "log only: reports 0 MB on NPU"),
  ])

E("gnn_config_yaml", "circuit_gnn/configs/aig_sage.yaml", "explicit_replacement",
  "YAML config of the DGL QoR predictor (device, UVA, AMP)", [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "train.py builds torch.device(cfg['device']) from it"),
      C("use_uva: true", "pin_memory", "replace", False, "use_uva: false",
        "turns on DGL pin_memory_/UVA sampling, a CUDA-only DGL feature; expected to fail on an NPU host but DGL "
        "behaviour is not in the knowledge base (unconfirmed)"),
  ])

E("gnn_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of the circuit-GNN project (pytorch-cuda, dglteam cu118 channel)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "channel only serves the CUDA runtime for pytorch-cuda; harmless once that is gone"),
      C("=- dglteam/label/cu118", "unsupported_op_workaround", "replace", True, "- dglteam",
        "the cu118 DGL build links the CUDA runtime and has no aarch64 package; only the CPU build of DGL fits an Ascend host"),
      C("=- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch_npu 2.1.0.postN requires exactly torch 2.1.0"),
      C("=- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
        "selects the CUDA build of pytorch plus the CUDA runtime; torch_npu runs on the CPU build"),
      C("=- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "0.16.2 pins torch 2.1.2 and conflicts with the torch version torch_npu needs"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "the Ascend backend is only published on PyPI"),
  ])

# ---------------------------------------------------------------------------
# Logic-synthesis RL (DRiLLS-like PPO with ABC)
# ---------------------------------------------------------------------------
E("rl_agent", "logic_synth_rl/agent.py", "device_branch_or_abstraction",
  "PPO agent for ABC synthesis-flow optimisation (DRiLLS-style, get_device helper)", [
      C("if prefer_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if prefer_gpu and torch.npu.is_available():",
        "False on an NPU host: PPO updates silently run on the CPU"),
      C('return torch.device("cuda", gpu_id)', "device_type", "replace", True, 'return torch.device("npu", gpu_id)',
        "device string"),
      C('if self.device.type == "cuda":', "device_type", "replace", True, 'if self.device.type != "cpu":',
        "with the device ported, this guard is False and the rollout tensors stay on the CPU while the network is on the NPU"),
      C("states = states.cuda(self.device, non_blocking=True)", "tensor_to_device", "replace", True,
        "states = states.to(self.device, non_blocking=True)", "Tensor.cuda() with an NPU device fails"),
      C("actions = actions.cuda(self.device, non_blocking=True)", "tensor_to_device", "replace", True,
        "actions = actions.to(self.device, non_blocking=True)", "same"),
      C("old_logp = old_logp.cuda(self.device, non_blocking=True)", "tensor_to_device", "replace", True,
        "old_logp = old_logp.to(self.device, non_blocking=True)", "same"),
      C("adv = adv.cuda(self.device, non_blocking=True)", "tensor_to_device", "replace", True,
        "adv = adv.to(self.device, non_blocking=True)", "same"),
      C("ret = ret.cuda(self.device, non_blocking=True)", "tensor_to_device", "replace", True,
        "ret = ret.to(self.device, non_blocking=True)", "same"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "behind a 'cuda' device check, dead on NPU; releasing the cache between updates is optional"),
  ])

E("rl_abc_env", "logic_synth_rl/abc_env.py", "explicit_replacement",
  "gym-style Berkeley ABC environment (pure CPU)", [])

E("rl_run_parallel", "logic_synth_rl/run_parallel.py", "explicit_replacement",
  "multi-process launcher, one PPO worker per design, GPUs assigned round robin", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
        "every worker uses device index 0 (gpu_id=0), so with the variable ignored all workers pile onto NPU 0; "
        "assumes the Ascend runtime reads it at first device use like CUDA does (unconfirmed for torch_npu import time)"),
      C("num_gpus = 0 if args.no_gpu else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = 0 if args.no_gpu else torch.npu.device_count()",
        "0 on an NPU host: every worker is silently given no device"),
  ])

# ---------------------------------------------------------------------------
# Timing prediction GNN (torch_scatter, DDP)
# ---------------------------------------------------------------------------
SCATTER_NOTE = ("torch_scatter's scatter_max is a compiled op with CPU/CUDA kernels only (scatter_add/scatter_mean are "
                "plain torch code and work); torch.scatter_reduce is ✘ in Ascend's list, index_reduce is ✔ but may "
                "fall back to CPU. torch_scatter internals are from its source, not the knowledge base")
E("timing_model", "timing_gnn/model.py", "explicit_replacement",
  "TimingGCN-style pre-routing timing GNN using torch_scatter (optional fused CUDA kernel)", [
      C("h_max = scatter_max(val, net_src, dim=0, dim_size=x.size(0))[0]", "unsupported_op_workaround", "replace", True,
        "h_max = torch.zeros_like(h_sum).index_reduce_(0, net_src, val, 'amax', include_self=False)", SCATTER_NOTE),
      C("agg, _ = scatter_max(msg, dst, dim=0, dim_size=h.size(0))", "unsupported_op_workaround", "replace", True,
        "agg = torch.zeros_like(h).index_reduce_(0, dst, msg, 'amax', include_self=False)", SCATTER_NOTE),
      C("wns = -scatter_max(-slack, design_id, dim=0, dim_size=num_designs)[0]", "unsupported_op_workaround", "replace", True,
        "wns = -torch.zeros(num_designs, dtype=slack.dtype, device=slack.device).index_reduce_(0, design_id, -slack, 'amax', include_self=False)",
        SCATTER_NOTE),
  ])

E("timing_train_ddp", "timing_gnn/train_ddp.py", "explicit_replacement",
  "torchrun/DDP trainer for the timing GNN (NCCL, bf16 autocast, fused AdamW, torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", timeout=timedelta(minutes=30))', "NCCL is unavailable; HCCL is the NPU backend"),
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() == "hccl":',
        "backend-string comparisons are not rewritten by any tool; under HCCL the metric tensor stays on the CPU "
        "and the all_reduce fails"),
      C("torch.cuda.manual_seed_all(seed + rank)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed + rank)", "lazy no-op without CUDA; torch.manual_seed should already seed the NPU (unconfirmed)"),
      C('with torch.autocast(device_type="cuda", dtype=amp_dtype', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=amp_dtype is not None):', AMP_NOTE),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "device string"),
      C("torch.cuda.nccl.version()", "torch_cuda_api", "replace", True,
        "world, torch.__version__, torch_npu.__version__, \"HCCL\"))",
        "torch.cuda.nccl.version() needs a CUDA/NCCL build of torch and raises on rank 0"),
      C("collate_fn=collate_single, pin_memory=True)", "pin_memory", "replace", False,
        'collate_fn=collate_single, pin_memory=True, pin_memory_device="npu")',
        "pinning silently skipped without CUDA (performance only); pin_memory_device with torch_npu unconfirmed"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "only with --compile; max-autotune autotunes Triton kernels (no CUDA Triton on NPU), NPU Inductor needs "
        "torch_npu >= 2.6 - behaviour with the pinned 2.1 stack unconfirmed"),
      C("weight_decay=1e-5, fused=True)", "fused_optimizer", "replace", False,
        "opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, weight_decay=1e-5)",
        "aten _fused_adamw_ has an NPU kernel in the 2.7.1 op list but not in 2.1.0; torch_npu's NpuFusedAdamW is "
        "the fused NPU optimizer (which path the pinned stack takes is unconfirmed)"),
      C("torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if args.bf16 and torch.npu.is_bf16_supported() else None",
        "queries CUDA device properties and raises without CUDA; the multi-node launcher always passes --bf16"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2**30", "log only: reports 0 GB on NPU"),
  ])

E("timing_setup", "timing_gnn/setup.py", "kernel_rewrite",
  "setup.py building an optional CUDAExtension (nvcc -gencode) for level propagation", [
      C("=CUDAExtension(", "custom_cuda_extension", "replace", False, "NpuExtension(",
        "the kernel is optional: get_extensions() already skips it without CUDA and model.py falls back to PyTorch; "
        "an Ascend C port would build with torch_npu.utils.cpp_extension.NpuExtension"),
  ])

E("timing_requirements", "timing_gnn/requirements.txt", "explicit_replacement",
  "requirements.txt of the timing GNN (cu118 index, PyG cu118 wheels)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "on x86 this index supplies the CUDA build for torch==2.1.0; Ascend installs the CPU build (aarch64 gets the PyPI CPU wheel either way)"),
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend backend; version must match torch exactly"),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "unsupported_op_workaround", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "PyG's cu118 wheel page; the CUDA build of torch-scatter links the CUDA runtime"),
      C("torch-scatter==2.1.2+pt21cu118", "unsupported_op_workaround", "replace", True, "torch-scatter==2.1.2",
        "CPU build (source build on aarch64); its scatter_add/scatter_mean run on NPU tensors, scatter_max is replaced in model.py"),
  ])

E("timing_launch_sh", "timing_gnn/scripts/launch_ddp.sh", "explicit_replacement",
  "multi-node torchrun launcher with NCCL_* environment", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "load CANN before torchrun; placed before `set -u` since set_env.sh extends possibly unset variables (unconfirmed)"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "the default lists all eight devices, so ignoring it changes nothing unless a user narrows it"),
      C("export NCCL_DEBUG=", "env_var", "removal", False, None, "no effect under HCCL"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "ignored by HCCL, which then picks the host NIC by its own rules; HCCL_SOCKET_IFNAME is the counterpart on multi-NIC nodes"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "HCCL uses the NPUs' own RoCE ports; no InfiniBand switch"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "same, HCA selection has no HCCL meaning"),
  ])
