# Labels for probe343: OOD detection / open-set recognition (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry script: the ported .npu()/torch.npu calls need torch_npu loaded; the pinned torch "
               "(<2.5.1) has no device-backend autoload")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
PIN_NOTE = ("DataLoader only pins when CUDA is available, so on NPU pinning silently turns off; "
            "performance only (unconfirmed that torch_npu re-enables it without pin_memory_device)")
RVD_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the job is no longer confined to the "
            "chosen card(s) and lands on NPU 0..n")
CKPT_NOTE = ("no map_location: checkpoints saved from GPU tensors fail to deserialize on a host without CUDA "
             "('Attempting to deserialize object on a CUDA device')")
NOOP_SEED = "torch.cuda seeding is silently ignored without CUDA; NPU RNG stays unseeded (reproducibility only)"
NOOP_CACHE = "torch.cuda.empty_cache() is a no-op when CUDA was never initialised; NPU cache not released (perf only)"
NOOP_MODULE = ("Module.cuda() on a module without parameters/buffers touches no tensor, so it is a silent no-op on NPU; "
               "edited for consistency only")
DP_NOTE = "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, msFmkTransplt limitation); use one NPU or DDP+hccl"
FAISS_GPU_NOTE = ("faiss GPU resources/indexes need a CUDA device and there is no Ascend faiss backend in knowledge/; "
                  "fall back to the CPU index")

# ---------------------------------------------------------------- OpenOOD
E("ood_main", "main.py", "explicit_replacement",
  "OpenOOD main.py (config -> launch -> pipeline)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", NOOP_SEED),
      C("print('GPU 0: {}'.format(torch.cuda.get_device_name(0)), flush=True)", "torch_cuda_api", "replace", True,
        "print('NPU 0: {}'.format(torch.npu.get_device_name(0)), flush=True)",
        "get_device_name lazily initialises CUDA and raises on an NPU host (only with OPENOOD_VERBOSE=1)"),
  ])

E("ood_launch", "openood/utils/launch.py", "explicit_replacement",
  "OpenOOD / detectron2 launch.py (mp.spawn + init_process_group)", [
      C("assert torch.cuda.is_available(", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(",
        "torch.cuda.is_available() is False on an NPU host, so every spawned worker dies on the assert"),
      C("backend='NCCL',", "dist_backend", "replace", True, "backend='hccl',",
        "NCCL is not available with torch_npu; the collective backend is HCCL"),
      C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()",
        "torch.cuda.device_count() returns 0 on NPU, so the assert fails"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "raises without CUDA; each rank must bind its own NPU"),
  ])

E("ood_comm", "openood/utils/comm.py", "explicit_replacement",
  "OpenOOD / detectron2 utils/comm.py (all_gather of picklable objects)", [
      C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
        "if dist.get_backend() in ('nccl', 'hccl'):",
        "backend string comparison is not rewritten by anything; with hccl the WORLD group is returned and "
        "_serialize_to_tensor's assert then fails in every comm.gather/all_gather"),
      C("assert backend in ['gloo', 'nccl']", "dist_backend", "replace", False,
        "assert backend in ['gloo', 'nccl', 'hccl']",
        "only reached with an explicit HCCL group once the gloo-group fix above is in; defensive"),
      C("device = torch.device('cpu' if backend == 'gloo' else 'cuda')", "device_type", "replace", False,
        "device = torch.device('cpu' if backend == 'gloo' else 'npu')",
        "same: only reached with a non-gloo group after the fix above"),
  ])

E("ood_evaluator", "openood/evaluation_api/evaluator.py", "explicit_replacement",
  "OpenOOD v1.5 evaluation_api/evaluator.py", [
      C("'pin_memory': True,", "pin_memory", "replace", False,
        "'pin_memory': True, 'pin_memory_device': 'npu',", PIN_NOTE),
      C("data = batch['data'].cuda()", "tensor_to_device", "replace", True,
        "data = batch['data'].npu()", ".cuda() raises on an NPU host"),
  ])

E("ood_eval_script", "scripts/eval_ood.py", "explicit_replacement",
  "OpenOOD v1.5 scripts/eval_ood.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", ".cuda() raises on an NPU host"),
      C("with torch.autocast('cuda', dtype=torch.float16, enabled=args.fp16):", "amp", "replace", False,
        "with torch.autocast('npu', dtype=torch.float16, enabled=args.fp16):",
        "autocast('cuda') without CUDA warns and disables itself: runs in fp32 (perf only, results stay valid)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
      C("torch.cuda.max_memory_allocated() / 1024**2))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024**2))",
        "returns 0 when CUDA was never initialised: wrong log line, nothing breaks"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
  ])

E("ood_knn_pp", "openood/postprocessors/knn_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/knn_postprocessor.py with a faiss-gpu index option", [
      C("data = batch['data'].cuda()", "tensor_to_device", "replace", True,
        "data = batch['data'].npu()", ".cuda() raises on an NPU host"),
      C("=if self.use_gpu_index:", "unsupported_op_workaround", "replace", True,
        "if self.use_gpu_index and faiss.get_num_gpus() > 0:",
        "the shipped knn.yml turns use_gpu_index on; " + FAISS_GPU_NOTE + ". Guarding here makes the "
        "StandardGpuResources/index_cpu_to_gpu lines below dead, so they are left unlabelled"),
  ])

E("ood_knn_yml", "configs/postprocessors/knn.yml", "explicit_replacement",
  "OpenOOD configs/postprocessors/knn.yml", [
      C("use_gpu_index: True", "unsupported_op_workaround", "replace", False, "use_gpu_index: False",
        "selects the faiss-gpu path; optional once knn_postprocessor.py guards on faiss.get_num_gpus()"),
  ])

E("ood_mds_pp", "openood/postprocessors/mds_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/mds_postprocessor.py (Mahalanobis)", [
      C("data, labels = batch['data'].cuda(), batch['label']", "tensor_to_device", "replace", True,
        "data, labels = batch['data'].npu(), batch['label']", ".cuda() raises on an NPU host"),
      C("self.class_mean = self.class_mean.cuda()", "tensor_to_device", "replace", True,
        "self.class_mean = self.class_mean.npu()", ".cuda() raises on an NPU host"),
      C("self.precision = self.precision.cuda()", "tensor_to_device", "replace", True,
        "self.precision = self.precision.npu()", ".cuda() raises on an NPU host"),
  ])

E("ood_gradnorm_pp", "openood/postprocessors/gradnorm_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/gradnorm_postprocessor.py", [
      C("=fc.cuda()", "tensor_to_device", "replace", True, "fc.npu()", "Linear has parameters: .cuda() raises"),
      C("x = torch.from_numpy(x).float().cuda()", "tensor_to_device", "replace", True,
        "x = torch.from_numpy(x).float().npu()", ".cuda() raises on an NPU host"),
      C("logsoftmax = torch.nn.LogSoftmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "logsoftmax = torch.nn.LogSoftmax(dim=-1).npu()", NOOP_MODULE),
      C("targets = torch.ones((1, self.num_classes)).cuda()", "tensor_to_device", "replace", True,
        "targets = torch.ones((1, self.num_classes)).npu()", ".cuda() raises on an NPU host"),
  ])

E("ood_vos_trainer", "openood/trainers/vos_trainer.py", "explicit_replacement",
  "OpenOOD trainers/vos_trainer.py (virtual outlier synthesis)", [
      C("weight_energy = torch.nn.Linear(config.num_classes, 1).cuda()", "tensor_to_device", "replace", True,
        "weight_energy = torch.nn.Linear(config.num_classes, 1).npu()", ".cuda() raises on an NPU host"),
      C("self.logistic_regression = torch.nn.Linear(1, 2).cuda()", "tensor_to_device", "replace", True,
        "self.logistic_regression = torch.nn.Linear(1, 2).npu()", ".cuda() raises on an NPU host"),
      C("self.config['feature_dim']).cuda()", "tensor_to_device", "replace", True,
        "self.config['feature_dim']).npu()", "per-class feature queue; .cuda() raises"),
      C("eye_matrix = torch.eye(self.config['feature_dim'], device='cuda')", "device_type", "replace", True,
        "eye_matrix = torch.eye(self.config['feature_dim'], device='npu')", "'cuda' device string"),
      C("images = batch['data'].cuda()", "tensor_to_device", "replace", True,
        "images = batch['data'].npu()", ".cuda() raises on an NPU host"),
      C("labels = batch['label'].cuda()", "tensor_to_device", "replace", True,
        "labels = batch['label'].npu()", ".cuda() raises on an NPU host"),
      C("lr_reg_loss = torch.zeros(1).cuda()[0]", "tensor_to_device", "replace", True,
        "lr_reg_loss = torch.zeros(1).npu()[0]", ".cuda() raises on an NPU host"),
      C("(torch.ones(len(output)).cuda(),", "tensor_to_device", "replace", True,
        "(torch.ones(len(output)).npu(),", ".cuda() raises on an NPU host"),
      C("torch.zeros(len(ood_samples)).cuda()), -1)", "tensor_to_device", "replace", True,
        "torch.zeros(len(ood_samples)).npu()), -1)", ".cuda() raises on an NPU host"),
      C("weight_energy = torch.nn.Linear(num_classes, 1).cuda()", "tensor_to_device", "replace", True,
        "weight_energy = torch.nn.Linear(num_classes, 1).npu()", ".cuda() raises on an NPU host"),
  ])

E("ood_npos_trainer", "openood/trainers/npos_trainer.py", "explicit_replacement",
  "OpenOOD trainers/npos_trainer.py (k-NN outlier synthesis on faiss-gpu)", [
      C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
        FAISS_GPU_NOTE),
      C("self.KNN_index = faiss.GpuIndexFlatL2(", "unsupported_op_workaround", "replace", True,
        "self.KNN_index = faiss.IndexFlatL2(self.penultimate_dim)", FAISS_GPU_NOTE),
      C("self.criterion_comp = CompLoss(self.n_cls, temperature=self.temp).cuda()", "tensor_to_device",
        "replace", False, "self.criterion_comp = CompLoss(self.n_cls, temperature=self.temp).npu()", NOOP_MODULE),
      C("=temperature=self.temp).cuda()", "tensor_to_device", "replace", True,
        "temperature=self.temp).npu()", "DispLoss owns the prototypes buffer: .cuda() raises"),
      C("=self.penultimate_dim).cuda()", "tensor_to_device", "replace", True,
        "self.penultimate_dim).npu()", "per-class feature queue; .cuda() raises"),
      C("torch.zeros(self.penultimate_dim).cuda(),", "tensor_to_device", "replace", True,
        "torch.zeros(self.penultimate_dim).npu(),", ".cuda() raises on an NPU host"),
      C("torch.eye(self.penultimate_dim).cuda())", "tensor_to_device", "replace", True,
        "torch.eye(self.penultimate_dim).npu())", ".cuda() raises on an NPU host"),
      C("data = torch.cat([data[0], data[1]], dim=0).cuda()", "tensor_to_device", "replace", True,
        "data = torch.cat([data[0], data[1]], dim=0).npu()", ".cuda() raises on an NPU host"),
      C("target = target.repeat(2).cuda()", "tensor_to_device", "replace", True,
        "target = target.repeat(2).npu()", ".cuda() raises on an NPU host"),
      C("lr_reg_loss = torch.zeros(1).cuda()[0]", "tensor_to_device", "replace", True,
        "lr_reg_loss = torch.zeros(1).npu()[0]", ".cuda() raises on an NPU host"),
      C("(torch.ones(len(energy_score_for_fg)).cuda(),", "tensor_to_device", "replace", True,
        "(torch.ones(len(energy_score_for_fg)).npu(),", ".cuda() raises on an NPU host"),
      C("torch.zeros(len(energy_score_for_bg)).cuda()), -1)", "tensor_to_device", "replace", True,
        "torch.zeros(len(energy_score_for_bg)).npu()), -1)", ".cuda() raises on an NPU host"),
      C("proxy_labels = torch.arange(0, self.n_cls).cuda()", "tensor_to_device", "replace", True,
        "proxy_labels = torch.arange(0, self.n_cls).npu()", ".cuda() raises on an NPU host"),
      C("mask = torch.eq(labels, proxy_labels.T).float().cuda()  # bz, cls", "tensor_to_device", "replace", True,
        "mask = torch.eq(labels, proxy_labels.T).float().npu()  # bz, cls", ".cuda() raises on an NPU host"),
      C("labels = torch.arange(0, num_cls).cuda()", "tensor_to_device", "replace", True,
        "labels = torch.arange(0, num_cls).npu()", ".cuda() raises on an NPU host"),
      C("mask = (1 - torch.eq(labels, labels.T).float()).cuda()", "tensor_to_device", "replace", True,
        "mask = (1 - torch.eq(labels, labels.T).float()).npu()", ".cuda() raises on an NPU host"),
      C("torch.arange(num_cls).view(-1, 1).cuda(),", "tensor_to_device", "replace", True,
        "torch.arange(num_cls).view(-1, 1).npu(),", ".cuda() raises on an NPU host"),
      C("prototypes = torch.zeros(self.n_cls, self.feat_dim).cuda()", "tensor_to_device", "replace", True,
        "prototypes = torch.zeros(self.n_cls, self.feat_dim).npu()", ".cuda() raises on an NPU host"),
      C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "input, target = input.npu(), target.npu()", ".cuda() raises on an NPU host"),
      C("index.add(normed_data[rand_ind])", "unsupported_op_workaround", "replace", True,
        "index.add(normed_data[rand_ind].cpu())",
        "with faiss.contrib.torch_utils a CPU index reads the tensor's data_ptr as host memory: an NPU tensor "
        "must be copied to the host first"),
      C("distance, output_index = index.search(normed_target, K)", "unsupported_op_workaround", "replace", True,
        "distance, output_index = index.search(normed_target.cpu(), K)",
        "same faiss/torch interop: query must be a host tensor for the CPU index"),
      C("distance, _ = index.search(normed_target, K)", "unsupported_op_workaround", "replace", True,
        "distance, _ = index.search(normed_target.cpu(), K)",
        "same faiss/torch interop: query must be a host tensor for the CPU index"),
      C("negative_sample_cov = cov_mat * negative_samples.cuda().repeat(pic_nums, 1)", "tensor_to_device",
        "replace", True, "negative_sample_cov = cov_mat * negative_samples.npu().repeat(pic_nums, 1)",
        ".cuda() raises on an NPU host"),
  ])

E("ood_net_utils", "openood/networks/utils.py", "explicit_replacement",
  "OpenOOD networks/utils.py get_network()", [
      C("subnet.load_state_dict(torch.load(checkpoint),", "device_type", "replace", True,
        "subnet.load_state_dict(torch.load(checkpoint, map_location='cpu'),", CKPT_NOTE),
      C("net.load_state_dict(torch.load(network_config.checkpoint),", "device_type", "replace", True,
        "net.load_state_dict(torch.load(network_config.checkpoint, map_location='cpu'),", CKPT_NOTE),
      C("loaded_pth = torch.load(network_config.checkpoint)", "device_type", "replace", True,
        "loaded_pth = torch.load(network_config.checkpoint, map_location='cpu')", CKPT_NOTE),
      C("=subnet.cuda(),", "tensor_to_device", "replace", True, "subnet.npu(),",
        ".cuda() raises on an NPU host (DDP wraps the module already on its device)"),
      C("=net.cuda(),", "tensor_to_device", "replace", True, "net.npu(),",
        ".cuda() raises on an NPU host (DDP wraps the module already on its device)"),
      C("=subnet.cuda()", "tensor_to_device", "replace", True, "subnet.npu()", ".cuda() raises on an NPU host"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", ".cuda() raises on an NPU host"),
  ])

E("ood_train_sh", "scripts/basics/cifar10/train_cifar10.sh", "explicit_replacement",
  "OpenOOD scripts/basics/cifar10/train_cifar10.sh", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or torch_npu cannot load its libraries"),
      C("export CUDA_VISIBLE_DEVICES=2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=2,3",
        RVD_NOTE),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_DEBUG is ignored by HCCL; CANN logging is set through ASCEND_GLOBAL_LOG_LEVEL (debug only)"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob, silently ignored by HCCL"),
      C("CUDA_VISIBLE_DEVICES=2 python scripts/eval_ood.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=2 python scripts/eval_ood.py \\", RVD_NOTE),
  ])

E("ood_setup", "setup.py", "explicit_replacement",
  "OpenOOD setup.py", [
      C("'torch>=1.13.1',", "import_torch_npu", "npu_only_addition", False,
        "'torch-npu',  # must match the torch version and the installed CANN",
        "torch-npu is normally installed by hand next to CANN; listing it in install_requires is optional"),
      C("'faiss-gpu>=1.7.2',  # modify to faiss-cpu>=1.7.2 for cpu-only", "unsupported_op_workaround", "replace",
        True, "'faiss-cpu>=1.7.2',",
        "faiss-gpu wheels are x86_64+CUDA builds; pip install fails on aarch64 Ascend hosts "
        "(not in knowledge/: from faiss packaging)"),
  ])

E("ood_dockerfile", "Dockerfile", "explicit_replacement",
  "OpenOOD-style CUDA development Dockerfile", [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; an NPU image needs CANN (image tag plausible, not verified)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES, usually "
        "given at docker run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime knob, ignored on Ascend"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "only used when building CUDA extensions; nothing here builds one"),
      C("RUN pip install torch==1.13.1+cu117 torchvision==0.14.1+cu117 \\", "device_type", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 \\",
        "+cu117 wheels are CUDA builds; torch_npu pairs with the plain (CPU) torch of the same version"),
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; x86 hosts take torch from the CPU index, aarch64 from PyPI"),
      C("RUN pip install faiss-gpu==1.7.2 Cython==0.29.33 && \\", "unsupported_op_workaround", "replace", True,
        "RUN pip install faiss-cpu==1.7.2 Cython==0.29.33 && \\",
        "faiss-gpu is a CUDA/x86_64 package (not in knowledge/)"),
      C("pip install libmr==0.1.9", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post17",
        "torch_npu wheel matching torch 2.1.0 and CANN 8.3.RC1 (compatibility table)"),
  ])

# ---------------------------------------------------------------- deep_Mahalanobis_detector
E("maha_lib", "lib_generation.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector lib_generation.py", [
      C("data = test_clean_data[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
        "data = test_clean_data[total : total + batch_size].npu()", ".cuda() raises on an NPU host"),
      C("adv_data = test_adv_data[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
        "adv_data = test_adv_data[total : total + batch_size].npu()", ".cuda() raises on an NPU host"),
      C("noisy_data = test_noisy_data[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
        "noisy_data = test_noisy_data[total : total + batch_size].npu()", ".cuda() raises on an NPU host"),
      C("target = test_label[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
        "target = test_label[total : total + batch_size].npu()", ".cuda() raises on an NPU host"),
      C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()",
        ".cuda() raises on an NPU host"),
      C("equal_flag = pred.eq(target.cuda()).cpu()", "tensor_to_device", "replace", True,
        "equal_flag = pred.eq(target.npu()).cpu()", ".cuda() raises on an NPU host"),
      C("temp_list = torch.Tensor(num_classes, int(num_feature)).cuda()", "tensor_to_device", "replace", True,
        "temp_list = torch.Tensor(num_classes, int(num_feature)).npu()", ".cuda() raises on an NPU host"),
      C("temp_precision = torch.from_numpy(temp_precision).float().cuda()", "tensor_to_device", "replace", True,
        "temp_precision = torch.from_numpy(temp_precision).float().npu()", ".cuda() raises on an NPU host"),
      C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "data, target = data.npu(), target.npu()", ".cuda() raises on an NPU host"),
      C("gradient.index_copy_(1, torch.LongTensor([0]).cuda(), gradient.index_select(1, torch.LongTensor([0]).cuda()) / (63.0/255.0))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([0]).npu(), gradient.index_select(1, torch.LongTensor([0]).npu()) / (63.0/255.0))",
        "index tensors created with .cuda(); index_copy is supported on NPU for fp32"),
      C("gradient.index_copy_(1, torch.LongTensor([1]).cuda(), gradient.index_select(1, torch.LongTensor([1]).cuda()) / (62.1/255.0))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([1]).npu(), gradient.index_select(1, torch.LongTensor([1]).npu()) / (62.1/255.0))",
        ".cuda() raises on an NPU host"),
      C("gradient.index_copy_(1, torch.LongTensor([2]).cuda(), gradient.index_select(1, torch.LongTensor([2]).cuda()) / (66.7/255.0))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([2]).npu(), gradient.index_select(1, torch.LongTensor([2]).npu()) / (66.7/255.0))",
        ".cuda() raises on an NPU host"),
      C("gradient.index_copy_(1, torch.LongTensor([0]).cuda(), gradient.index_select(1, torch.LongTensor([0]).cuda()) / (0.2023))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([0]).npu(), gradient.index_select(1, torch.LongTensor([0]).npu()) / (0.2023))",
        ".cuda() raises on an NPU host"),
      C("gradient.index_copy_(1, torch.LongTensor([1]).cuda(), gradient.index_select(1, torch.LongTensor([1]).cuda()) / (0.1994))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([1]).npu(), gradient.index_select(1, torch.LongTensor([1]).npu()) / (0.1994))",
        ".cuda() raises on an NPU host"),
      C("gradient.index_copy_(1, torch.LongTensor([2]).cuda(), gradient.index_select(1, torch.LongTensor([2]).cuda()) / (0.2010))",
        "tensor_to_device", "replace", True,
        "gradient.index_copy_(1, torch.LongTensor([2]).npu(), gradient.index_select(1, torch.LongTensor([2]).npu()) / (0.2010))",
        ".cuda() raises on an NPU host"),
      C("data = Variable(data.cuda(), requires_grad = True)", "tensor_to_device", "replace", True,
        "data = Variable(data.npu(), requires_grad = True)", ".cuda() raises on an NPU host"),
  ])

E("maha_generate", "OOD_Generate_Mahalanobis.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector OOD_Generate_Mahalanobis.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(0)", NOOP_SEED),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("model.load_state_dict(torch.load(pre_trained_net, map_location = \"cuda:\" + str(args.gpu)))",
        "device_type", "replace", True,
        "model.load_state_dict(torch.load(pre_trained_net, map_location = \"npu:\" + str(args.gpu)))",
        "'cuda:N' map_location cannot be honoured without CUDA"),
      C("model = torch.load(pre_trained_net, map_location = \"cuda:\" + str(args.gpu))", "device_type", "replace",
        True, "model = torch.load(pre_trained_net, map_location = \"npu:\" + str(args.gpu))",
        "'cuda:N' map_location cannot be honoured without CUDA"),
      C("state_dict = torch.load(pre_trained_net, map_location = \"cuda:\" + str(args.gpu))", "device_type",
        "replace", True, "state_dict = torch.load(pre_trained_net, map_location = \"npu:\" + str(args.gpu))",
        "'cuda:N' map_location cannot be honoured without CUDA"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises on an NPU host"),
      C("temp_x = torch.rand(2,3,32,32).cuda()", "tensor_to_device", "replace", True,
        "temp_x = torch.rand(2,3,32,32).npu()", ".cuda() raises on an NPU host"),
  ])

# ---------------------------------------------------------------- ODIN
E("odin_caldata", "code/calData.py", "explicit_replacement",
  "facebookresearch/odin code/calData.py", [
      C("=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)", "tensor_to_device", "replace", True,
        "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad = True)", ".cuda(i) raises on an NPU host"),
      C("=labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))", "tensor_to_device", "replace",
        True, "labels = Variable(torch.LongTensor([maxIndexTemp]).npu(CUDA_DEVICE))", ".cuda(i) raises"),
      C("inputsOut = Variable(imagesOut.cuda(CUDA_DEVICE), requires_grad = True)", "tensor_to_device", "replace",
        True, "inputsOut = Variable(imagesOut.npu(CUDA_DEVICE), requires_grad = True)", ".cuda(i) raises"),
      C("labelsOut = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))", "tensor_to_device", "replace",
        True, "labelsOut = Variable(torch.LongTensor([maxIndexTemp]).npu(CUDA_DEVICE))", ".cuda(i) raises"),
      C("=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)", "tensor_to_device", "replace", True,
        "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)", ".cuda(i) raises"),
      C("labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE), requires_grad=False)",
        "tensor_to_device", "replace", True,
        "labels = Variable(torch.LongTensor([maxIndexTemp]).npu(CUDA_DEVICE), requires_grad=False)",
        ".cuda(i) raises"),
      C("gaussInputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)", "tensor_to_device", "replace",
        True, "gaussInputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)", ".cuda(i) raises"),
      C("gaussLabels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))", "tensor_to_device",
        "replace", True, "gaussLabels = Variable(torch.LongTensor([maxIndexTemp]).npu(CUDA_DEVICE))",
        ".cuda(i) raises"),
  ])

# ---------------------------------------------------------------- energy_ood
E("energy_train", "CIFAR/train.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/train.py (energy fine-tuning with outlier exposure)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("train_loader_in = torch.utils.data.DataLoader(train_data_in", "pin_memory", "replace", False,
        "train_loader_in = torch.utils.data.DataLoader(train_data_in, batch_size=args.batch_size, shuffle=True, "
        "num_workers=args.prefetch, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("train_loader_out = torch.utils.data.DataLoader(ood_data", "pin_memory", "replace", False,
        "train_loader_out = torch.utils.data.DataLoader(ood_data, batch_size=args.oe_batch_size, shuffle=False, "
        "num_workers=args.prefetch, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("=num_workers=args.prefetch, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=args.prefetch, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("net.load_state_dict(torch.load(model_name))", "device_type", "replace", True,
        "net.load_state_dict(torch.load(model_name, map_location='cpu'))", CKPT_NOTE),
      C("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))", "unsupported_op_workaround",
        "replace", True,
        "net = net  # nn.DataParallel is unsupported on Ascend: single NPU (or DDP + hccl)",
        DP_NOTE + " (only with --ngpu > 1)"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", ".cuda() raises on an NPU host"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", NOOP_SEED),
      C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "data, target = data.npu(), target.npu()", ".cuda() raises on an NPU host"),
      C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", ".cuda() raises"),
      C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", ".cuda() raises"),
  ])

E("energy_test", "CIFAR/test.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/test.py (MSP / energy / ODIN / Mahalanobis scores)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("=num_workers=args.prefetch, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=args.prefetch, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("net.load_state_dict(torch.load(model_name))", "device_type", "replace", True,
        "net.load_state_dict(torch.load(model_name, map_location='cpu'))", CKPT_NOTE),
      C("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))", "unsupported_op_workaround",
        "replace", True,
        "net = net  # nn.DataParallel is unsupported on Ascend: single NPU",
        DP_NOTE + " (only with --ngpu > 1)"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", ".cuda() raises on an NPU host"),
      C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", ".cuda() raises"),
      C("train_loader = torch.utils.data.DataLoader(train_data", "pin_memory", "replace", False,
        "train_loader = torch.utils.data.DataLoader(train_data, batch_size=args.test_bs, shuffle=False, "
        "num_workers=args.prefetch, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("temp_x = temp_x.cuda()", "tensor_to_device", "replace", True, "temp_x = temp_x.npu()", ".cuda() raises"),
  ])

E("energy_run", "CIFAR/run.sh", "explicit_replacement",
  "wetliu/energy_ood CIFAR/run.sh", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or torch_npu cannot load its libraries"),
      C("CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score MSP",
        "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score MSP",
        RVD_NOTE),
      C("CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy",
        "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy",
        RVD_NOTE),
      C("--score M --noise $noise -v", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score M --noise $noise -v",
        RVD_NOTE),
      C("--score Odin --num_to_avg 10 --T $T --noise $noise -v", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name $2 --score Odin --num_to_avg 10 --T $T --noise $noise -v",
        RVD_NOTE),
      C("--model wrn --score ${score} --seed ${seed} \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python train.py ${data_models[$2]:0:-4} --model wrn --score ${score} --seed ${seed} \\",
        RVD_NOTE),
      C("_s${seed}_energy_ft --num_to_avg 10 --score energy", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name ${data_models[$2]}_s${seed}_energy_ft --num_to_avg 10 --score energy",
        RVD_NOTE),
      C("--model wrn --score OE --seed ${seed}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python train.py ${data_models[$2]:0:-4} --model wrn --score OE --seed ${seed}",
        RVD_NOTE),
      C("_s${seed}_oe_tune --num_to_avg 10 --score MSP", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpu python test.py --method_name ${data_models[$2]}_s${seed}_oe_tune --num_to_avg 10 --score MSP",
        RVD_NOTE),
  ])

# ---------------------------------------------------------------- knn-ood
E("knn_run", "run_imagenet.py", "device_branch_or_abstraction",
  "deeplearning-wisc/knn-ood run_imagenet.py (feature cache + faiss KNN)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        RVD_NOTE + "; set before the first NPU call, as here"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", NOOP_SEED),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
        "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
        "without an NPU branch the whole feature extraction silently runs on the CPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
  ])

E("knn_req", "requirements.txt", "explicit_replacement",
  "deeplearning-wisc/knn-ood requirements (CUDA 11.1 pins)", [
      C("-f https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA find-links page; x86 hosts take the CPU wheel, aarch64 plain PyPI"),
      C("torch==1.10.0+cu111", "device_type", "replace", True, "torch==2.1.0",
        "+cu111 is a CUDA build and 1.10 has no torch_npu release in the compatibility table"),
      C("torchvision==0.11.1+cu111", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA build pinned to torch 1.10"),
      C("numpy==1.21.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu wheel matching torch 2.1.0 (added after the torch block)"),
      C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.2",
        "faiss-gpu is a CUDA/x86_64 package (not in knowledge/)"),
      C("pynvml==11.0.0", "unsupported_op_workaround", "removal", False, None,
        "NVML bindings have no NPU counterpart (use npu-smi / torch.npu.utilization); installs fine, unused here"),
  ])

# ---------------------------------------------------------------- ViM
E("vim_extract", "extract_feature_vit.py", "explicit_replacement",
  "haoqiwang/vim extract_feature_vit.py (mmcls ViT features)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("if torch.cuda.get_device_capability(0)[0] >= 8:", "device_capability_check", "replace", True,
        "if torch.npu.is_available():  # no CUDA compute capability on NPU; keep fp32 matmuls exact",
        "get_device_capability initialises CUDA and raises on an NPU host; on NPU it returns None anyway"),
      C("load_checkpoint(model, args.checkpoint, map_location='cuda:0')", "device_type", "replace", True,
        "load_checkpoint(model, args.checkpoint, map_location='cpu')",
        "'cuda:0' map_location cannot be honoured without CUDA"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        ".cuda() raises on an NPU host"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        ".cuda() raises on an NPU host"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.fp16):",
        "CUDA autocast disables itself without CUDA: --fp16 silently runs in fp32"),
  ])

E("vim_bench", "benchmark.py", "device_branch_or_abstraction",
  "haoqiwang/vim benchmark.py (MSP/Energy/ViM/GradNorm/Mahalanobis/KNN baselines)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("parser.add_argument('--gradnorm-device', default='cuda'", "device_type", "replace", True,
        "parser.add_argument('--gradnorm-device', default='npu', help='device for the per-sample GradNorm backward passes')",
        "the default device string is used for every GradNorm run; 'cuda' raises on an NPU host"),
      C("def gradnorm(x, w, b, num_cls=1000, device='cuda'):", "device_type", "replace", False,
        "def gradnorm(x, w, b, num_cls=1000, device='npu'):",
        "default never used: every call passes device=args.gradnorm_device"),
      C("mean = torch.from_numpy(np.array(train_means)).cuda().float()", "tensor_to_device", "replace", True,
        "mean = torch.from_numpy(np.array(train_means)).float().npu()",
        ".cuda() raises; cast to fp32 before the copy since fp64 is poorly supported on NPU"),
      C("prec = torch.from_numpy(ec.precision_).cuda().float()", "tensor_to_device", "replace", True,
        "prec = torch.from_numpy(ec.precision_).float().npu()",
        ".cuda() raises; precision_ is float64, cast before the copy"),
      C("score_id = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in tqdm(torch.from_numpy(feature_id_val).cuda().float())])",
        "tensor_to_device", "replace", True,
        "score_id = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in tqdm(torch.from_numpy(feature_id_val).float().npu())])",
        ".cuda() raises on an NPU host"),
      C("score_ood = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in tqdm(torch.from_numpy(feature_ood).cuda().float())])",
        "tensor_to_device", "replace", True,
        "score_ood = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in tqdm(torch.from_numpy(feature_ood).float().npu())])",
        ".cuda() raises on an NPU host"),
  ])

E("vim_env", "environment.yml", "explicit_replacement",
  "haoqiwang/vim-style conda environment (CUDA 11.3, mmcls 0.x)", [
      C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel is unused once CUDA packages go"),
      C("=- pytorch=1.10.1", "device_type", "removal", True, None,
        "conda CUDA build of torch; torch must come from pip so that torch-npu matches it exactly"),
      C("=- torchvision=0.11.2", "device_type", "removal", True, None,
        "conda torchvision pulls the conda CUDA pytorch back in"),
      C("=- cudatoolkit=11.3", "device_type", "removal", False, None,
        "dead weight without CUDA; unconfirmed whether it even resolves on aarch64"),
      C("=- faiss-gpu=1.7.1", "unsupported_op_workaround", "replace", True, "- faiss-cpu=1.7.1",
        "faiss-gpu needs CUDA (linux-64 only; not in knowledge/)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "torch_npu pin (together with torch==2.1.0 / torchvision==0.16.0 from pip)"),
      C("--find-links https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html", "device_type",
        "replace", False, "# mmcv-full: build from source for the new torch (MMCV_WITH_OPS=1)",
        "cu113/torch1.10 prebuilt ops cannot load against the NPU torch; unconfirmed whether mmcls' ViT path "
        "touches mmcv ops at all"),
  ])

# ---------------------------------------------------------------- ARPL
E("arpl_osr", "osr.py", "device_branch_or_abstraction",
  "iCGY96/ARPL osr.py (open-set recognition driver)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = options['gpu']", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = options['gpu']", RVD_NOTE),
      C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = torch.npu.is_available()",
        "False on an NPU host, so the whole run silently falls back to the CPU path"),
      C("torch.cuda.manual_seed_all(options['seed'])", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(options['seed'])", NOOP_SEED),
      C("net = nn.DataParallel(net).cuda()", "tensor_to_device", "replace", True, "net = net.npu()",
        ".cuda() raises; " + DP_NOTE + " (saved checkpoints lose the 'module.' prefix)"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", True, "criterion = criterion.npu()",
        "ARPLoss owns parameters (reciprocal points, radius): .cuda() raises"),
      C("netG = nn.DataParallel(netG, device_ids=", "tensor_to_device", "replace", True, "netG = netG.npu()",
        ".cuda() raises; " + DP_NOTE),
      C("netD = nn.DataParallel(netD, device_ids=", "tensor_to_device", "replace", True, "netD = netD.npu()",
        ".cuda() raises; " + DP_NOTE),
      C("=fixed_noise.cuda()", "tensor_to_device", "replace", True, "fixed_noise = fixed_noise.npu()",
        "result is discarded (no-op on CUDA) but Tensor.cuda() still raises on an NPU host"),
  ])

E("arpl_train", "core/train.py", "explicit_replacement",
  "iCGY96/ARPL core/train.py (train and train_cs with confusing samples)", [
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
      C("data, labels = data.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
        "data, labels = data.npu(), labels.npu()", ".cuda() raises on an NPU host"),
      C("torch.cuda.empty_cache()  # no-op on the CPU path anyway", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # no-op on the CPU path anyway", NOOP_CACHE),
      C("Tensor = torch.cuda.FloatTensor if options['use_gpu'] else torch.FloatTensor", "torch_cuda_api",
        "replace", True, "Tensor = torch.npu.FloatTensor if options['use_gpu'] else torch.FloatTensor",
        "constructing a torch.cuda.FloatTensor raises without CUDA"),
      C("data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "data = data.npu(non_blocking=True)", ".cuda() raises on an NPU host"),
      C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "labels = labels.npu(non_blocking=True)", ".cuda() raises on an NPU host"),
      C("gan_target = gan_target.cuda()", "tensor_to_device", "replace", True, "gan_target = gan_target.npu()",
        ".cuda() raises on an NPU host"),
      C("noise = torch.FloatTensor(data.size(0), options['nz'], options['ns'], options['ns']).normal_(0, 1).cuda()",
        "tensor_to_device", "replace", True,
        "noise = torch.FloatTensor(data.size(0), options['nz'], options['ns'], options['ns']).normal_(0, 1).npu()",
        "unconditional .cuda() (even with use_gpu False) raises on an NPU host"),
      C("noise = noise.cuda()", "tensor_to_device", "replace", True, "noise = noise.npu()",
        ".cuda() raises on an NPU host"),
      C("x, y = net(fake, True, 1 * torch.ones(data.shape[0], dtype=torch.long).cuda())", "tensor_to_device",
        "replace", True, "x, y = net(fake, True, 1 * torch.ones(data.shape[0], dtype=torch.long).npu())",
        ".cuda() raises on an NPU host"),
      C("x, y = net(data, True, 0 * torch.ones(data.shape[0], dtype=torch.long).cuda())", "tensor_to_device",
        "replace", True, "x, y = net(data, True, 0 * torch.ones(data.shape[0], dtype=torch.long).npu())",
        ".cuda() raises on an NPU host"),
      C("bn_label = 1 * torch.ones(data.shape[0], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "bn_label = 1 * torch.ones(data.shape[0], dtype=torch.long).npu()", ".cuda() raises on an NPU host"),
  ])

E("arpl_loss", "loss/ARPLoss.py", "explicit_replacement",
  "iCGY96/ARPL loss/ARPLoss.py (Dist, ARPLoss, GCPLoss)", [
      C("target = torch.ones(_dis_known.size()).cuda()", "tensor_to_device", "replace", True,
        "target = torch.ones(_dis_known.size()).npu()", ".cuda() raises on an NPU host"),
  ])

# ---------------------------------------------------------------- CIDER / SupCon
E("cider_train", "train_cider.py", "device_branch_or_abstraction",
  "deeplearning-wisc/cider train_cider.py (SupContrast lineage) with torch.cuda.amp", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", NOOP_SEED),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("device = torch.device(\"cuda:{}\".format(args.gpu) if torch.cuda.is_available() else \"cpu\")",
        "device_type", "add_branch", True,
        "device = torch.device(\"npu:{}\".format(args.gpu) if torch.npu.is_available() else "
        "(\"cuda:{}\".format(args.gpu) if torch.cuda.is_available() else \"cpu\"))",
        "without an NPU branch training silently runs on the CPU (and collides with the .cuda() calls in utils)"),
      C("amp_dtype = torch.bfloat16 if args.bf16 and torch.cuda.is_bf16_supported() else torch.float16",
        "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if args.bf16 and torch.npu.is_bf16_supported() else torch.float16",
        "torch.cuda.is_bf16_supported() queries the current CUDA device and raises (with --amp --bf16)"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", True,
        "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "NVIDIA apex (and its SyncBN kernels) is not available on NPU; the guarded import leaves 'apex' "
        "undefined (with --syncBN)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and not args.bf16)",
        "CUDA GradScaler disables itself without CUDA: no loss scaling, fp32 run (perf only)"),
      C("f\"peak mem {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB\")", "torch_cuda_api", "replace",
        False, "f\"peak mem {torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB\")",
        "returns 0 when CUDA was never initialised: wrong log line only"),
      C("input = torch.cat([values[0][0], values[0][1]], dim=0).cuda()", "tensor_to_device", "replace", True,
        "input = torch.cat([values[0][0], values[0][1]], dim=0).npu()", ".cuda() raises (ImageNet-100 path)"),
      C("target = values[1].repeat(2).cuda()", "tensor_to_device", "replace", True,
        "target = values[1].repeat(2).npu()", ".cuda() raises (ImageNet-100 path)"),
      C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype if args.amp else None):", "amp",
        "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp, dtype=amp_dtype if args.amp else None):",
        "CUDA autocast disables itself without CUDA: silently fp32"),
  ])

E("cider_losses", "utils/losses.py", "explicit_replacement",
  "SupContrast losses.py + CIDER CompLoss/DisLoss", [
      C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
        "'cuda' device string"),
      C("if features.is_cuda", "torch_cuda_api", "replace", True, "if features.is_npu",
        "is_cuda is False for NPU tensors, so masks are built on the CPU and the loss hits a device mismatch"),
      C("=device = torch.device('cuda')", "device_type", "replace", True, "device = features.device",
        "'cuda' device string: proxy labels/mask cannot be created"),
      C("prototypes = torch.zeros(self.n_cls, self.feat_dim).cuda()", "tensor_to_device", "replace", True,
        "prototypes = torch.zeros(self.n_cls, self.feat_dim).npu()", ".cuda() raises on an NPU host"),
      C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "input, target = input.npu(), target.npu()", ".cuda() raises on an NPU host"),
  ])

# ---------------------------------------------------------------- GradNorm / MOS
E("gradnorm_test", "test_ood.py", "explicit_replacement",
  "deeplearning-wisc/gradnorm_ood test_ood.py (BiT, MSP/ODIN/Energy/Mahalanobis/GradNorm)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("=num_workers=args.workers, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
      C("out_loader = torch.utils.data.DataLoader(out_set", "pin_memory", "replace", False,
        "out_loader = torch.utils.data.DataLoader(out_set, batch_size=args.batch, shuffle=False, "
        "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
      C("m = torch.nn.Softmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "m = torch.nn.Softmax(dim=-1).npu()", NOOP_MODULE),
      C("=x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", ".cuda() raises on an NPU host"),
      C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "criterion = torch.nn.CrossEntropyLoss().npu()", NOOP_MODULE),
      C("=x = Variable(x.cuda(), requires_grad=True)", "tensor_to_device", "replace", True,
        "x = Variable(x.npu(), requires_grad=True)", ".cuda() raises on an NPU host"),
      C("labels = Variable(torch.LongTensor(maxIndexTemp).cuda())", "tensor_to_device", "replace", True,
        "labels = Variable(torch.LongTensor(maxIndexTemp).npu())", ".cuda() raises on an NPU host"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        ".cuda() raises on an NPU host"),
      C("images = x.cuda()", "tensor_to_device", "replace", True, "images = x.npu()",
        ".cuda() raises on an NPU host"),
      C("logsoftmax = torch.nn.LogSoftmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "logsoftmax = torch.nn.LogSoftmax(dim=-1).npu()", NOOP_MODULE),
      C("inputs = Variable(x.cuda(), requires_grad=True)", "tensor_to_device", "replace", True,
        "inputs = Variable(x.npu(), requires_grad=True)", ".cuda() raises on an NPU host"),
      C("targets = torch.ones((inputs.shape[0], num_classes)).cuda()", "tensor_to_device", "replace", True,
        "targets = torch.ones((inputs.shape[0], num_classes)).npu()", ".cuda() raises on an NPU host"),
      C("sample_mean = [s.cuda() for s in sample_mean]", "tensor_to_device", "replace", True,
        "sample_mean = [s.npu() for s in sample_mean]", ".cuda() raises on an NPU host"),
      C("precision = [p.cuda() for p in precision]", "tensor_to_device", "replace", True,
        "precision = [p.npu() for p in precision]", ".cuda() raises on an NPU host"),
      C("temp_x = Variable(temp_x).cuda()", "tensor_to_device", "replace", True,
        "temp_x = Variable(temp_x).npu()", ".cuda() raises on an NPU host"),
      C("state_dict = torch.load(args.model_path)", "device_type", "replace", True,
        "state_dict = torch.load(args.model_path, map_location='cpu')", CKPT_NOTE),
      C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
        "model = model  # nn.DataParallel is unsupported on Ascend: single NPU", DP_NOTE),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        ".cuda() raises on an NPU host"),
  ])
