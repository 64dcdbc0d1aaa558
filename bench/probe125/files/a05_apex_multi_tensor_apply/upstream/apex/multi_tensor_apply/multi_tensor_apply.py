import torch


class MultiTensorApply(object):
    """Thin launcher around the ``amp_C`` multi-tensor kernels.

    ``op`` is one of the ``amp_C.multi_tensor_*`` entry points (scale, axpby,
    l2norm, adam, lamb, sgd ...).  Each op walks ``tensor_lists`` in chunks of
    ``chunk_size`` elements so that a single launch can touch hundreds of
    parameters.  ``noop_flag_buffer`` is a one-element int tensor that the
    kernels set to 1 when they see an inf/nan; callers read it back to detect
    overflow without a host sync per tensor.
    """

    available = False
    warned = False

    def __init__(self, chunk_size):
        try:
            import amp_C
            MultiTensorApply.available = True
            self.chunk_size = chunk_size
        except ImportError as err:
            MultiTensorApply.available = False
            MultiTensorApply.import_err = err

    def check_avail(self):
        if MultiTensorApply.available == False:
            raise RuntimeError(
                "Attempted to call MultiTensorApply method, but MultiTensorApply "
                "is not available, possibly because Apex was installed without "
                "--cpp_ext --cuda_ext.  Original import error message:",
                MultiTensorApply.import_err)

    def __call__(self, op, noop_flag_buffer, tensor_lists, *args):
        self.check_avail()

        return op(self.chunk_size,
                  noop_flag_buffer,
                  tensor_lists,
                  *args)


# 2048*32 elements per chunk was tuned on V100; the kernels pick their own
# block count, so the same value is used on every GPU generation.
multi_tensor_applier = MultiTensorApply(2048 * 32)
