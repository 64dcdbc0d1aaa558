# Stand-in for torch_npu.contrib.transfer_to_npu (test double): on a CPU-only machine torch.cuda
# already reports no device, so there is nothing to redirect.
