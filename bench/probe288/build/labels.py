# Labels for probe288: vision-and-language navigation / embodied instruction following
# (VLN-CE, habitat-baselines DD-PPO, R2R-EnvDrop / Recurrent VLN-BERT, speaker-follower,
# HAMT / VLN-DUET, a video-LLM VLN-CE agent).  One porter's judgement; see README.md.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TORCH_NPU_PIN = "torch-npu==2.1.0.post12"

# --------------------------------------------------------------------------------------------
# VLN-CE / habitat-baselines
# --------------------------------------------------------------------------------------------
E("vlnce_dagger", "vlnce_baselines/dagger_trainer.py", "explicit_replacement",
  "VLN-CE DAgger trainer (LMDB trajectory store, IWTrajectoryDataset, collate_fn)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guard around a cache release before spawning simulators; False on an NPU host, so the block is silently skipped (housekeeping only)."),
    C("with torch.cuda.device(self.device):", "torch_cuda_api", "replace", False,
      "with torch.npu.device(self.device):",
      "Goes with the guard above: once the guard is switched to NPU, torch.cuda.device(<npu device>) would raise."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Cache release; torch.cuda.empty_cache is a silent no-op without CUDA."),
    C('if self.device.type == "cuda":', "device_type", "replace", False,
      'if self.device.type == "npu":',
      "Device-type test is silently False on NPU; it only gates a cache release."),
    C("torch.cuda.empty_cache()  # drop cached blocks from the rollout", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop cached blocks from the rollout",
      "Cache release between DAgger rounds; no-op without CUDA, memory headroom only."),
])

E("vlnce_base_il", "vlnce_baselines/common/base_il_trainer.py", "device_branch_or_abstraction",
  "VLN-CE BaseVLNCETrainer (policy init, _update_agent, _eval_checkpoint)", [
    C('torch.device("cuda", self.config.TORCH_GPU_ID)', "device_type", "replace", True,
      'torch.device("npu", self.config.TORCH_GPU_ID)',
      "self.device feeds the policy, batch_obs and every rollout tensor; a cuda device cannot be used on an Ascend host."),
    C("if torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available()",
      "False on an NPU host, so the whole trainer silently falls back to CPU."),
    C('if self.device.type == "cuda":', "device_type", "replace", False,
      'if self.device.type == "npu":',
      "Only gates a peak-memory log line."),
    C("torch.cuda.max_memory_allocated(self.device) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated(self.device) / 1024 ** 3",
      "Logging only; must follow the branch above once it is taken on NPU."),
])

E("vlnce_instr_enc", "vlnce_baselines/models/encoders/instruction_encoder.py", "explicit_replacement",
  "VLN-CE InstructionEncoder (GRU/LSTM over GloVe embeddings with packed sequences)", [
    C("packed_seq = nn.utils.rnn.pack_padded_sequence(", "unsupported_op_workaround", "replace", False,
      "packed_seq = instruction.transpose(0, 1)  # padded, time-major; final state gathered by `lengths`",
      "pack_padded_sequence is marked ✘ in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list, but op-plugin does register _pack_padded_sequence; unconfirmed whether it errors or just runs slowly."),
    C("return nn.utils.rnn.pad_packed_sequence(output, batch_first=True)[", "unsupported_op_workaround", "replace", False,
      "return (output.transpose(0, 1),)[",
      "pad_packed_sequence has the same ✘ status as pack_padded_sequence; goes with the change above (unconfirmed)."),
])

E("vlnce_cfg_default", "vlnce_baselines/config/default.py", "explicit_replacement",
  "VLN-CE yacs experiment defaults (vlnce_baselines/config/default.py)", [
    C('_C.RL.DDPPO.distrib_backend = "NCCL"', "dist_backend", "replace", True,
      '_C.RL.DDPPO.distrib_backend = "HCCL"',
      "Handed to init_process_group by the DD-PPO trainers; NCCL does not exist on Ascend."),
])

E("vlnce_eval_sh", "scripts/eval_ckpts_multi_gpu.sh", "explicit_replacement",
  "VLN-CE style multi-GPU checkpoint evaluation launcher", [
    C("conda activate vlnce", "import_torch_npu", "npu_only_addition", True,
      SET_ENV,
      "CANN environment must be sourced before torch_npu can load."),
    C("NUM_GPUS=$(nvidia-smi", "device_type", "replace", True,
      "NUM_GPUS=$(npu-smi info -l | awk -F': ' '/Total Count/{print $2}')",
      "nvidia-smi is absent on an Ascend host: NUM_GPUS would be 0 and the modulo below divides by zero."),
    C("CUDA_VISIBLE_DEVICES=${gpu} python run.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} python run.py \\",
      "Ignored by the Ascend runtime: every worker would land on NPU 0 while TORCH_GPU_ID 0 assumes one device per worker."),
])

E("hab_ddp_utils", "habitat_baselines/rl/ddppo/ddp_utils.py", "explicit_replacement",
  "habitat-baselines DD-PPO ddp_utils (SLURM rendezvous, TCPStore, preemption/requeue)", [
    C('backend: str = "nccl",', "dist_backend", "replace", False,
      'backend: str = "hccl",',
      "Default only; the DD-PPO trainer always passes RL.DDPPO.distrib_backend explicitly."),
    C('if "NCCL_SOCKET_IFNAME" not in os.environ:', "env_var", "replace", False,
      'if "HCCL_SOCKET_IFNAME" not in os.environ:',
      "HCCL ignores NCCL_* variables; goes with the line below."),
    C('os.environ["NCCL_SOCKET_IFNAME"] = get_ifname()', "env_var", "replace", False,
      'os.environ["HCCL_SOCKET_IFNAME"] = get_ifname()',
      "HCCL_SOCKET_IFNAME picks the host NIC for the rendezvous; without it HCCL uses its own NIC order, usually fine on one node."),
])

E("hab_ddppo_trainer", "habitat_baselines/rl/ddppo/algo/ddppo_trainer.py", "device_branch_or_abstraction",
  "habitat-baselines DDPPOTrainer.train (decentralized distributed PPO)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host: DD-PPO would silently train on CPU."),
    C('self.device = torch.device("cuda", self.local_rank)', "device_type", "replace", True,
      'self.device = torch.device("npu", self.local_rank)',
      "Per-rank training device."),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.device)",
      "Raises without CUDA; HCCL also needs the current NPU set per rank."),
])

E("hab_common_utils", "habitat_baselines/utils/common.py", "device_branch_or_abstraction",
  "habitat-baselines utils/common.py (batch_obs, ObservationBatchingCache, CategoricalNet)", [
    C('and device.type == "cuda"', "pin_memory", "replace", False,
      'and device.type in ("cuda", "npu")',
      "Pinned staging buffer is only made for CUDA targets; on NPU the cache stays pageable (slower host-to-device copies, still correct)."),
])

E("hab_profiling", "habitat_sim/utils/profiling_utils.py", "explicit_replacement",
  "habitat-sim profiling_utils (NVTX ranges for Nsight, HABITAT_PROFILING)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Only with HABITAT_PROFILING_SYNC=1, but then it raises on a host without CUDA."),
    C("torch.cuda.nvtx.range_push(msg)", "torch_cuda_api", "replace", True,
      "_range_ids.append(torch.npu.mstx.range_start(msg))",
      "torch.cuda.nvtx is not redirected by torch_npu and raises 'NVTX functions not installed' without a CUDA build; Ascend's equivalent is mstx. Profiling path only."),
    C("torch.cuda.synchronize()  # close the range after the kernels finish", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # close the range after the kernels finish",
      "Same as the synchronize in range_push."),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch.npu.mstx.range_end(_range_ids.pop())",
      "mstx ranges are id based (range_start/range_end), not a push/pop stack."),
    C("torch.cuda.nvtx.mark(msg)", "torch_cuda_api", "replace", True,
      "torch.npu.mstx.mark(msg)",
      "Instant marker; NVTX unavailable without CUDA."),
])

E("hab_ddppo_yaml", "habitat_baselines/config/pointnav/ddppo_pointnav.yaml", "explicit_replacement",
  "habitat-baselines ddppo_pointnav.yaml experiment config", [
    C("GPU_GPU: True", "custom_cuda_extension", "replace", True,
      "GPU_GPU: False",
      "gpu2gpu needs habitat-sim built --with-cuda and returns CUDA tensors; not possible on an Ascend host."),
    C("distrib_backend: NCCL", "dist_backend", "replace", True,
      "distrib_backend: HCCL",
      "Passed to init_process_group."),
])

E("hab_slurm_sh", "habitat_baselines/rl/ddppo/multi_node_slurm.sh", "explicit_replacement",
  "habitat-baselines DD-PPO multi-node SLURM launcher", [
    C("#SBATCH --gres gpu:8", "device_type", "replace", False,
      "#SBATCH --gres npu:8",
      "Unconfirmed: depends on how the site's Slurm exposes Ascend devices (no Ascend gres integration found in the notes)."),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "No effect on HCCL (it talks over the NPUs' own RoCE ports)."),
    C("module load cuda/10.1", "import_torch_npu", "replace", True,
      SET_ENV,
      "Load the CANN environment instead of the CUDA module; torch_npu cannot load without it."),
    C("module load cudnn/v7.6.5.32-cuda.10.1", "custom_cuda_extension", "removal", False, None,
      "cuDNN module has no role on Ascend; a failing module load does not stop the script."),
    C("module load NCCL/2.5.6-1-cuda.10.1", "dist_backend", "removal", False, None,
      "HCCL ships with CANN."),
])

E("vlnce_dockerfile", "Dockerfile", "explicit_replacement",
  "VLN-CE development image (habitat-sim 0.1.7 built from source, conda PyTorch)", [
    C("FROM nvidia/cudagl:10.1-devel-ubuntu18.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; the container needs the CANN toolkit for torch_npu."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,graphics,utility", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime hint, ignored by the Ascend Docker runtime; devices can also be passed at docker run."),
    C("RUN conda create -n vlnce python=3.6 cmake=3.14.0 -y", "import_torch_npu", "replace", True,
      "RUN conda create -n vlnce python=3.8 cmake=3.14.0 -y",
      "torch 2.1 / torch_npu 2.1 wheels need Python 3.8-3.11."),
    C("conda install -y pytorch==1.6.0 torchvision==0.7.0 cudatoolkit=10.1 -c pytorch", "custom_cuda_extension", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0",
      "CUDA 10.1 build of torch 1.6; torch_npu needs exactly the matching CPU torch."),
    C("python setup.py install --headless --with-cuda", "custom_cuda_extension", "replace", True,
      "python setup.py install --headless",
      "--with-cuda builds habitat-sim's CUDA-GL interop with nvcc; no CUDA toolkit in the Ascend image."),
    C("RUN source activate vlnce && pip install -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN source activate vlnce && pip install " + TORCH_NPU_PIN,
      "torch-npu pin matching torch 2.1.0."),
])

# --------------------------------------------------------------------------------------------
# R2R: EnvDrop / Recurrent VLN-BERT / speaker-follower / MatterSim
# --------------------------------------------------------------------------------------------
E("envdrop_agent", "r2r_src/agent.py", "explicit_replacement",
  "R2R-EnvDrop / Recurrent VLN-BERT Seq2SeqAgent (A2C + IL rollout over MatterSim)", [
    C("args.dropout, bidirectional=args.bidir).cuda()", "tensor_to_device", "replace", True,
      "args.dropout, bidirectional=args.bidir).npu()",
      "Module.cuda() raises without CUDA."),
    C("self.decoder = model.AttnDecoderLSTM(", "tensor_to_device", "replace", True,
      "self.decoder = model.AttnDecoderLSTM(args.aemb, args.rnn_dim, args.dropout, feature_size=self.feature_size + args.angle_feat_size).npu()",
      "Module.cuda()."),
    C("self.critic = model.Critic().cuda()", "tensor_to_device", "replace", True,
      "self.critic = model.Critic().npu()", "Module.cuda()."),
    C("noise = self.decoder.drop_env(torch.ones(self.feature_size).cuda())", "tensor_to_device", "replace", True,
      "noise = self.decoder.drop_env(torch.ones(self.feature_size).npu())",
      "EnvDrop feature-dropout mask built on the GPU."),
    C("Variable(sorted_tensor, requires_grad=False).long().cuda()", "tensor_to_device", "replace", True,
      "return Variable(sorted_tensor, requires_grad=False).long().npu(), \\",
      "Instruction token ids."),
    C("mask.bool().cuda()", "tensor_to_device", "replace", True,
      "mask.bool().npu(),  \\", "Instruction padding mask."),
    C("return Variable(torch.from_numpy(features), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "return Variable(torch.from_numpy(features), requires_grad=False).npu()", "Panoramic image features."),
    C("return torch.from_numpy(candidate_feat).cuda(), candidate_leng", "tensor_to_device", "replace", True,
      "return torch.from_numpy(candidate_feat).npu(), candidate_leng", "Candidate features."),
    C("input_a_t = torch.from_numpy(input_a_t).cuda()", "tensor_to_device", "replace", True,
      "input_a_t = torch.from_numpy(input_a_t).npu()", "Heading/elevation features."),
    C("return torch.from_numpy(a).cuda()", "tensor_to_device", "replace", True,
      "return torch.from_numpy(a).npu()", "Teacher action targets."),
    C("mask_ = Variable(torch.from_numpy(masks[t]), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "mask_ = Variable(torch.from_numpy(masks[t]), requires_grad=False).npu()", "A2C step mask."),
    C("r_ = Variable(torch.from_numpy(clip_reward), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "r_ = Variable(torch.from_numpy(clip_reward), requires_grad=False).npu()", "A2C discounted reward."),
    C("states = torch.load(path)", "tensor_to_device", "replace", True,
      "states = torch.load(path, map_location=lambda storage, loc: storage.npu())",
      "Released snapshots hold CUDA tensors; torch.load without map_location cannot deserialize them on a host without CUDA."),
])

E("envdrop_model", "r2r_src/model.py", "explicit_replacement",
  "R2R-EnvDrop model.py (EncoderLSTM, SoftDotAttention, AttnDecoderLSTM, speaker)", [
    C("return h0.cuda(), c0.cuda()", "tensor_to_device", "replace", True,
      "return h0.npu(), c0.npu()", "Initial LSTM states are moved with .cuda()."),
    C("packed_embeds = pack_padded_sequence(embeds, lengths, batch_first=True)", "unsupported_op_workaround", "replace", False,
      "packed_embeds = embeds  # padded batch; take h_t/c_t at lengths-1 instead of packing",
      "✘ in Ascend's 2.7.1 API list and msFmkTransplt's unsupported list, yet op-plugin registers _pack_padded_sequence; unconfirmed whether it errors."),
    C("ctx, _ = pad_packed_sequence(enc_h, batch_first=True)", "unsupported_op_workaround", "replace", False,
      "ctx = enc_h",
      "Goes with the packing change above (same ✘ status, unconfirmed)."),
])

E("envdrop_utils", "r2r_src/utils.py", "explicit_replacement",
  "R2R-EnvDrop utils.py (Tokenizer, MatterSim helpers, angle features, nDTW)", [
    C("> (torch.LongTensor(length) - 1).unsqueeze(1)).cuda()", "tensor_to_device", "replace", True,
      "> (torch.LongTensor(length) - 1).unsqueeze(1)).npu()",
      "length2mask builds the candidate mask on the GPU; used for masked_fill_ of on-device logits."),
])

E("envdrop_param", "r2r_src/param.py", "device_branch_or_abstraction",
  "R2R-EnvDrop / Recurrent VLN-BERT param.py (argparse + optimizer choice)", [
    C("self.args.optimizer = torch.optim.RMSprop", "fused_optimizer", "replace", False,
      "self.args.optimizer = torch_npu.optim.NpuFusedRMSprop",
      "Performance only (msFmkTransplt advice); default --optim rms."),
    C("self.args.optimizer = torch.optim.AdamW", "fused_optimizer", "replace", False,
      "self.args.optimizer = torch_npu.optim.NpuFusedAdamW",
      "Performance only; the shipped run/agent.bash uses --optim adamW."),
    C("if args.cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.cuda and torch.npu.is_available():",
      "False on an NPU host: args.device silently becomes CPU."),
    C("args.device = torch.device('cuda:%d' % args.gpu)", "device_type", "replace", True,
      "args.device = torch.device('npu:%d' % args.gpu)", "Device string."),
])

E("vlnbert_train", "r2r_src/train.py", "explicit_replacement",
  "Recurrent VLN-BERT r2r_src/train.py (listener training / validation entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; needed for torch.npu on torch_npu < 2.5.1 (no autoload), which is what a torch-2.1 port uses."),
    C('writer.add_scalar("gpu_mem_gb", torch.cuda.max_memory_allocated() / 1e9, idx)', "torch_cuda_api", "replace", False,
      'writer.add_scalar("gpu_mem_gb", torch.npu.max_memory_allocated() / 1e9, idx)',
      "Logging only: silently reports 0 without CUDA."),
    C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(1)",
      "Silent no-op without CUDA; torch.manual_seed(1) on the line above already seeds the NPU generator."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "Raises without CUDA."),
])

E("vlnbert_model", "r2r_src/vlnbert/vlnbert_PREVALENT.py", "explicit_replacement",
  "Recurrent VLN-BERT vlnbert_PREVALENT.py (BERT backbone with cross-modal layers)", [])

E("envdrop_agent_sh", "run/agent.bash", "explicit_replacement",
  "Recurrent VLN-BERT / EnvDrop run/agent.bash launcher", [
    C("mkdir -p snap/$name", "import_torch_npu", "npu_only_addition", True,
      SET_ENV, "CANN environment for torch_npu."),
    C("=CUDA_VISIBLE_DEVICES=$1 python r2r_src/train.py $flag --name $name", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$1 python r2r_src/train.py $flag --name $name",
      "Device selection is ignored on Ascend; train.py then always uses NPU args.gpu=0 regardless of $1."),
])

E("sf_utils", "tasks/R2R/utils.py", "device_branch_or_abstraction",
  "speaker-follower tasks/R2R/utils.py (try_cuda helper, vocab, nav graphs)", [
    C("if torch.cuda.is_available() and not disabled:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not disabled:",
      "try_cuda silently returns CPU objects on an NPU host, so the whole follower/speaker runs on CPU."),
    C("return pytorch_obj.cuda()", "tensor_to_device", "replace", True,
      "return pytorch_obj.npu()", "The helper's device move."),
])

E("sf_follower", "tasks/R2R/follower.py", "explicit_replacement",
  "speaker-follower tasks/R2R/follower.py (Seq2SeqAgent rollout with panoramic actions)", [
    C("Variable(torch.from_numpy(action_embeddings), requires_grad=False).cuda(),", "tensor_to_device", "replace", True,
      "try_cuda(Variable(torch.from_numpy(action_embeddings), requires_grad=False)),",
      "Direct .cuda() that bypasses the try_cuda helper."),
    C("Variable(torch.from_numpy(is_valid), requires_grad=False).cuda(),", "tensor_to_device", "replace", True,
      "try_cuda(Variable(torch.from_numpy(is_valid), requires_grad=False)),",
      "Direct .cuda() that bypasses the try_cuda helper."),
    C("visual_keep = torch.cuda.FloatTensor(batch_size, 1)", "torch_cuda_api", "replace", True,
      "visual_keep = try_cuda(torch.FloatTensor(batch_size, 1)).fill_(0. if self.decoder.ablate_vision else 1.)",
      "torch.cuda.FloatTensor constructor fails without CUDA."),
])

E("mattersim_dockerfile", "Dockerfile", "explicit_replacement",
  "Matterport3DSimulator Dockerfile (cudagl base, cuDNN, pip torch for EnvDrop / VLN-BERT)", [
    C("FROM nvidia/cudagl:9.2-devel-ubuntu18.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA/GL base image; needs CANN (and a Python >= 3.8) for torch_npu."),
    C("ENV CUDNN_VERSION 7.6.4.38", "custom_cuda_extension", "removal", False, None,
      "Only used by the cuDNN packages below."),
    C("libcudnn7=$CUDNN_VERSION", "custom_cuda_extension", "removal", True, None,
      "cuDNN apt package does not exist outside NVIDIA's repo: the image build fails."),
    C("libcudnn7-dev=", "custom_cuda_extension", "removal", True, None,
      "Same as libcudnn7."),
    C("apt-mark hold libcudnn7 && \\", "custom_cuda_extension", "removal", False, None,
      "Removed together with the cuDNN packages."),
    C("RUN pip3 install opencv-python==4.1.0.25 torch==1.1.0", "import_torch_npu", "replace", True,
      "RUN pip3 install opencv-python==4.1.0.25 torch==2.1.0 " + TORCH_NPU_PIN + " torchvision==0.16.0 numpy==1.23.5 pandas==1.5.3 networkx==2.2",
      "torch 1.1 (CUDA wheel); torch_npu needs torch 2.1.0 plus the torch-npu pin."),
])

# --------------------------------------------------------------------------------------------
# HAMT / VLN-DUET
# --------------------------------------------------------------------------------------------
E("duet_distributed", "map_nav_src/utils/distributed.py", "explicit_replacement",
  "VLN-DUET / HAMT utils/distributed.py (UNITER-style rendezvous and pickled all_gather)", [
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()",
      "Returns 0 on an NPU host, so the global rank is silently computed wrong when RANK is not set."),
    C('"backend": "nccl",', "dist_backend", "replace", True,
      '"backend": "hccl",', "NCCL does not exist on Ascend."),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu").view(torch.int8)',
      "Device string. Ascend's list also gives all_gather dtypes as bf16/fp16/fp32/int8/int32/bool, hence the int8 view (uint8 unconfirmed)."),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device="npu")',
      "Device string; int64 is not in the all_gather dtype list, int32 is."),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
      'size_list = [torch.tensor([0], dtype=torch.int32, device="npu") for _ in range(world_size)]',
      "Device string; dtype as above."),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device="npu"))',
      "Device string; dtype as above."),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device="npu")',
      "Device string; dtype as above."),
])

E("duet_agent", "map_nav_src/r2r/agent.py", "explicit_replacement",
  "VLN-DUET map_nav_src/r2r/agent.py (GMapNavAgent, topological map inputs)", [
    C("self.vln_bert = VLNBert(self.args).cuda()", "tensor_to_device", "replace", True,
      "self.vln_bert = VLNBert(self.args).npu()", "Module.cuda()."),
    C("self.critic = Critic(self.args).cuda()", "tensor_to_device", "replace", True,
      "self.critic = Critic(self.args).npu()", "Module.cuda()."),
    C("seq_tensor = torch.from_numpy(seq_tensor).long().cuda()", "tensor_to_device", "replace", True,
      "seq_tensor = torch.from_numpy(seq_tensor).long().npu()", "Instruction token ids."),
    C("mask = torch.from_numpy(mask).cuda()", "tensor_to_device", "replace", True,
      "mask = torch.from_numpy(mask).npu()", "Instruction mask."),
    C("batch_view_img_fts = pad_tensors(batch_view_img_fts).cuda()", "tensor_to_device", "replace", True,
      "batch_view_img_fts = pad_tensors(batch_view_img_fts).npu()", "Panorama features."),
    C("batch_loc_fts = pad_tensors(batch_loc_fts).cuda()", "tensor_to_device", "replace", True,
      "batch_loc_fts = pad_tensors(batch_loc_fts).npu()", "Location features."),
    C("batch_nav_types = pad_sequence(batch_nav_types, batch_first=True, padding_value=0).cuda()", "tensor_to_device", "replace", True,
      "batch_nav_types = pad_sequence(batch_nav_types, batch_first=True, padding_value=0).npu()", "View types."),
    C("batch_view_lens = torch.LongTensor(batch_view_lens).cuda()", "tensor_to_device", "replace", True,
      "batch_view_lens = torch.LongTensor(batch_view_lens).npu()", "View lengths."),
    C("batch_gmap_masks = gen_seq_masks(batch_gmap_lens).cuda()", "tensor_to_device", "replace", True,
      "batch_gmap_masks = gen_seq_masks(batch_gmap_lens).npu()", "Graph node masks."),
    C("batch_gmap_step_ids = pad_sequence(batch_gmap_step_ids, batch_first=True).cuda()", "tensor_to_device", "replace", True,
      "batch_gmap_step_ids = pad_sequence(batch_gmap_step_ids, batch_first=True).npu()", "Graph step ids."),
    C("batch_gmap_pos_fts = pad_tensors(batch_gmap_pos_fts).cuda()", "tensor_to_device", "replace", True,
      "batch_gmap_pos_fts = pad_tensors(batch_gmap_pos_fts).npu()", "Graph position features."),
    C("batch_gmap_visited_masks = pad_sequence(batch_gmap_visited_masks, batch_first=True).cuda()", "tensor_to_device", "replace", True,
      "batch_gmap_visited_masks = pad_sequence(batch_gmap_visited_masks, batch_first=True).npu()", "Visited masks."),
    C("return torch.from_numpy(a).cuda()", "tensor_to_device", "replace", True,
      "return torch.from_numpy(a).npu()", "Teacher targets."),
])

E("duet_main_nav", "map_nav_src/r2r/main_nav.py", "explicit_replacement",
  "VLN-DUET map_nav_src/r2r/main_nav.py (fine-tuning / validation entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point; torch.npu / .npu() need torch_npu loaded (torch 2.1 port, no autoload)."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "Raises without CUDA; HCCL needs the per-rank device set."),
])

E("hamt_pretrain_main", "pretrain_src/main_r2r.py", "explicit_replacement",
  "HAMT / DUET pretrain_src/main_r2r.py (multi-task pretraining with torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point; also needed for torch_npu.npu.amp below."),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "CUDA autocast/GradScaler disable themselves without CUDA: --fp16 silently trains in fp32 with no loss scaling."),
    C("torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated(device) / 1024 ** 3",
      "Logging only; reports 0 without CUDA."),
])

E("hamt_loader", "pretrain_src/data/loader.py", "explicit_replacement",
  "HAMT / DUET pretrain data/loader.py (MetaLoader, CUDA-stream PrefetchLoader)", [
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream())", "CUDA stream API raises without CUDA."),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "Side stream for H2D prefetch."),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "Stream context."),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "Stream sync."),
    C("pin_memory=opts.pin_mem,", "pin_memory", "replace", False,
      'pin_memory=opts.pin_mem, pin_memory_device="npu",',
      "Without an NPU pin device the DataLoader drops pinning when CUDA is absent: slower copies only."),
])

E("hamt_env_yml", "environment.yml", "explicit_replacement",
  "VLN-DUET / HAMT conda environment.yml", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "NVIDIA conda channel; dead weight once the CUDA packages are gone."),
    C("cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime package, unused on Ascend."),
    C("pytorch=1.10.1=py3.8_cuda11.3_cudnn8.2.0_0", "custom_cuda_extension", "replace", True,
      "  - pytorch=2.1.0=py3.8_cpu_0",
      "CUDA build of torch 1.10; torch_npu needs exactly the matching CPU torch 2.1.0."),
    C("torchvision=0.11.2", "custom_cuda_extension", "replace", True,
      "  - torchvision=0.16.0",
      "Must match the new torch; the 0.11 build pins the CUDA torch 1.10."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - " + TORCH_NPU_PIN, "torch-npu pin."),
    C("nvidia-ml-py3==7.352.0", "custom_cuda_extension", "removal", False, None,
      "NVML bindings; no NVIDIA driver on Ascend (npu-smi / torch.npu.mem_get_info instead). Not imported by the files here."),
])

E("hamt_vit_feats", "preprocess/precompute_img_features_vit.py", "explicit_replacement",
  "HAMT preprocess/precompute_img_features_vit.py (MatterSim rendering + timm ViT features, one process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point (and re-imported by every spawned worker)."),
    C("device = torch.device('cuda:%d' % gpu_id if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:%d' % gpu_id if torch.npu.is_available() else 'cpu')",
      "Silently extracts on CPU otherwise."),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu_id)", "Raises without CUDA."),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "With --fp16 the CUDA autocast silently disables itself on NPU (no error, fp32 features)."),
    C("parser.add_argument('--num_gpus', type=int, default=torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "parser.add_argument('--num_gpus', type=int, default=torch.npu.device_count())",
      "0 on an NPU host -> proc_id % 0 raises ZeroDivisionError in every worker."),
])

E("duet_run_sh", "pretrain_src/run_r2r.sh", "explicit_replacement",
  "VLN-DUET / HAMT pretrain launcher (torch.distributed.launch, 4 GPUs)", [
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL-only logging knob; no HCCL effect."),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only; no HCCL effect."),
    C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", True,
      SET_ENV, "CANN environment for torch_npu."),
    C("CUDA_VISIBLE_DEVICES='0,1,2,3' python -m torch.distributed.launch", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES='0,1,2,3' python -m torch.distributed.launch \\",
      "Ignored on Ascend; the job would not be confined to devices 0-3."),
])

# --------------------------------------------------------------------------------------------
# Video-LLM VLN-CE agent
# --------------------------------------------------------------------------------------------
E("navid_eval", "navid/eval_navid_vlnce.py", "explicit_replacement",
  "NaVid-style video-LLM (LLaVA) agent evaluation on VLN-CE", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point."),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 0  # no CUDA compute capability on Ascend: always take the SDPA path",
      "Raises without CUDA; on NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set."),
    C('return "flash_attention_2"', "attention_kernel", "replace", True,
      'return "sdpa"',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU flash-attention kernel."),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      'self.device = torch.device("npu")', "Device string."),
    C('device_map="cuda",', "device_type", "replace", True,
      'device_map="npu",', "Model placement."),
    C("video = video.to(dtype=torch.bfloat16).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "video = video.to(dtype=torch.bfloat16).npu(non_blocking=True)", "Frame tensor."),
    C(").unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      ").unsqueeze(0).npu()", "Prompt token ids."),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "Weights and inputs are already bf16; a cuda autocast just disables itself with a warning."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "No-op without CUDA; allocator housekeeping only."),
    C('env["CUDA_VISIBLE_DEVICES"] = str(chunk_idx % args.num_gpus)', "env_var", "replace", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = str(chunk_idx % args.num_gpus)',
      "Ignored on Ascend: all shards would load the 7B model onto NPU 0."),
])

E("navid_reqs", "requirements.txt", "explicit_replacement",
  "NaVid / LLaVA-based VLN agent requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index: pip would still prefer +cu118 builds for torch==2.1.0 on x86; none exist for aarch64."),
    C("torch==2.1.2+cu118", "custom_cuda_extension", "replace", True,
      "torch==2.1.0", "torch_npu 2.1.0.postN requires exactly torch 2.1.0 (CPU build)."),
    C("torchvision==0.16.2+cu118", "custom_cuda_extension", "replace", True,
      "torchvision==0.16.0", "Matches torch 2.1.0; no CUDA local version."),
    C("transformers==4.37.2", "import_torch_npu", "npu_only_addition", True,
      TORCH_NPU_PIN, "torch-npu pin."),
    C("bitsandbytes==0.41.0", "custom_cuda_extension", "removal", False, None,
      "CUDA-only build of bitsandbytes; not used by the fp16/bf16 eval path."),
    C("flash-attn==2.5.8", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built or installed on an NPU host (nvcc); pip install -r fails."),
])
