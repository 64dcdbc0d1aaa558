"""Labels for probe473 (ECG / cardiology deep learning, CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit for an explicit torch_npu port.
`required` follows the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# 1. PTB-XL benchmarking (helme/ecg_ptbxl_benchmarking): fastai v1 learner, almost no explicit CUDA
# ---------------------------------------------------------------------------------------------
E("ptbxl_fastai_model", "code/models/fastai_model.py", "explicit_replacement",
  "helme/ecg_ptbxl_benchmarking code/models/fastai_model.py (fastai v1 Learner wrapper for xresnet1d/inception1d/LSTM)", [
    C("from fastai.torch_core import *", "device_type", "npu_only_addition", True,
      "defaults.device = torch.device('npu')",
      "fastai v1 picks defaults.device from torch.cuda.is_available() at import time; on an NPU host it silently "
      "falls back to CPU (DataBunch, Learner.load map_location). Set it explicitly after the torch_core import."),
    C("output_layer_new = nn.Linear(output_layer.in_features, self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "output_layer_new = nn.Linear(output_layer.in_features, self.num_classes).npu()",
      "New classification head for finetuning is moved with .cuda(); fails on a CPU-only torch build."),
])

E("ptbxl_xresnet1d", "code/models/xresnet1d.py", "explicit_replacement",
  "helme/ecg_ptbxl_benchmarking code/models/xresnet1d.py (1-D xresnet model zoo)", [])

E("ptbxl_reproduce", "code/reproduce_results.py", "explicit_replacement",
  "helme/ecg_ptbxl_benchmarking code/reproduce_results.py (entry script running all PTB-XL / ICBEB experiments)", [
    C("from experiments.scp_experiment import SCP_Experiment", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point: torch_npu must be loaded before fastai_model sets defaults.device = torch.device('npu') "
      "(the fastai-v1 era torch versions predate torch_npu autoload, which starts at 2.5.1)."),
])

# ---------------------------------------------------------------------------------------------
# 2. ECG age prediction (antonior92/ecg-age-prediction): --cuda flag, plain device string
# ---------------------------------------------------------------------------------------------
E("ecgage_train", "train.py", "explicit_replacement",
  "antonior92/ecg-age-prediction train.py (ResNet1d age regression on CODE-15%)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; registers the npu device before torch.device('npu:0')."),
    C("device = torch.device('cuda:0' if args.cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if args.cuda else 'cpu')",
      "Device chosen from the --cuda flag; 'cuda:0' fails on the NPU host. The flag name and its help text stay "
      "(CLI compatibility), only the device string changes."),
])

E("ecgage_evaluate", "evaluate.py", "explicit_replacement",
  "antonior92/ecg-age-prediction evaluate.py (batch inference over an hdf5 of tracings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Separate entry script."),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "Unported, inference silently runs on CPU on an NPU host."),
])

E("ecgage_resnet", "resnet.py", "explicit_replacement",
  "antonior92/ecg-age-prediction resnet.py (ResNet1d model)", [])

E("ecgage_dataloader", "dataloader.py", "explicit_replacement",
  "antonior92/ecg-age-prediction dataloader.py (contiguous hdf5 batch iterator)", [])

# ---------------------------------------------------------------------------------------------
# 3. fairseq-signals (Jwoo5/fairseq-signals): ECG foundation / SSL (wav2vec2+CMSC), fairseq heritage
# ---------------------------------------------------------------------------------------------
E("fss_dist_utils", "fairseq_signals/distributed/utils.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals/distributed/utils.py (fairseq distributed init/spawn helpers)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(), cfg.distributed_world_size",
      "distributed_num_procs = min(0, ws) = 0 on an NPU host."),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()",
      "Slurm one-task-per-node path: rank/world size computed as 0."),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.distributed_world_size <= torch.npu.device_count()",
      "Single-node multi-device init asserts against the CUDA device count (0) and aborts."),
    C('but have {torch.cuda.device_count()} available devices"', "torch_cuda_api", "replace", False,
      '), f"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "Assertion message only; would report 0 devices. Cosmetic."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guards a dummy all_reduce that only warms up the communicator; skipping it is harmless with HCCL."),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", True,
      "dist.all_reduce(torch.zeros(1).npu())",
      "Once the guard above is ported this runs on the NPU host; .cuda() raises there."),
    C("if torch.cuda.is_available() and not cfg.common.cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not cfg.common.cpu:",
      "Unported, set_device is skipped and every spawned rank lands on npu:0 (HCCL init then fails / ranks collide)."),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.distributed_training.device_id)",
      "Per-rank device binding."),
    C("=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(),",
      "nprocs of torch.multiprocessing.spawn; 0 on an NPU host, nothing is trained."),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._buffer = torch.npu.ByteTensor(buffer_size)",
      "Device-side gather buffer for the HCCL all_reduce (used at Trainer init to gather the device environments). "
      "ByteTensor is in torch_npu.npu.__all__."),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", "replace", True,
      'if torch.distributed.get_backend(group) == "hccl":',
      "Backend-string comparison: transfer_to_npu does not rewrite these (knowledge 2.4); unported, broadcast_tensors "
      "stages through CPU tensors, which HCCL cannot broadcast."),
    C('dist_device = torch.device("cuda")', "device_type", "replace", True,
      'dist_device = torch.device("npu")',
      "Device used for HCCL broadcasts."),
])

E("fss_configs", "fairseq_signals/dataclass/configs.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals/dataclass/configs.py (fairseq dataclass configs)", [
    C("=default=max(1, torch.cuda.device_count()),",
      "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),",
      "distributed_world_size defaults to all visible devices; on an NPU host it silently becomes 1 and a multi-NPU "
      "node trains on a single device (and infer_init_method never starts the spawn path)."),
    C("default=max(1, torch.cuda.device_count()),  # one process per visible device", "torch_cuda_api", "replace", False,
      "default=max(1, torch.npu.device_count()),  # one process per visible device",
      "distributed_num_procs is recomputed in infer_init_method (ported there) before it is used; the default is inert."),
    C('default="nccl", metadata={"help": "distributed backend"}', "dist_backend", "replace", True,
      'default="hccl", metadata={"help": "distributed backend"}',
      "Process-group backend used by distributed_init."),
])

E("fss_utils", "fairseq_signals/utils/utils.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals/utils/utils.py (fairseq utils: move_to_cuda, clip_grad_norm_, RNG, CudaEnvironment)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = device or torch.npu.current_device()",
      "Trainer._prepare_sample calls move_to_cuda(sample) without a device; the default must be the current NPU. "
      "The function name is kept."),
    C('elif grads[0].device.type == "xla":', "unsupported_op_workaround", "add_branch", False,
      'elif grads[0].device.type in ("xla", "npu"):',
      "Without apex amp_C the norm falls back to device=cpu: every per-parameter norm is copied to host each step. "
      "Keeping the reduction on the NPU is a performance fix only."),
    C("cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "npu_rng_state = torch.npu.get_rng_state()",
      "Unguarded; torch.cuda.get_rng_state() raises on a CPU-only torch build."),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(npu_rng_state)",
      "Pairs with the line above."),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()",
      "CudaEnvironment is built by the Trainer whenever it runs on the accelerator."),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", "replace", True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))',
      "Device properties for the environment banner."),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      'self.major = getattr(prop, "major", None) or 0',
      "NPU device properties only carry name, total_memory, L2_cache_size, cube_core_num, vector_core_num "
      "(2.7.1 API table); major/minor are empty, and the banner formats them with {:2d}."),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      'self.minor = getattr(prop, "minor", None) or 0',
      "Same as major."),
])

E("fss_trainer", "fairseq_signals/trainer.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals/trainer.py (fairseq Trainer)", [
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available() and not cfg.common.cpu and not self.tpu",
      "self.cuda is the 'on accelerator' switch for the whole Trainer; the attribute name is kept."),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      'self.device = torch.device("npu")',
      "Model/criterion device."),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", "replace", True,
      "self._grad_norm_buf = torch.npu.FloatTensor(self.data_parallel_world_size)",
      "fp64 is not supported on the NPU (transfer_to_npu itself maps torch.cuda.DoubleTensor to torch.npu.FloatTensor); "
      "the buffer only holds per-rank grad norms for a consistency check."),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if self.cuda and (torch.npu.get_device_capability(0) or (7, 0))[0] < 7:",
      "Compute-capability hint is CUDA-specific; torch.npu.get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, so [0] would raise once self.cuda is true on the NPU."),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      "if self.cuda and (torch.npu.get_device_capability(0) or (0, 0))[0] >= 7:",
      "Same check on the fp32 path."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "On a CPU-only torch build torch.cuda.empty_cache() is a silent no-op; releasing NPU cache is a memory/perf nicety."),
    C("torch.cuda.empty_cache()  # release cached blocks before retrying the batch", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks before retrying the batch",
      "OOM-retry path; no-op if left, retry is just less likely to succeed."),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0).npu()",
      "fp16 overflow path (common with fp16: true in the CMSC configs); .cuda() raises."),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024",
      "Diagnostic metric; the CUDA call returns 0 when CUDA is not initialised, so gb_free is merely wrong in logs."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Unlike max_memory_allocated this resolves the current CUDA device and raises on a CPU-only torch build; "
      "it runs every update once self.cuda is true."),
    C("torch.cuda.empty_cache()  # periodic defragmentation", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # periodic defragmentation",
      "empty_cache_freq path; silent no-op if left."),
    C("total_norm = total_norm.cuda().float() ** 2", "tensor_to_device", "replace", True,
      "total_norm = total_norm.npu().float() ** 2",
      "Grad-norm aggregation across ranks (legacy_ddp path used by the CMSC configs)."),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", "replace", False,
      'if torch.npu.is_available() and hasattr(torch.npu, "memory_summary"):',
      "OOM diagnostics only."),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for device_idx in range(torch.npu.device_count()):",
      "OOM diagnostics only; range(0) if left."),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", "replace", True,
      "logger.warning(torch.npu.memory_summary(device=device_idx))",
      "With the two lines above ported this loop runs on the NPU host, and torch.cuda.memory_summary would raise "
      "inside the OOM handler, masking the real error."),
])

E("fss_hydra_train", "fairseq_signals_cli/hydra_train.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals_cli/hydra_train.py (fairseq-hydra-train entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Console entry point (fairseq-hydra-train); also inherited by the spawned workers."),
    C("with torch.cuda.profiler.profile():", "torch_cuda_api", "replace", False,
      "with torch_npu.profiler.profile():",
      "Only with common.profile=true (opt-in). torch.cuda.profiler drives cudaProfilerStart; the NPU profiler is the "
      "Ascend counterpart (different output). The nested emit_nvtx() is left for the porter to drop (see README)."),
])

E("fss_adam", "fairseq_signals/optim/adam.py", "explicit_replacement",
  "Jwoo5/fairseq-signals fairseq_signals/optim/adam.py (fairseq Adam with FusedAdam selection)", [
    C("=import torch.optim", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Needed by the NpuFusedAdamW line below (required only because of that optional change)."),
    C("=self._optimizer = Adam(params, **self.optimizer_config)", "fused_optimizer", "replace", False,
      "self._optimizer = torch_npu.optim.NpuFusedAdamW(params, **self.optimizer_config) if torch.npu.is_available() else Adam(params, **self.optimizer_config)",
      "On NPU the apex FusedAdam branch is skipped (torch.cuda.is_available() is False) and fairseq's per-parameter "
      "Python Adam runs. fairseq Adam has decoupled weight decay, so the fused replacement is NpuFusedAdamW, not "
      "NpuFusedAdam. Performance only."),
])

E("fss_cmsc_yaml", "examples/w2v_cmsc/config/pretraining/w2v_cmsc_rlm.yaml", "explicit_replacement",
  "Jwoo5/fairseq-signals examples/w2v_cmsc/config/pretraining/w2v_cmsc_rlm.yaml (Hydra pre-training config)", [])

E("fss_launch", "examples/w2v_cmsc/scripts/pretrain_w2v_cmsc_rlm.sh", "explicit_replacement",
  "user launcher for fairseq-hydra-train W2V+CMSC+RLM pre-training (pattern from fairseq-signals README)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the container/login shell already sources it."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "The mask selects the first four devices, which is also what the spawn would use without it, so leaving it "
      "does not change which NPUs run; ported so the mask is honoured."),
    C('NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      'NUM_GPUS=$(echo "$ASCEND_RT_VISIBLE_DEVICES" | tr \',\' \'\\n\' | wc -l)',
      "With the export renamed, $CUDA_VISIBLE_DEVICES is unbound and set -u aborts the script."),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_capability_check", "replace", True,
      'npu-smi info | tee "$OUTPUT_DIR/npus.txt"',
      "nvidia-smi is absent on the NPU host; with set -e/pipefail the launcher exits before training."),
])

# ---------------------------------------------------------------------------------------------
# 4. EchoNet-Dynamic (echonet/dynamic): echocardiography segmentation (DeepLabV3) + EF regression
# ---------------------------------------------------------------------------------------------
E("echonet_segmentation", "echonet/utils/segmentation.py", "explicit_replacement",
  "echonet/dynamic echonet/utils/segmentation.py (LV segmentation, deeplabv3_resnet50)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Default device; unported the whole run silently trains on CPU."),
    C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(weights, map_location=device)",
      "Released EchoNet weights were saved from CUDA tensors; without map_location deserialisation fails on a host "
      "without CUDA."),
    C('model.load_state_dict(checkpoint["state_dict"])', "unsupported_op_workaround", "replace", True,
      'model.load_state_dict({k[len("module."):] if k.startswith("module.") else k: v for k, v in checkpoint["state_dict"].items()})',
      "nn.DataParallel is unsupported on NPU, so the model is not wrapped (the device.type == 'cuda' branch is not "
      "taken); checkpoints written by the GPU run carry 'module.' prefixes and strict loading fails."),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):",
      "Per-phase peak-memory reset for log.csv; left alone the loop is empty. Diagnostics."),
    C("torch.cuda.reset_peak_memory_stats(i)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(i)",
      "Runs once the loop above iterates over NPUs; the CUDA call raises on a CPU-only torch build."),
    C('pin_memory=(device.type == "cuda"), drop_last', "pin_memory", "replace", False,
      'ds, batch_size=batch_size, num_workers=num_workers, shuffle=True, pin_memory=(device.type == "npu"), drop_last=(phase == "train"))',
      "Pinning silently switched off on NPU; performance only."),
    C("sum(torch.cuda.max_memory_allocated() for i in range(torch.cuda.device_count())),", "torch_cuda_api", "replace", False,
      "sum(torch.npu.max_memory_allocated() for i in range(torch.npu.device_count())),",
      "log.csv memory column; 0 if left. Diagnostics."),
    C("sum(torch.cuda.max_memory_reserved() for i in range(torch.cuda.device_count())),", "torch_cuda_api", "replace", False,
      "sum(torch.npu.max_memory_reserved() for i in range(torch.npu.device_count())),",
      "log.csv memory column; 0 if left. Diagnostics."),
    C('shuffle=False, pin_memory=(device.type == "cuda"))', "pin_memory", "replace", False,
      'batch_size=batch_size, num_workers=num_workers, shuffle=False, pin_memory=(device.type == "npu"))',
      "Test loader; performance only."),
])

E("echonet_video", "echonet/utils/video.py", "explicit_replacement",
  "echonet/dynamic echonet/utils/video.py (EF regression with r2plus1d_18)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Default device."),
    C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(weights, map_location=device)",
      "Same as segmentation: CUDA-saved weights."),
    C('model.load_state_dict(checkpoint["state_dict"])', "unsupported_op_workaround", "replace", True,
      'model.load_state_dict({k[len("module."):] if k.startswith("module.") else k: v for k, v in checkpoint["state_dict"].items()})',
      "DataParallel not used on NPU; strip the 'module.' prefix of GPU-trained checkpoints."),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):",
      "Diagnostics loop."),
    C("torch.cuda.reset_peak_memory_stats(i)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(i)",
      "Raises once the loop iterates."),
    C('pin_memory=(device.type == "cuda"), drop_last', "pin_memory", "replace", False,
      'ds, batch_size=batch_size, num_workers=num_workers, shuffle=True, pin_memory=(device.type == "npu"), drop_last=(phase == "train"))',
      "Performance only."),
    C("sum(torch.cuda.max_memory_allocated() for i in range(torch.cuda.device_count())),", "torch_cuda_api", "replace", False,
      "sum(torch.npu.max_memory_allocated() for i in range(torch.npu.device_count())),",
      "Diagnostics."),
    C("sum(torch.cuda.max_memory_reserved() for i in range(torch.cuda.device_count())),", "torch_cuda_api", "replace", False,
      "sum(torch.npu.max_memory_reserved() for i in range(torch.npu.device_count())),",
      "Diagnostics."),
    C('shuffle=True, pin_memory=(device.type == "cuda"))', "pin_memory", "replace", False,
      'batch_size=batch_size, num_workers=num_workers, shuffle=True, pin_memory=(device.type == "npu"))',
      "Performance only."),
    C('batch_size=1, num_workers=num_workers, shuffle=False, pin_memory=(device.type == "cuda"))', "pin_memory", "replace", False,
      'ds, batch_size=1, num_workers=num_workers, shuffle=False, pin_memory=(device.type == "npu"))',
      "Performance only."),
])

E("echonet_utils_init", "echonet/utils/__init__.py", "explicit_replacement",
  "echonet/dynamic echonet/utils/__init__.py (video I/O, mean/std, bootstrap)", [])

E("echonet_main", "echonet/__main__.py", "explicit_replacement",
  "echonet/dynamic echonet/__main__.py (click command group)", [
    C("=import echonet", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "CLI entry for `echonet segmentation` / `echonet video`."),
])

E("echonet_setup", "setup.py", "explicit_replacement",
  "echonet/dynamic setup.py", [
    C('"torch",', "import_torch_npu", "npu_only_addition", False,
      '"torch_npu",',
      "The torch_npu wheel must match the installed CANN and torch exactly, so it is often installed by hand; "
      "listing it is optional."),
])

# ---------------------------------------------------------------------------------------------
# 5. ST-MEM (bakqui/ST-MEM): ECG foundation model, MAE-style pre-training + fine-tuning
# ---------------------------------------------------------------------------------------------
E("stmem_main_pretrain", "main_pretrain.py", "explicit_replacement",
  "bakqui/ST-MEM main_pretrain.py (MAE-style spatio-temporal masked ECG pre-training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script launched by torchrun."),
])

E("stmem_main_finetune", "main_finetune.py", "explicit_replacement",
  "bakqui/ST-MEM main_downstream.py-style fine-tuning / linear probing on PTB-XL, CPSC2018", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script."),
    C("optimizer = torch.optim.AdamW(param_groups, lr=config['train']['lr'])", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=config['train']['lr'])",
      "msFmkTransplt performance advice (AdamW -> fused); layer-wise lr-decay param groups are kept. Performance only."),
])

E("stmem_engine_pretrain", "engine_pretrain.py", "explicit_replacement",
  "bakqui/ST-MEM engine_pretrain.py (MAE train_one_epoch)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "On an NPU host CUDA autocast is silently disabled: pre-training runs in fp32, the configured mixed precision "
      "(and the memory budget tuned for it, batch 256) is lost."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Raises on a CPU-only torch build."),
])

E("stmem_engine_downstream", "engine_downstream.py", "explicit_replacement",
  "bakqui/ST-MEM engine_downstream.py (fine-tuning loop and multi-crop evaluation)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "Same as pre-training: AMP silently off otherwise."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Raises on a CPU-only torch build."),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=use_amp):",
      "Multi-crop evaluation; autocast('cuda') is disabled with a warning when CUDA is absent."),
    C("with torch.autocast('cuda', dtype=torch.float16, enabled=use_amp):", "amp", "replace", True,
      "with torch.autocast('npu', dtype=torch.float16, enabled=use_amp):",
      "Single-crop evaluation."),
])

E("stmem_misc", "util/misc.py", "explicit_replacement",
  "bakqui/ST-MEM util/misc.py (MAE/DeiT misc: SmoothedValue, MetricLogger, init_distributed_mode, NativeScaler)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Cross-rank meter sync over HCCL; 'cuda' raises. fp64 kept (see README: unsure whether HCCL reduces fp64)."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Adds the 'max mem' column to the progress line; diagnostics."),
    C("if torch.cuda.is_available():  # log peak memory too", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # log peak memory too",
      "Diagnostics."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "Returns 0 when CUDA was never initialised; no failure, wrong number in the log."),
    C("args['gpu'] = args['rank'] % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args['gpu'] = args['rank'] % torch.npu.device_count()",
      "Slurm path: modulo by zero."),
    C("torch.cuda.set_device(args['gpu'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args['gpu'])",
      "Per-rank device binding under torchrun."),
    C("args['dist_backend'] = 'nccl'", "dist_backend", "replace", True,
      "args['dist_backend'] = 'hccl'",
      "Hard-coded backend (overrides the YAML value)."),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "With autocast ported to fp16 on the NPU, a CUDA GradScaler disables itself on the NPU host and fp16 "
      "gradients are applied unscaled (underflow)."),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()",
      "Loss all-reduce for logging each step (multi-device runs)."),
])

E("stmem_vit", "models/encoder/st_mem_vit.py", "explicit_replacement",
  "bakqui/ST-MEM models/encoder/st_mem_vit.py (ViT encoder with lead/SEP embeddings)", [])

E("stmem_yaml", "configs/pretrain/st_mem.yaml", "explicit_replacement",
  "bakqui/ST-MEM configs/pretrain/st_mem.yaml", [
    C("device: cuda", "device_type", "replace", True,
      "device: npu",
      "main_pretrain builds torch.device(config['device']) from this value."),
])

E("stmem_run_pretrain", "run_pretrain.sh", "explicit_replacement",
  "bakqui/ST-MEM run_pretrain.sh (torchrun launcher with --gpus ids)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the container/login shell already sources it."),
    C("CUDA_VISIBLE_DEVICES=$GPU_IDS \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS \\",
      "User-selected device ids (e.g. --gpus 4,5,6,7); unported, LOCAL_RANK 0..3 binds to NPUs 0..3 instead."),
])

E("stmem_requirements", "requirements.txt", "explicit_replacement",
  "bakqui/ST-MEM requirements.txt", [
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", False,
      "torch-npu==2.0.1.post1",
      "torch_npu wheel paired with torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0, now EOL). Usually installed by hand to "
      "match CANN, so optional here."),
])

# ---------------------------------------------------------------------------------------------
# 6. S4 for ECG (tmehari/ssm_ecg): state-space models, optional CUDA Cauchy kernel, Lightning trainer
# ---------------------------------------------------------------------------------------------
E("ssm_s4", "code/clinical_ts/s4_model.py", "explicit_replacement",
  "tmehari/ssm_ecg code/clinical_ts/s4_model.py (standalone S4 layer from state-spaces, ECG variant)", [
    C("=elif has_pykeops:", "unsupported_op_workaround", "replace", False,
      "elif has_pykeops and v.device.type == 'cuda':",
      "The pykeops path calls Genred with backend='GPU'; with NPU tensors it cannot work, so fall through to the "
      "pure-PyTorch Cauchy kernel. Unconfirmed in the knowledge base (pykeops is not covered); matters only when "
      "pykeops is installed."),
])

E("ssm_main", "code/main_ecg_lightning.py", "explicit_replacement",
  "tmehari/ssm_ecg code/main_ecg_lightning.py (PyTorch Lightning training script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script."),
    C('print("Training on", torch.cuda.device_count(), "GPU(s):", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", True,
      'print("Training on", torch.npu.device_count(), "NPU(s):", torch.npu.get_device_name(0))',
      "get_device_name(0) raises on a CPU-only torch build (default --gpus 1 takes this branch)."),
    C("gpus=hparams.gpus,", "device_type", "replace", True,
      "accelerator='npu', devices=hparams.gpus,",
      "Lightning raises when gpus>0 and CUDA is absent. The ported form assumes a Lightning build/plugin that "
      "registers an 'npu' accelerator, which the knowledge base does not confirm."),
    C("strategy=hparams.distributed_backend,", "dist_backend", "replace", False,
      "strategy=DDPStrategy(process_group_backend='hccl') if hparams.distributed_backend == 'ddp' else hparams.distributed_backend,",
      "Only with --distributed-backend ddp; Lightning's default backend for a non-CUDA root device is gloo. "
      "Unconfirmed for NPU."),
])

E("ssm_cauchy_setup", "code/extensions/cauchy/setup.py", "explicit_replacement",
  "tmehari/ssm_ecg (state-spaces) extensions/cauchy/setup.py (optional CUDAExtension for the Cauchy kernel)", [])
